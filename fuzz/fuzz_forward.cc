// libFuzzer target: forward records (format/forward_store.h), the ids, counts and positions
// that verification, ranking and phrases read from every candidate. The first byte chooses:
//   even  the rest is a record as stored: every reader must refuse it or read it within its
//         bytes, and where the full strict decode accepts it, the partial readers
//         (ForwardRecordContainsAll, ForwardRecordCounts, ForwardRecordLists) agree with it;
//   odd   the rest describes a record (ids, frequencies, positions, pair terms): encoded, it
//         must decode to the same, its pair filter must hold every pair of pair terms that
//         stand together, and the partial readers must agree with it.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "format/forward_store.h"

using namespace bitsift::format;

namespace {

// Bytes consumed from the front of the input.
struct Input {
  const uint8_t* p;
  size_t n;
  uint32_t Next(uint32_t bound) {
    if (n == 0 || bound == 0) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 3 && n > 0; ++i, ++p, --n) v = (v << 8) | *p;
    return v % bound;
  }
};

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Checks the partial readers of the record [p, end) against its full decode (ids, counts,
// positions), for wanted id sets drawn from `in`.
void CheckReaders(const uint8_t* p, const uint8_t* end, const std::vector<uint32_t>& ids,
                  const ForwardCounts& counts, const ForwardPositions& positions, Input& in) {
  for (int q = 0; q < 4; ++q) {
    std::set<uint32_t> want;
    const uint32_t wanted = 1 + in.Next(3);
    for (uint32_t w = 0; w < wanted; ++w) {
      want.insert(!ids.empty() && in.Next(4) != 0 ? ids[in.Next(static_cast<uint32_t>(ids.size()))]
                                                  : in.Next(1u << 20));
    }
    const std::vector<uint32_t> wv(want.begin(), want.end());
    std::vector<uint32_t> index(wv.size(), UINT32_MAX);  // each wanted id's index, or none
    bool all = true;
    for (size_t i = 0; i < wv.size(); ++i) {
      for (uint32_t k = 0; k < ids.size(); ++k) {
        if (ids[k] == wv[i]) index[i] = k;
      }
      all &= index[i] != UINT32_MAX;
    }
    const ContainsResult c = ForwardRecordContainsAll(p, end, wv.data(), wv.size());
    if (c != (all ? ContainsResult::kYes : ContainsResult::kNo)) std::abort();
    std::vector<uint32_t> tf(wv.size());
    uint32_t length = 0;
    if (!ForwardRecordCounts(p, end, wv.data(), wv.size(), tf.data(), &length)) std::abort();
    if (length != counts.length) std::abort();
    for (size_t i = 0; i < wv.size(); ++i) {
      if (tf[i] != (index[i] == UINT32_MAX ? 0 : counts.TfAt(index[i]))) std::abort();
    }
    std::vector<uint32_t> at, begin;
    const PhraseLists found = ForwardRecordLists(p, end, wv.data(), wv.size(), &at, &begin);
    if (!all) {
      if (found != PhraseLists::kAbsent) std::abort();
      continue;
    }
    size_t listed = 0;
    for (size_t i = 0; i < wv.size(); ++i) {
      for (size_t k = 0; k < positions.which.size(); ++k) listed += positions.which[k] == index[i];
    }
    if (listed < wv.size()) {
      if (found != PhraseLists::kUnpositioned) std::abort();
      continue;
    }
    if (found != PhraseLists::kFound) std::abort();
    // With the run starts after the lists.
    std::vector<uint32_t> at_runs, begin_runs;
    const PhraseLists with_runs =
        ForwardRecordLists(p, end, wv.data(), wv.size(), &at_runs, &begin_runs, true);
    if (positions.run_starts.empty()
            ? with_runs != PhraseLists::kUnpositioned
            : with_runs != PhraseLists::kFound || begin_runs.size() != begin.size() + 1 ||
                  !std::equal(at.begin(), at.end(), at_runs.begin()) ||
                  !std::equal(positions.run_starts.begin(), positions.run_starts.end(),
                              at_runs.begin() + begin.back()))
      std::abort();
    for (size_t i = 0, got = 0; i < wv.size(); ++i) {
      for (size_t k = 0; k < positions.which.size(); ++k) {
        if (positions.which[k] != index[i]) continue;
        size_t n = 0;
        const uint32_t* list = positions.List(k, &n);
        if (begin[i + 1] - begin[i] != n) std::abort();
        for (size_t j = 0; j < n; ++j) {
          if (at[got++] != list[j]) std::abort();
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Input in{data + 1, size - 1};
  if ((data[0] & 1) == 0) {
    // A record as stored, in a buffer of exactly its size (ASan sees any over-read).
    const std::string record(reinterpret_cast<const char*>(data + 1), size - 1);
    std::vector<uint32_t> ids;
    ForwardCounts counts;
    ForwardPositions positions;
    std::string problem;
    const StrictForward strict{1u << 20, &problem};
    (void)DecodeForwardRecord(Bytes(record), Bytes(record) + record.size(), &ids);
    const uint64_t keys[2] = {size * 0x9e3779b97f4a7c15ULL, data[0] * 0xbf58476d1ce4e5b9ULL};
    const uint16_t lone = static_cast<uint16_t>(size);
    (void)ForwardRecordMayHavePairs(Bytes(record), Bytes(record) + record.size(), keys, 2, &lone,
                                    1);
    ForwardPositions alone;
    (void)ForwardRecordPositions(Bytes(record), Bytes(record) + record.size(), &alone);
    if (!DecodeForwardRecord(Bytes(record), Bytes(record) + record.size(), &ids, &strict, &counts,
                             &positions)) {
      uint32_t want = 1, tf = 0, length = 0;
      std::vector<uint32_t> at, begin;
      (void)ForwardRecordContainsAll(Bytes(record), Bytes(record) + record.size(), &want, 1);
      (void)ForwardRecordCounts(Bytes(record), Bytes(record) + record.size(), &want, 1, &tf,
                                &length);
      (void)ForwardRecordLists(Bytes(record), Bytes(record) + record.size(), &want, 1, &at, &begin);
      return 0;
    }
    Input choices{data, size};
    CheckReaders(Bytes(record), Bytes(record) + record.size(), ids, counts, positions, choices);
    return 0;
  }
  // A record described: up to 300 ids below 2^20, frequencies, and a token sequence over them
  // whose chosen ids keep positions.
  std::set<uint32_t> id_set;
  const uint32_t n = in.Next(300);
  while (id_set.size() < n && in.n > 0) id_set.insert(in.Next(1u << 20));
  std::vector<uint32_t> ids(id_set.begin(), id_set.end());
  ForwardCounts counts;
  counts.length = in.Next(1u << 20);
  std::vector<std::vector<uint32_t>> lists(ids.size());
  uint32_t count = 0;
  const uint32_t tokens = ids.empty() ? 0 : in.Next(4000);
  for (uint32_t t = 0; t < tokens && in.n > 0; ++t) {
    count += in.Next(4);  // positions of other terms between
    lists[in.Next(static_cast<uint32_t>(ids.size()))].push_back(count++);
  }
  // With frequencies, each id's is its positions and a few whole-word occurrences; without,
  // every id occurs once, so only lists of one position are kept.
  const bool with_tf = in.Next(2) == 1;
  ForwardPositions positions;
  positions.count = count;
  positions.begin.push_back(0);
  for (uint32_t k = 0; k < ids.size(); ++k) {
    const auto held = static_cast<uint32_t>(lists[k].size());
    if (with_tf) counts.tf.push_back(std::max<uint32_t>(1, held + in.Next(3)));
    if (held == 0 || (!with_tf && held != 1) || in.Next(4) == 0) continue;
    positions.which.push_back(k);
    positions.at.insert(positions.at.end(), lists[k].begin(), lists[k].end());
    positions.begin.push_back(static_cast<uint32_t>(positions.at.size()));
  }
  // Run starts: some of the positions, in some records.
  if (in.Next(2) == 1) {
    const uint32_t every = 1 + in.Next(8);
    for (uint32_t at = 0; at < count && in.n > 0; ++at) {
      if (in.Next(every) == 0) positions.run_starts.push_back(at);
    }
  }
  if (positions.which.empty()) positions.clear();
  // Pair terms: some of the ids, each with a hash of its own; those held without a list may be
  // named as standing at positions elsewhere (unlisted).
  static std::vector<uint64_t> hash_of(1u << 20, 0);
  for (uint32_t id : ids) hash_of[id] = 0;
  std::vector<uint16_t> unlisted;
  if (!positions.empty()) {
    positions.pair_hash.assign(positions.which.size(), 0);
    for (size_t k = 0, j = 0; k < ids.size(); ++k) {
      const bool listed = j < positions.which.size() && positions.which[j] == k;
      if (in.Next(3) != 0) hash_of[ids[k]] = (ids[k] + 1) * 0x9e3779b97f4a7c15ULL | 1;
      if (listed) positions.pair_hash[j++] = hash_of[ids[k]];
      if (!listed && hash_of[ids[k]] != 0 && in.Next(2) == 0)
        unlisted.push_back(LoneFingerprint(hash_of[ids[k]]));
    }
    std::sort(unlisted.begin(), unlisted.end());
    unlisted.erase(std::unique(unlisted.begin(), unlisted.end()), unlisted.end());
    positions.unlisted = unlisted;
  }
  std::string record;
  EncodeForwardRecord(ids, counts, record, &positions);
  if (!positions.empty()) {
    // Every pair of pair terms at consecutive positions is held.
    std::vector<uint64_t> at(positions.count, 0);
    for (size_t k = 0; k < positions.which.size(); ++k) {
      size_t m = 0;
      const uint32_t* list = positions.List(k, &m);
      for (size_t i = 0; i < m; ++i) at[list[i]] = positions.pair_hash[k];
    }
    for (size_t i = 0; i + 1 < at.size(); ++i) {
      if (at[i] == 0 || at[i + 1] == 0) continue;
      const uint64_t key = PairKey(at[i], at[i + 1]);
      if (!ForwardRecordMayHavePairs(Bytes(record), Bytes(record) + record.size(), &key, 1, nullptr,
                                     0))
        std::abort();
    }
    // The strict decode with the pair terms' hashes recomputes the same filter.
    std::vector<uint32_t> again_ids;
    ForwardCounts again_counts;
    ForwardPositions again;
    std::string why;
    const StrictForward with_pairs{1u << 20, &why, &hash_of};
    if (!DecodeForwardRecord(Bytes(record), Bytes(record) + record.size(), &again_ids, &with_pairs,
                             &again_counts, &again) ||
        again.unlisted != unlisted)
      std::abort();
  }
  std::vector<uint32_t> back;
  ForwardCounts back_counts;
  ForwardPositions back_positions;
  std::string problem;
  const StrictForward strict{1u << 20, &problem};
  if (!DecodeForwardRecord(Bytes(record), Bytes(record) + record.size(), &back, &strict,
                           &back_counts, &back_positions)) {
    std::abort();
  }
  if (back != ids || back_counts.length != counts.length) std::abort();
  for (size_t k = 0; k < ids.size(); ++k) {
    if (back_counts.TfAt(k) != counts.TfAt(k)) std::abort();
  }
  if (back_positions.count != positions.count || back_positions.which != positions.which ||
      back_positions.begin != positions.begin || back_positions.at != positions.at ||
      back_positions.run_starts != positions.run_starts) {
    std::abort();
  }
  CheckReaders(Bytes(record), Bytes(record) + record.size(), ids, counts, positions, in);
  return 0;
}
