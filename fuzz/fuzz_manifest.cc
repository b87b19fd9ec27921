// libFuzzer target: the MANIFEST parser (format/manifest.h). The first byte chooses whether the
// rest is taken as it is or resealed (its checksum recomputed, so that the fuzzer reaches the
// fields behind it). Any bytes parse or throw Error(kCorrupt), never crash; a manifest that
// parses re-encodes to bytes that parse to the same manifest and re-encode to the same bytes;
// its engine settings read as numbers or throw Error(kCorrupt).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "format/manifest.h"
#include "storage/verified_file.h"
#include "util/error.h"

namespace {

using bitsift::format::Manifest;

bool SameSet(const bitsift::format::DeletionSet& a, const bitsift::format::DeletionSet& b) {
  if (a.size() != b.size() || a.word_count() != b.word_count()) return false;
  return a.word_count() == 0 ||
         std::memcmp(a.bits(), b.bits(), a.word_count() * sizeof(uint64_t)) == 0;
}

bool Same(const Manifest& a, const Manifest& b) {
  if (a.generation != b.generation || a.next_segment != b.next_segment ||
      a.settings != b.settings || a.segments.size() != b.segments.size())
    return false;
  for (size_t i = 0; i < a.segments.size(); ++i) {
    const auto& x = a.segments[i];
    const auto& y = b.segments[i];
    if (x.number != y.number || x.doc_count != y.doc_count || x.file_size != y.file_size ||
        !SameSet(x.deleted, y.deleted))
      return false;
  }
  return true;
}

// Parses bytes; kCorrupt is the only error a parser may report.
bool Parse(std::string_view bytes, Manifest* m, std::shared_ptr<const void> owner = nullptr) {
  try {
    *m = bitsift::format::DecodeManifest(bytes, "MANIFEST", std::move(owner));
    return true;
  } catch (const bitsift::Error& e) {
    if (e.kind() != bitsift::ErrorKind::kCorrupt) std::abort();
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  auto bytes = std::make_shared<std::string>(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    // Resealed: the magic, then the fuzzer's bytes, then their checksum.
    bytes->insert(0, bitsift::format::kManifestMagic, sizeof(bitsift::format::kManifestMagic));
    const uint64_t sum = bitsift::storage::Checksum(bytes->data(), bytes->size());
    bytes->append(reinterpret_cast<const char*>(&sum), sizeof(sum));
  }
  Manifest m;
  // With an owner, dense deletions are read in place (when aligned): the same manifest.
  if (!Parse(*bytes, &m, bytes)) return 0;
  Manifest copied;
  if (!Parse(*bytes, &copied) || !Same(m, copied)) std::abort();

  const std::string encoded = bitsift::format::EncodeManifest(m);
  Manifest again;
  if (!Parse(encoded, &again) || !Same(m, again)) std::abort();
  if (bitsift::format::EncodeManifest(again) != encoded) std::abort();

  try {
    const auto settings = bitsift::format::EngineSettings::From(m.settings);
    std::map<std::string, std::string> written;
    settings.To(&written);
    if (bitsift::format::EngineSettings::From(written).root != settings.root) std::abort();
  } catch (const bitsift::Error& e) {
    if (e.kind() != bitsift::ErrorKind::kCorrupt) std::abort();
  }
  return 0;
}
