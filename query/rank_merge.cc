#include "query/rank_merge.h"

#include <algorithm>

#include "util/gallop.h"

namespace bitsift::query {
namespace {

// The first position in [from, end) of p whose rank is above `bound`, or end: a run of r hits
// costs about 2 log r rank reads (util::GallopPast).
size_t RunEnd(RankedPart p, size_t from, size_t end, const uint32_t* rank, uint32_t bound) {
  return util::GallopPast(from, end, [&](size_t i) { return rank[p.first + p.ids[i]] <= bound; });
}

}  // namespace

void MergeTwoByRank(RankedPart a, RankedPart b, const uint32_t* rank, uint64_t room,
                    std::vector<uint32_t>* out) {
  const size_t base = out->size();
  out->resize(base + static_cast<size_t>(std::min<uint64_t>(room, a.size + b.size)));
  uint32_t* dst = out->data() + base;
  uint32_t* const dst_end = out->data() + out->size();
  auto copy = [&](RankedPart p, size_t from, size_t to) {
    const size_t n = std::min<size_t>(to - from, static_cast<size_t>(dst_end - dst));
    for (size_t x = 0; x < n; ++x) dst[x] = p.first + p.ids[from + x];
    dst += n;
  };
  size_t i = 0, j = 0;
  unsigned streak = 0;
  bool last_a = false;
  while (i < a.size && j < b.size && dst < dst_end) {
    // No branch on the comparison: when the parts alternate at random it mispredicts.
    const uint32_t x = a.first + a.ids[i], y = b.first + b.ids[j];
    const bool take_a = rank[x] < rank[y];
    *dst++ = take_a ? x : y;
    i += take_a;
    j += !take_a;
    streak = take_a == last_a ? streak + 1 : 1;
    last_a = take_a;
    if (streak < kGallopAfter) continue;
    streak = 0;
    if (take_a && i < a.size) {
      const size_t e = RunEnd(a, i, a.size, rank, rank[b.first + b.ids[j]]);
      copy(a, i, e);
      i = e;
    } else if (!take_a && j < b.size) {
      const size_t e = RunEnd(b, j, b.size, rank, rank[a.first + a.ids[i]]);
      copy(b, j, e);
      j = e;
    }
  }
  copy(a, i, a.size);
  copy(b, j, b.size);
  out->resize(static_cast<size_t>(dst - out->data()));
}

void MergeByRankBitmap(const std::vector<RankedPart>& parts, const uint32_t* rank,
                       const uint32_t* ids_by_rank, uint32_t lo, uint32_t span, uint64_t room,
                       std::vector<uint32_t>* out) {
  std::vector<uint64_t> bits((uint64_t{span} + 63) / 64, 0);
  uint64_t hits = 0;
  for (const RankedPart& p : parts) {
    // A part's ranks ascend: its bits gather in a register, a word's worth at a time (one
    // read-modify-write of memory per hit made a chain through store forwarding).
    size_t word = 0;
    uint64_t acc = 0;
    for (size_t i = 0; i < p.size; ++i) {
      const uint32_t x = rank[p.first + p.ids[i]] - lo;
      if (x / 64 != word) {
        bits[word] |= acc;
        word = x / 64;
        acc = 0;
      }
      acc |= uint64_t{1} << (x % 64);
    }
    bits[word] |= acc;
    hits += p.size;
  }
  const size_t base = out->size();
  out->resize(base + static_cast<size_t>(std::min<uint64_t>(hits, room)));
  uint32_t* dst = out->data() + base;
  uint32_t* const end = out->data() + out->size();
  const uint32_t* id = ids_by_rank + lo;
  for (size_t w = 0; w < bits.size() && dst < end; ++w) {
    for (uint64_t v = bits[w]; v != 0 && dst < end; v &= v - 1) {
      *dst++ = id[w * 64 + static_cast<size_t>(__builtin_ctzll(v))];
    }
  }
}

void MergeByRank(const std::vector<RankedPart>& parts, const uint32_t* rank,
                 const uint32_t* ids_by_rank, uint64_t room, std::vector<uint32_t>* out) {
  uint32_t lo = UINT32_MAX, hi = 0;
  uint64_t hits = 0;
  std::vector<RankedPart> nonempty;
  for (const RankedPart& p : parts) {
    if (p.size == 0) continue;
    nonempty.push_back(p);
    lo = std::min(lo, rank[p.first + p.ids[0]]);
    hi = std::max(hi, rank[p.first + p.ids[p.size - 1]]);
    hits += p.size;
  }
  if (nonempty.empty() || room == 0) return;
  if (nonempty.size() == 1) {
    MergeTwoByRank(nonempty[0], RankedPart{nullptr, 0, 0}, rank, room, out);
    return;
  }
  if (uint64_t{hi - lo} + 1 <= kBitmapMergeSpanPerHit * hits) {
    MergeByRankBitmap(nonempty, rank, ids_by_rank, lo, hi - lo + 1, room, out);
    return;
  }
  // Two parts at a time, the smallest first: the base segment's many hits go through one merge,
  // the last.
  std::sort(nonempty.begin(), nonempty.end(),
            [](const RankedPart& a, const RankedPart& b) { return a.size < b.size; });
  std::vector<uint32_t> merged, next;  // global ids
  for (size_t k = 1; k < nonempty.size(); ++k) {
    const bool last = k + 1 == nonempty.size();
    std::vector<uint32_t>* into = last ? out : &next;
    next.clear();
    const RankedPart a = k == 1 ? nonempty[0] : RankedPart{merged.data(), merged.size(), 0};
    MergeTwoByRank(a, nonempty[k], rank, room, into);
    if (!last) merged.swap(next);
  }
}

SpineOrder::SpineOrder(const std::vector<uint32_t>& doc_counts) {
  for (size_t i = 1; i < doc_counts.size(); ++i) {
    if (doc_counts[i] > doc_counts[spine_]) spine_ = i;
  }
  packed_first_.assign(doc_counts.size(), 0);
  uint32_t packed = 0;
  for (size_t i = 0; i < doc_counts.size(); ++i) {
    packed_first_[i] = packed;
    if (i != spine_) packed += doc_counts[i];
  }
  spine_pos_.assign(packed, 0);
  rank_.assign(packed, 0);
  by_rank_.assign(packed, 0);
}

void SpineOrder::Next(size_t segment, uint32_t local, uint32_t spine_before) {
  const uint32_t p = packed_first_[segment] + local;
  spine_pos_[p] = spine_before;
  rank_[p] = next_rank_;
  by_rank_[next_rank_++] = p;
}

void SpineOrder::Merge(const std::vector<Hits>& parts, uint64_t room,
                       std::vector<uint32_t>* out) const {
  const Hits* spine = nullptr;
  std::vector<RankedPart> others;
  std::vector<const Hits*> other_hits;  // in packed order (as the segments)
  for (const Hits& h : parts) {
    if (h.size == 0) continue;
    if (h.segment == spine_) {
      spine = &h;
    } else {
      others.push_back(RankedPart{h.ids, h.size, packed_first_[h.segment]});
      other_hits.push_back(&h);
    }
  }
  std::sort(other_hits.begin(), other_hits.end(),
            [](const Hits* a, const Hits* b) { return a->segment < b->segment; });
  // The other segments' hits in path order, as packed indexes.
  std::vector<uint32_t> merged;
  MergeByRank(others, rank_.data(), by_rank_.data(), room, &merged);
  // A packed index's global id: its segment is the last one whose packed range starts at or
  // before it (the hits' segments are few).
  auto global = [&](uint32_t p) {
    size_t k = 0;
    while (k + 1 < other_hits.size() && packed_first_[other_hits[k + 1]->segment] <= p) ++k;
    return other_hits[k]->first_id + (p - packed_first_[other_hits[k]->segment]);
  };
  const size_t base = out->size();
  const uint64_t total = merged.size() + (spine == nullptr ? 0 : spine->size);
  out->resize(base + static_cast<size_t>(std::min<uint64_t>(room, total)));
  uint32_t* dst = out->data() + base;
  uint32_t* const end = out->data() + out->size();
  size_t s = 0;  // spine hits [0, s) are out
  auto copy_spine = [&](size_t to) {
    const size_t n = std::min<size_t>(to - s, static_cast<size_t>(end - dst));
    for (size_t x = 0; x < n; ++x) dst[x] = spine->first_id + spine->ids[s + x];
    dst += n;
    s += n;
  };
  for (uint32_t p : merged) {
    if (dst == end) break;
    if (spine != nullptr) {
      // The spine hits that sort before p: local ids below its position among the spine's
      // documents (a run of r costs ~2 log r reads).
      const uint32_t pos = spine_pos_[p];
      copy_spine(util::GallopPast(s, spine->size, [&](size_t i) { return spine->ids[i] < pos; }));
      if (dst == end) break;
    }
    *dst++ = global(p);
  }
  if (spine != nullptr) copy_spine(spine->size);
  out->resize(static_cast<size_t>(dst - out->data()));
}

}  // namespace bitsift::query
