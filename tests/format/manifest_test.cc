#include "format/manifest.h"

#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "format/index_format.h"
#include "test_util.h"
#include "util/error.h"

using namespace bitsift;
using namespace bitsift::format;

namespace {

// The ids `set` holds, by ForEach (ascending) and by contains over every id below doc_count.
std::vector<uint32_t> Ids(const DeletionSet& set, uint64_t doc_count) {
  std::vector<uint32_t> each, probed;
  set.ForEach([&](uint32_t id) { each.push_back(id); });
  for (uint32_t id = 0; id < doc_count; ++id) {
    if (set.contains(id)) probed.push_back(id);
  }
  REQUIRE(each == probed);
  return each;
}

Manifest Sample(std::mt19937_64& rng) {
  Manifest m;
  m.generation = 7;
  m.next_segment = 40;
  m.settings["root"] = "/tmp/tree";
  m.settings["fp_rate"] = "0.01";
  for (const uint64_t docs : {1, 63, 64, 65, 1000, 70000}) {
    ManifestSegment s;
    s.number = m.segments.size() * 3 + 1;
    s.doc_count = docs;
    s.file_size = docs * 100;
    // None, one, a dense run, the last id, and scattered ids.
    const int kind = static_cast<int>(m.segments.size() % 3);
    if (kind == 1) s.deleted.insert(static_cast<uint32_t>(docs - 1), docs);
    if (kind == 2) {
      for (uint32_t id = 0; id < docs; ++id) {
        if (rng() % 4 == 0 || id < 70) s.deleted.insert(id, docs);
      }
    }
    m.segments.push_back(std::move(s));
  }
  return m;
}

}  // namespace

TEST_CASE("a deletion set counts each id once and lists them ascending", "[manifest]") {
  DeletionSet set;
  REQUIRE(set.empty());
  REQUIRE(set.bits() == nullptr);
  REQUIRE_FALSE(set.contains(0));
  REQUIRE_FALSE(set.contains(1u << 31));
  std::mt19937_64 rng(5);
  std::set<uint32_t> oracle;
  const uint64_t docs = 10007;
  for (int i = 0; i < 3000; ++i) {
    const auto id = static_cast<uint32_t>(rng() % docs);
    REQUIRE(set.insert(id, docs) == oracle.insert(id).second);
  }
  REQUIRE(set.size() == oracle.size());
  REQUIRE(set.word_count() == (docs + 63) / 64);
  REQUIRE(Ids(set, docs) == std::vector<uint32_t>(oracle.begin(), oracle.end()));
  // Copies are independent, whether the set holds its bitmap or views another's.
  DeletionSet copy = set;
  const uint32_t fresh = [&] {
    for (uint32_t id = 0;; ++id) {
      if (!oracle.count(id)) return id;
    }
  }();
  REQUIRE(copy.insert(fresh, docs));
  REQUIRE_FALSE(set.contains(fresh));
  auto owner = std::make_shared<std::vector<uint64_t>>(set.bits(), set.bits() + set.word_count());
  DeletionSet view = DeletionSet::View(owner->data(), docs, set.size(), owner);
  REQUIRE(view.is_view());
  REQUIRE(Ids(view, docs) == Ids(set, docs));
  DeletionSet changed = view;
  REQUIRE(changed.insert(fresh, docs));
  REQUIRE_FALSE(changed.is_view());
  REQUIRE_FALSE(view.contains(fresh));
  REQUIRE_FALSE((*owner)[fresh / 64] >> (fresh % 64) & 1);
  REQUIRE(changed.size() == set.size() + 1);
  // A moved-from set is empty, not a second view of the words it gave away.
  DeletionSet taken = std::move(changed);
  REQUIRE(taken.contains(fresh));
  REQUIRE(changed.empty());
  REQUIRE(changed.bits() == nullptr);
  REQUIRE_FALSE(changed.contains(fresh));
  DeletionSet viewed = std::move(view);
  REQUIRE(viewed.is_view());
  REQUIRE_FALSE(view.is_view());
  REQUIRE(view.size() == 0);
}

TEST_CASE("a manifest decodes to what was encoded, deletions included", "[manifest]") {
  std::mt19937_64 rng(11);
  const Manifest m = Sample(rng);
  const Manifest back = DecodeManifest(EncodeManifest(m), "MANIFEST");
  REQUIRE(back.generation == m.generation);
  REQUIRE(back.next_segment == m.next_segment);
  REQUIRE(back.settings == m.settings);
  REQUIRE(back.segments.size() == m.segments.size());
  uint64_t deleted = 0;
  for (size_t i = 0; i < m.segments.size(); ++i) {
    const ManifestSegment &a = m.segments[i], &b = back.segments[i];
    REQUIRE(b.number == a.number);
    REQUIRE(b.doc_count == a.doc_count);
    REQUIRE(b.file_size == a.file_size);
    REQUIRE(b.deleted.size() == a.deleted.size());
    REQUIRE(Ids(b.deleted, b.doc_count) == Ids(a.deleted, a.doc_count));
    deleted += a.deleted.size();
  }
  REQUIRE(deleted > 17000);  // the sample has a dense set to carry
  REQUIRE(back.live_documents() == m.live_documents());
  // Read from disk as well: dense sets are then read in place from the file's mapping, and
  // stay readable after the manifest is replaced (a reader keeps the state it opened).
  testing::TempDir dir;
  WriteManifest(dir.path(), m);
  Manifest read = ReadManifest(dir.path());
  REQUIRE(EncodeManifest(read) == EncodeManifest(m));
  size_t views = 0;
  for (const ManifestSegment& s : read.segments) {
    views += s.deleted.is_view();
    REQUIRE(s.deleted.is_view() == (s.deleted.size() * 64 >= s.doc_count && !s.deleted.empty()));
  }
  REQUIRE(views == 3);  // 1 of 63, 64 of 64 and the dense one of 70,000
  DeletionSet kept = std::move(read.segments.back().deleted);
  read = Manifest();
  WriteManifest(dir.path(), Manifest());
  REQUIRE(Ids(kept, 70000) == Ids(m.segments.back().deleted, 70000));
}

TEST_CASE("a manifest of version 1 (deletions as gaps only) is still read", "[manifest]") {
  // Version 1's bytes, written out by hand: no form or padding before the gaps.
  std::string v1(kManifestMagic, sizeof(kManifestMagic));
  auto u32 = [&](uint32_t v) { v1.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { v1.append(reinterpret_cast<const char*>(&v), 8); };
  u32(1);
  u32(0);
  u64(3);  // generation
  u64(9);  // next segment
  u32(0);  // settings
  u32(1);  // segments
  u64(4);
  u64(300);  // documents
  u64(1234);
  u64(3);  // deleted: 2, 3 and 299
  u64(4);
  v1 += std::string("\x02\x00\xa7\x02", 4);  // gaps 2, 0, 295 (LEB128)
  u64(Checksum(v1.data(), v1.size()));
  const Manifest m = DecodeManifest(v1, "MANIFEST");
  REQUIRE(m.generation == 3);
  REQUIRE(m.segments.size() == 1);
  REQUIRE(Ids(m.segments[0].deleted, 300) == std::vector<uint32_t>{2, 3, 299});
  REQUIRE(m.live_documents() == 297);
}

TEST_CASE("a manifest whose deletions do not fit its segment is refused", "[manifest]") {
  Manifest m;
  m.next_segment = 2;
  ManifestSegment s;
  s.number = 1;
  s.doc_count = 100;
  s.deleted.insert(99, 100);
  m.segments.push_back(std::move(s));
  const std::string good = EncodeManifest(m);
  REQUIRE_NOTHROW(DecodeManifest(good, "M"));
  // The deleted ids are the last byte before the checksum: 99 as a one-byte gap. Point it past
  // the segment and seal the bytes again with a correct checksum, so that only the range check
  // stands between them and a reader.
  auto resealed = [](std::string bytes, size_t at, char value) {
    bytes[at] = value;
    bytes.resize(bytes.size() - 8);
    const uint64_t sum = Checksum(bytes.data(), bytes.size());
    bytes.append(reinterpret_cast<const char*>(&sum), 8);
    return bytes;
  };
  const size_t gap = good.size() - 9;
  REQUIRE(static_cast<uint8_t>(good[gap]) == 99);
  REQUIRE_NOTHROW(DecodeManifest(resealed(good, gap, 0), "M"));
  try {
    DecodeManifest(resealed(good, gap, 100), "M");
    FAIL("an id past the segment was accepted");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kCorrupt);
    REQUIRE(std::string(e.what()).find("out of range") != std::string::npos);
  }
  // A flipped byte without a new checksum is caught by the checksum.
  std::string flipped = good;
  flipped[gap] = 98;
  REQUIRE_THROWS_AS(DecodeManifest(flipped, "M"), Error);
}

TEST_CASE("the engine's settings are read typed, and written as they were", "[manifest]") {
  std::map<std::string, std::string> settings = {{"root", "/data/tree"},
                                                 {"fp_rate", "0.01"},
                                                 {"sparse_max_df", "1024"},
                                                 {"max_file_size", "268435456"},
                                                 {"documents.hidden", "false"}};
  const EngineSettings e = EngineSettings::From(settings);
  CHECK(e.root == "/data/tree");
  CHECK(e.fp_rate == 0.01);
  CHECK(e.sparse_max_df == 1024u);
  CHECK(e.max_file_size == 268435456u);
  std::map<std::string, std::string> written = {{"documents.hidden", "false"}};
  e.To(&written);
  CHECK(written == settings);  // an update compares these strings: the same settings, no rebuild
  // Absent: unset, and a root of "" (documents given in memory).
  const EngineSettings none = EngineSettings::From({});
  CHECK(none.root.empty());
  CHECK(!none.fp_rate);
  CHECK(!none.max_file_size);
  // A value that is not a number of its kind is a damaged manifest, named.
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"fp_rate", "abc"},
                                                        {"sparse_max_df", "-1"},
                                                        {"sparse_max_df", "4294967296"},
                                                        {"max_file_size", "12x"},
                                                        {"max_file_size", ""}}) {
    INFO(key << "=" << value);
    try {
      (void)EngineSettings::From({{key, value}});
      FAIL("accepted");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::kCorrupt);
      CHECK(std::string(err.what()).find(key) != std::string::npos);
    }
  }
}
