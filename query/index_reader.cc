#include "query/index_reader.h"

#include <cstring>

#include "util/error.h"

namespace bitsift::query {

using format::SectionId;

namespace {
void Check(bool ok, const std::string& path, const std::string& what) {
  if (!ok) throw Error(ErrorKind::kCorrupt, path + ": not a usable bitsift index: " + what);
}
}  // namespace

IndexReader::IndexReader(const std::string& path) : file_(path) {
  // Checksums are verified by IndexFile; these checks make every later access in bounds even
  // for a file whose checksums were forged.
  std::string_view meta = file_.Section(SectionId::kMeta);
  Check(meta.size() >= sizeof(meta_), path, "meta section too short");
  std::memcpy(&meta_, meta.data(), sizeof(meta_));
  root_ = meta.substr(sizeof(meta_));
  Check(meta_.contract_version == format::kContractVersion, path,
        "built for token contract version " + std::to_string(meta_.contract_version));
  auto expect = [&](SectionId id, uint64_t count, uint64_t width, const char* what) {
    Check(count <= UINT64_MAX / width && file_.Section(id).size() == count * width, path,
          std::string("size of section ") + what);
  };
  const uint64_t docs = meta_.doc_count, terms = meta_.term_count;
  expect(SectionId::kBands, meta_.band_count, sizeof(format::BandRecord), "bands");
  expect(SectionId::kDocs, docs, sizeof(format::DocRecord), "docs");
  expect(SectionId::kTermOffsets, terms + 1, 8, "term offsets");
  expect(SectionId::kTermDf, terms, 4, "term df");
  expect(SectionId::kForwardOffsets, docs + 1, 8, "forward offsets");
  expect(SectionId::kTermTable, meta_.term_table_slots, 4, "term table");
  Check(meta_.term_table_slots == 0 || (meta_.term_table_slots & (meta_.term_table_slots - 1)) == 0,
        path, "term table size");
  bands_ = file_.SectionAs<format::BandRecord>(SectionId::kBands);
  band_docs_ = file_.SectionAs<uint32_t>(SectionId::kBandDocs);
  rows_ = file_.SectionAs<uint64_t>(SectionId::kRows);
  docs_ = file_.SectionAs<format::DocRecord>(SectionId::kDocs);
  paths_ = file_.Section(SectionId::kPaths).data();
  forward_offsets_ = file_.SectionAs<uint64_t>(SectionId::kForwardOffsets);
  forward_ = reinterpret_cast<const uint8_t*>(file_.Section(SectionId::kForwardData).data());

  Check(meta_.exact_terms <= terms, path, "exact term count");
  const uint64_t band_doc_entries = file_.Section(SectionId::kBandDocs).size() / 4;
  const uint64_t row_words = file_.Section(SectionId::kRows).size() / 8;
  uint64_t columns = 0;
  for (uint64_t b = 0; b < meta_.band_count; ++b) {
    const format::BandRecord& band = bands_[b];
    const uint64_t rows = band.width + meta_.exact_terms;  // no overflow: both checked small
    Check(band.width < (1ULL << 40) && band.rows_offset % 64 == 0 &&
              (band.width > 0) == (band.k > 0) && band.k <= 64 &&
              band.words_per_row * 64 >= band.doc_count && rows <= row_words &&
              band.words_per_row <= row_words / rows &&
              band.rows_offset / 8 <= row_words - rows * band.words_per_row &&
              band.first_column == columns,
          path, "band " + std::to_string(b) + " out of bounds");
    columns += band.doc_count;
  }
  Check(columns == band_doc_entries, path, "band columns");
  for (uint64_t i = 0; i < band_doc_entries; ++i)
    Check(band_docs_[i] < docs, path, "band document id");
  const uint64_t paths_size = file_.Section(SectionId::kPaths).size();
  for (uint64_t d = 0; d < docs; ++d) {
    Check(docs_[d].path_offset <= paths_size &&
              docs_[d].path_length <= paths_size - docs_[d].path_offset,
          path, "document path out of bounds");
  }
  const uint64_t forward_size = file_.Section(SectionId::kForwardData).size();
  for (uint64_t d = 0; d < docs; ++d) {
    Check(forward_offsets_[d] <= forward_offsets_[d + 1] && forward_offsets_[d + 1] <= forward_size,
          path, "forward store offsets");
  }
  dict_.offsets = file_.SectionAs<uint64_t>(SectionId::kTermOffsets);
  dict_.bytes = file_.Section(SectionId::kTermBytes).data();
  dict_.bytes_length = file_.Section(SectionId::kTermBytes).size();
  dict_.df = file_.SectionAs<uint32_t>(SectionId::kTermDf);
  dict_.table = file_.SectionAs<uint32_t>(SectionId::kTermTable);
  dict_.slots = meta_.term_table_slots;
  dict_.term_count = terms;
  for (uint64_t t = 0; t < terms; ++t) {
    Check(dict_.offsets[t] <= dict_.offsets[t + 1] && dict_.offsets[t + 1] <= dict_.bytes_length,
          path, "term offsets");
  }
}

bool IndexReader::Contains(uint32_t id, const uint32_t* ids, size_t n) const {
  auto r = format::ForwardRecordContainsAll(forward_ + forward_offsets_[id],
                                             forward_ + forward_offsets_[id + 1], ids, n);
  // The message is built only on failure: this runs once per candidate.
  if (r == format::ContainsResult::kCorrupt) {
    Check(false, file_.path(), "damaged forward record of document " + std::to_string(id));
  }
  return r == format::ContainsResult::kYes;
}

std::vector<uint32_t> IndexReader::DocumentTerms(uint32_t id) const {
  std::vector<uint32_t> out;
  Check(format::DecodeForwardRecord(forward_ + forward_offsets_[id],
                                     forward_ + forward_offsets_[id + 1], &out),
        file_.path(), "damaged forward record of document " + std::to_string(id));
  return out;
}

}  // namespace bitsift::query
