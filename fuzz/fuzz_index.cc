// libFuzzer target: the index reader and the consistency check on arbitrary files. Built twice:
//   fuzz_index_raw       the input is the file as it is (checksums must refuse almost all);
//   fuzz_index_resealed  the padding is zeroed and every checksum recomputed first, so the
//                        mutations reach the structural checks, the check and the queries.
// Seed it with small valid indexes (scripts/fuzz does). Nothing may crash or read out of
// bounds; an index that passes the check must answer without error.
#include <bitsift/bitsift.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "format/index_format.h"
#include "reseal.h"

namespace {

#ifdef BITSIFT_FUZZ_RESEAL
// Zeroes the bytes between sections (when the table is plausible): mutations there would only
// ever be refused as non-zero padding.
void ZeroPadding(std::string& image) {
  using bitsift::format::FileHeader;
  using bitsift::format::SectionEntry;
  if (image.size() < sizeof(FileHeader)) return;
  FileHeader h;
  std::memcpy(&h, image.data(), sizeof(h));
  const uint64_t table_bytes = uint64_t{h.section_count} * sizeof(SectionEntry);
  if (h.section_count == 0 || h.section_count > 64 || h.section_table_offset > image.size() ||
      image.size() - h.section_table_offset < table_bytes) {
    return;
  }
  std::vector<SectionEntry> entries(h.section_count);
  std::memcpy(entries.data(), image.data() + h.section_table_offset, table_bytes);
  uint64_t cursor = sizeof(FileHeader);
  for (const SectionEntry& e : entries) {
    if (e.offset < cursor || e.offset > h.section_table_offset ||
        h.section_table_offset - e.offset < e.length) {
      return;
    }
    std::memset(image.data() + cursor, 0, e.offset - cursor);
    cursor = e.offset + e.length;
  }
  std::memset(image.data() + cursor, 0, h.section_table_offset - cursor);
}
#endif

// Words, and phrases of the seeds' frequent words, decided from the records' positions (the
// seeds' texts are gone: a phrase the positions cannot decide is undecided, not an error).
const std::vector<std::vector<std::string>> kQueries = {
    {"bloom"},
    {"filter", "exact"},
    {"過濾"},
    {"東京"},
    {"common", "words"},
    {"zzz"},
    {"\"common words\""},
    {"\"words common\""},
    {"\"words bloom common\"", "-\"bloom filter\""}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string image(reinterpret_cast<const char*>(data), size);
#ifdef BITSIFT_FUZZ_RESEAL
  ZeroPadding(image);
  bitsift::testing::ResealIndex(image);
#endif
  static const std::string path = (::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                                  std::string("/bitsift-fuzz-index-") + std::to_string(::getpid());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) std::abort();
  for (size_t done = 0; done < image.size();) {
    ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  std::unique_ptr<bitsift::Index> index;
  bitsift::Status s = bitsift::Index::Open(path, &index);
  ::unlink(path.c_str());
  if (!s.ok()) return 0;
  const bool sound = index->Check().ok();
  (void)index->Stats();
  for (const auto& q : kQueries) {
    bitsift::QueryResult r;
    bitsift::Status qs = index->Query(q, {}, &r);
    if (sound && !qs.ok()) std::abort();
    for (uint32_t id : r.documents) {
      if (id >= index->document_count()) std::abort();
      (void)index->document(id);
    }
  }
  for (uint64_t id = 0; id < index->document_count() && id < 1000; ++id) {
    (void)index->document(static_cast<uint32_t>(id));
  }
  return 0;
}
