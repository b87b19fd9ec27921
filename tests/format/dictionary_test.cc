#include "format/dictionary.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "format/bloom.h"
#include "test_util.h"
#include "util/error.h"

using namespace bitsift::format;
using bitsift::testing::TempDir;

namespace {

// A dictionary as the segment builder makes one: ids by decreasing df, ties by bytes.
struct Dict {
  std::vector<std::string> term_by_id;
  std::vector<uint32_t> df_by_id;
};

Dict MakeDict(const std::set<std::string>& terms, std::mt19937_64& rng) {
  std::vector<std::pair<uint32_t, std::string>> v;
  for (const std::string& t : terms) {
    const uint64_t r = rng() % 100;  // about two thirds df 1, a tail of frequent terms
    v.push_back({static_cast<uint32_t>(r < 65 ? 1 : r < 90 ? 2 + rng() % 5 : 7 + rng() % 5000), t});
  }
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  Dict d;
  for (auto& [df, t] : v) {
    d.df_by_id.push_back(df);
    d.term_by_id.push_back(t);
  }
  return d;
}

// Writes an index file whose only non-empty sections are the dictionary's. With
// saturated_filter, every bit of TERM_FILTER is set, so lookups of absent terms reach the
// blocks (the filter turns away ~99% of them otherwise).
void WriteDictFile(const std::string& path, const Dict& d, bool streamed = false,
                   bool saturated_filter = false) {
  const auto singles = std::lower_bound(d.df_by_id.begin(), d.df_by_id.end(), 1u, std::greater<>());
  DictionaryWriter w(static_cast<uint32_t>(singles - d.df_by_id.begin()), d.term_by_id.size());
  std::vector<uint32_t> by_bytes(d.term_by_id.size());
  for (uint32_t i = 0; i < by_bytes.size(); ++i) by_bytes[i] = i;
  std::sort(by_bytes.begin(), by_bytes.end(),
            [&](uint32_t a, uint32_t b) { return d.term_by_id[a] < d.term_by_id[b]; });
  for (uint32_t id : by_bytes) w.Add(d.term_by_id[id], id);
  const std::vector<DfRun> runs = EncodeDfRuns(d.df_by_id);
  MetaRecord m{};
  m.term_count = d.term_by_id.size();
  IndexFileWriter f(path);
  for (SectionId id : kSectionOrder) {
    if (id == SectionId::kChunkSums) break;
    std::string bytes;
    if (id == SectionId::kMeta) bytes.assign(reinterpret_cast<const char*>(&m), sizeof(m));
    if (id == SectionId::kDictBlocks) bytes = w.TakeBlocks();
    if (id == SectionId::kDictIndex)
      bytes.assign(reinterpret_cast<const char*>(w.index().data()),
                   w.index().size() * sizeof(DictBlockRecord));
    if (id == SectionId::kDictTop) {
      const std::vector<uint64_t> top = bitsift::format::DictTopKeys(w.index());
      bytes.assign(reinterpret_cast<const char*>(top.data()), top.size() * sizeof(uint64_t));
    }
    if (id == SectionId::kTermFilter) {
      bytes.assign(reinterpret_cast<const char*>(w.filter().data()), w.filter().size() * 4);
      if (saturated_filter) std::fill(bytes.begin(), bytes.end(), '\xff');
    }
    if (id == SectionId::kDfRuns)
      bytes.assign(reinterpret_cast<const char*>(runs.data()), runs.size() * sizeof(DfRun));
    if (!streamed) {
      f.AddSection(id, bytes.data(), bytes.size());
      continue;
    }
    // In pieces of varied sizes, across chunk boundaries.
    f.BeginSection(id);
    for (size_t at = 0, piece = 1; at < bytes.size(); at += piece, piece = piece * 3 + 1)
      f.Append(bytes.data() + at, std::min(piece, bytes.size() - at));
    f.EndSection();
  }
  f.Finish();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::set<std::string> RandomTerms(std::mt19937_64& rng, size_t n) {
  const std::vector<std::string> stems = {"a",
                                          "ab",
                                          "abc",
                                          "config",
                                          "configuration_",
                                          "zz",
                                          "\xc3\xa9t\xc3\xa9",
                                          "\xe4\xb8\xad\xe6\x96\x87",
                                          "longprefix_shared_by_many_"};
  std::set<std::string> out;
  while (out.size() < n) {
    std::string t = stems[rng() % stems.size()];
    const size_t extra = rng() % 12;
    for (size_t i = 0; i < extra; ++i) t += static_cast<char>('a' + rng() % 26);
    if (rng() % 10 == 0) t += std::to_string(rng() % 100000);
    out.insert(t);
  }
  return out;
}

}  // namespace

TEST_CASE("dictionary: every term found under its id, absent terms absent, df by id",
          "[dictionary]") {
  TempDir dir;
  std::mt19937_64 rng(5);
  for (size_t n : {0, 1, 15, 16, 17, 1000, 20000, 70000}) {  // 70000: 18 DICT_TOP keys
    INFO(n << " terms");
    const std::set<std::string> terms = RandomTerms(rng, n);
    const Dict d = MakeDict(terms, rng);
    const std::string path = dir / ("d" + std::to_string(n));
    WriteDictFile(path, d);
    IndexFile file(path);
    DictionaryView view(&file, n);
    for (uint32_t id = 0; id < n; ++id) {
      REQUIRE(view.Find(d.term_by_id[id]) == std::optional<uint32_t>(id));
      REQUIRE(view.Df(id) == d.df_by_id[id]);
    }
    // DfTotal sums Df over id ranges (runs whole, cut at either end, empty).
    std::vector<uint64_t> prefix(n + 1, 0);  // prefix[i] = sum of df over ids < i
    for (uint32_t id = 0; id < n; ++id) prefix[id + 1] = prefix[id] + d.df_by_id[id];
    for (int probe = 0; probe < 200 && n > 0; ++probe) {
      uint32_t begin = static_cast<uint32_t>(rng() % (n + 1)),
               end = static_cast<uint32_t>(rng() % (n + 1));
      if (begin > end) std::swap(begin, end);
      REQUIRE(view.DfTotal(begin, end) == prefix[end] - prefix[begin]);
    }
    CHECK(view.DfTotal(0, static_cast<uint32_t>(n)) == prefix[n]);
    // Absent: neighbours of present terms in byte order, and strings before and after all.
    for (const std::string& t : terms) {
      for (std::string probe : {t + "a", t.substr(0, t.size() - 1), t + '\0', "!" + t}) {
        if (terms.count(probe) == 0) REQUIRE_FALSE(view.Find(probe).has_value());
      }
    }
    CHECK_FALSE(view.Find("").has_value());
    CHECK_FALSE(view.Find("\xff\xff").has_value());
    CHECK_FALSE(view.Find(" ").has_value());
    // The same lookups with a filter that lets every term through: the blocks alone decide
    // (the front-coded comparison in FindInBlock, the DICT_INDEX bisection and its key ties).
    const std::string open_path = dir / ("open" + std::to_string(n));
    WriteDictFile(open_path, d, false, true);
    IndexFile open_file(open_path);
    DictionaryView open_view(&open_file, n);
    for (uint32_t id = 0; id < n; ++id) {
      REQUIRE(open_view.Find(d.term_by_id[id]) == std::optional<uint32_t>(id));
    }
    size_t absent_probes = 0;
    for (const std::string& t : terms) {
      for (std::string probe : {t + "a", t.substr(0, t.size() - 1), t + '\0', "!" + t, t + "\xff",
                                t.substr(0, t.size() / 2) + "~"}) {
        if (terms.count(probe) != 0) continue;
        REQUIRE(open_view.MayContain(probe));
        REQUIRE_FALSE(open_view.Find(probe).has_value());
        ++absent_probes;
      }
    }
    CHECK(absent_probes >= n);
    // FindEvery answers as Find does term by term: groups of present terms (ids as Find's),
    // and groups with an absent term (false), up to 40 terms (more than one lockstep group),
    // with both filters (the saturated one sends absent terms through the bisections).
    std::vector<std::string> pool(terms.begin(), terms.end());
    for (const std::string& t : terms) {
      if (pool.size() >= 2 * n + 64) break;
      for (std::string probe : {t + "a", t.substr(0, t.size() / 2) + "~", "!" + t}) {
        if (terms.count(probe) == 0) pool.push_back(probe);
      }
    }
    pool.push_back("");
    for (const DictionaryView* v : {&view, &open_view}) {
      size_t found_groups = 0;
      for (int trial = 0; trial < 300; ++trial) {
        const size_t k = 1 + rng() % (trial % 10 == 0 ? 40 : 6);
        std::vector<std::string_view> group;
        std::vector<uint64_t> hashes;
        // Half the trials: present terms only (when there are some).
        const bool present_only = trial % 2 == 0 && n > 0;
        for (size_t j = 0; j < k; ++j) {
          const std::string& t = present_only ? d.term_by_id[rng() % n] : pool[rng() % pool.size()];
          group.push_back(t);
          hashes.push_back(HashTerm(t));
        }
        std::vector<uint32_t> ids(k, UINT32_MAX);
        const bool all = v->FindEvery(group.data(), hashes.data(), k, ids.data());
        bool want_all = true;
        for (size_t j = 0; j < k; ++j) {
          const std::optional<uint32_t> id = v->Find(group[j]);
          if (!id) {
            want_all = false;
            continue;
          }
          if (all) REQUIRE(ids[j] == *id);
        }
        REQUIRE(all == want_all);
        found_groups += all;
      }
      if (n > 0) CHECK(found_groups >= 150);
    }
    CHECK_FALSE(open_view.Find("\xff\xff").has_value());
    CHECK_FALSE(open_view.Find(" ").has_value());
    // The cursor lists every term once, in byte order, with its id.
    std::vector<std::string> listed;
    for (DictionaryView::Cursor c(view); c.Next();) {
      REQUIRE(c.id() < n);
      REQUIRE(d.term_by_id[c.id()] == c.term());
      listed.emplace_back(c.term());
    }
    CHECK(listed == std::vector<std::string>(terms.begin(), terms.end()));
    // Prefixes give exactly the terms that start with them, in byte order.
    for (std::string prefix : {"", "a", "ab", "config", "configuration_", "longprefix_shared_by",
                               "longprefix_shared_by_many_q", "\xc3\xa9", "zz", "nothing"}) {
      std::vector<std::string> want, got;
      for (const std::string& t : terms)
        if (t.compare(0, prefix.size(), prefix) == 0) want.push_back(t);
      view.ForEachWithPrefix(prefix, [&](std::string_view t, uint32_t id) {
        REQUIRE(d.term_by_id[id] == t);
        got.emplace_back(t);
        return true;
      });
      CHECK(got == want);
    }
  }
}

TEST_CASE("dictionary: a section written in pieces is the same file", "[dictionary][writer]") {
  TempDir dir;
  std::mt19937_64 rng(9);
  const Dict d = MakeDict(RandomTerms(rng, 5000), rng);
  WriteDictFile(dir / "whole", d, false);
  WriteDictFile(dir / "pieces", d, true);
  CHECK(ReadAll(dir / "whole") == ReadAll(dir / "pieces"));
  IndexFile file(dir / "pieces");
  file.VerifyAll();  // every chunk checksum and section checksum matches
}

TEST_CASE("dictionary: the writer refuses terms out of order and df-1 ids out of order",
          "[dictionary][writer]") {
  DictionaryWriter w(2, 8);  // ids 2.. are df-1 terms
  w.Add("b", 0);
  CHECK_THROWS_AS(w.Add("a", 1), bitsift::Error);
  CHECK_THROWS_AS(w.Add("b", 1), bitsift::Error);
  w.Add("c", 2);
  CHECK_THROWS_AS(w.Add("d", 4), bitsift::Error);  // skips df-1 id 3
  w.Add("d", 3);
  CHECK(w.term_count() == 3);
  CHECK_THROWS_AS(EncodeDfRuns({1, 2}), bitsift::Error);
  const std::vector<DfRun> runs = EncodeDfRuns({9, 9, 4, 1, 1});
  REQUIRE(runs.size() == 3);
  CHECK((runs[1].first_id == 2 && runs[1].df == 4 && runs[2].first_id == 3 && runs[2].df == 1));
}

TEST_CASE("dictionary: the fingerprint changes with any term or id", "[dictionary]") {
  const std::vector<uint64_t> hashes = {HashTerm("alpha"), HashTerm("beta"), HashTerm("gamma")};
  const uint64_t base = TermFingerprint(hashes);
  std::vector<uint64_t> changed = hashes;
  changed[1] = HashTerm("betb");
  CHECK(TermFingerprint(changed) != base);
  std::vector<uint64_t> swapped = {hashes[1], hashes[0], hashes[2]};
  CHECK(TermFingerprint(swapped) != base);
  CHECK(TermFingerprint({}) == 0);
}
