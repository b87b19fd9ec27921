// libFuzzer target: forward records (format/forward_store.h), the ids, counts and positions
// that verification, ranking and phrases read from every candidate. The first byte chooses:
//   even  the rest is a record as stored: every reader must refuse it or read it within its
//         bytes, and where the full strict decode accepts it, the partial readers
//         (ForwardRecordContainsAll, ForwardRecordCounts, ForwardRecordLists) agree with it;
//   odd   the rest describes a record (ids, frequencies, positions): encoded, it must decode
//         to the same, and the partial readers must agree with it.
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
  if (positions.which.empty()) positions.clear();
  std::string record;
  EncodeForwardRecord(ids, counts, record, &positions);
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
      back_positions.begin != positions.begin || back_positions.at != positions.at) {
    std::abort();
  }
  CheckReaders(Bytes(record), Bytes(record) + record.size(), ids, counts, positions, in);
  return 0;
}
