#include "format/rank_bounds.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>

namespace bitsift::format {
namespace {

std::array<uint32_t, 256> MakeFloors() {
  std::array<uint32_t, 256> f{};
  for (uint32_t c = 0; c < 256; ++c) {
    if (c < 32) {
      f[c] = c;
    } else {
      const uint32_t e = (c - 32) / 16, m = (c - 32) % 16;
      f[c] = (16 + m) << (e + 1);
    }
  }
  return f;
}

const std::array<uint32_t, 256>& Floors() {
  static const std::array<uint32_t, 256> floors = MakeFloors();
  return floors;
}

uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void PutU32(uint32_t v, std::string& out) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

void PutF64(double v, std::string& out) {
  char b[8];
  std::memcpy(b, &v, 8);
  out.append(b, 8);
}

}  // namespace

uint32_t LengthFloor(uint8_t code) { return Floors()[code]; }

uint8_t LengthCode(uint32_t length) {
  const auto& f = Floors();
  return static_cast<uint8_t>(std::upper_bound(f.begin(), f.end(), length) - f.begin() - 1);
}

bool IsBoundedTerm(uint64_t df, uint64_t doc_count) {
  return df >= kBoundedTermMinDf && df * kBoundedTermShare >= doc_count;
}

std::vector<uint32_t> BoundedTerms(const std::vector<uint32_t>& df, uint64_t doc_count) {
  std::vector<uint32_t> out;
  for (uint32_t id = 0; id < df.size(); ++id) {
    if (IsBoundedTerm(df[id], doc_count)) out.push_back(id);
  }
  return out;
}

// Each bounded term's best kChampions + 1 documents so far by (weight desc, document asc), a
// heap with the worst on top, under one of kStripes locks; `floor` is the worst's weight once
// the heap is full, read without the lock to pass most documents by.
struct RankBoundsWriter::Champions {
  struct Entry {
    double weight;
    uint32_t doc;
  };
  static bool Better(const Entry& a, const Entry& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.doc < b.doc;
  }
  static constexpr size_t kStripes = 64;
  explicit Champions(size_t m) : heaps(m), floor(m) {
    for (auto& f : floor) f.store(-1, std::memory_order_relaxed);
  }
  void Offer(size_t s, double weight, uint32_t doc) {
    if (weight < floor[s].load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(stripes[s % kStripes]);
    std::vector<Entry>& h = heaps[s];
    const Entry e{weight, doc};
    if (h.size() < kChampions + 1) {
      h.push_back(e);
      std::push_heap(h.begin(), h.end(), Better);
    } else if (Better(e, h.front())) {
      std::pop_heap(h.begin(), h.end(), Better);
      h.back() = e;
      std::push_heap(h.begin(), h.end(), Better);
    }
    if (h.size() == kChampions + 1) floor[s].store(h.front().weight, std::memory_order_relaxed);
  }
  std::vector<std::vector<Entry>> heaps;
  std::vector<std::atomic<double>> floor;
  std::mutex stripes[kStripes];
};

RankBoundsWriter::RankBoundsWriter(uint64_t doc_count, std::vector<uint32_t> bounded, double a0)
    : doc_count_(doc_count),
      blocks_(BoundBlocks(doc_count)),
      bounded_(std::move(bounded)),
      lengths_(doc_count, 0),
      maxima_(bounded_.size() * blocks_, 0),
      a0_(a0 > 0 ? a0 : 1),
      champions_(std::make_unique<Champions>(bounded_.size())) {}

RankBoundsWriter::~RankBoundsWriter() = default;

void RankBoundsWriter::Add(uint64_t doc, const std::vector<uint32_t>& ids,
                           const std::vector<uint32_t>& tf, uint32_t length) {
  lengths_[doc] = LengthCode(length);
  const uint64_t block = doc / kBoundBlockDocs;
  // Both lists ascend: a merge, galloping over the document's ids is not needed (bounded terms
  // are few).
  size_t i = 0;
  for (size_t s = 0; s < bounded_.size() && i < ids.size(); ++s) {
    const uint32_t want = bounded_[s];
    i = static_cast<size_t>(
        std::lower_bound(ids.begin() + static_cast<std::ptrdiff_t>(i), ids.end(), want) -
        ids.begin());
    if (i == ids.size() || ids[i] != want) continue;
    const uint32_t exact = tf.empty() ? 1 : tf[i];
    const uint32_t f = std::min<uint32_t>(exact, kTfMaxOpen);
    uint8_t& m = maxima_[s * blocks_ + block];
    m = std::max<uint8_t>(m, static_cast<uint8_t>(f));
    champions_->Offer(s, ChampionWeight(exact, length, a0_), static_cast<uint32_t>(doc));
  }
}

std::string RankBoundsWriter::Finish() const {
  std::string out;
  PutU32(static_cast<uint32_t>(doc_count_), out);
  PutU32(static_cast<uint32_t>(bounded_.size()), out);
  for (uint32_t id : bounded_) PutU32(id, out);
  out.append(reinterpret_cast<const char*>(lengths_.data()), lengths_.size());
  out.append(reinterpret_cast<const char*>(maxima_.data()), maxima_.size());
  PutF64(a0_, out);
  for (size_t s = 0; s < bounded_.size(); ++s) {
    std::vector<Champions::Entry> h = champions_->heaps[s];
    std::sort(h.begin(), h.end(), Champions::Better);
    const double rest = h.size() > kChampions ? h[kChampions].weight : 0;
    if (h.size() > kChampions) h.pop_back();
    std::vector<uint32_t> docs;
    for (const Champions::Entry& e : h) docs.push_back(e.doc);
    std::sort(docs.begin(), docs.end());
    docs.resize(kChampions, kNoChampion);
    for (uint32_t d : docs) PutU32(d, out);
    PutF64(rest, out);
  }
  return out;
}

std::string RankBoundsView::Parse(const uint8_t* bytes, uint64_t size, uint64_t doc_count,
                                  uint64_t term_count) {
  if (size < 8) return "cut short";
  if (GetU32(bytes) != doc_count) return "document count";
  m_ = GetU32(bytes + 4);
  if (m_ > term_count) return "bounded term count";
  blocks_ = BoundBlocks(doc_count);
  constexpr uint64_t kPerTerm = kChampions * 4 + 8;
  if (m_ > size || size != 8 + 4 * m_ + doc_count + m_ * blocks_ + 8 + m_ * kPerTerm) return "size";
  ids_ = bytes + 8;
  for (uint64_t s = 0; s < m_; ++s) {
    const uint32_t id = GetU32(ids_ + 4 * s);
    if (id >= term_count || (s > 0 && id <= GetU32(ids_ + 4 * (s - 1)))) return "bounded term ids";
  }
  lengths_ = ids_ + 4 * m_;
  maxima_ = lengths_ + doc_count;
  std::memcpy(&a0_, maxima_ + m_ * blocks_, 8);
  if (!(a0_ > 0 && a0_ < 1e18)) return "average length";
  champions_ = maxima_ + m_ * blocks_ + 8;
  for (uint64_t s = 0; s < m_; ++s) {
    const uint8_t* c = champions_ + s * kPerTerm;
    for (uint64_t i = 0; i < kChampions; ++i) {
      const uint32_t d = GetU32(c + 4 * i);
      if (d == kNoChampion) continue;
      if (d >= doc_count || (i > 0 && d <= GetU32(c + 4 * (i - 1)))) return "champions";
    }
    const double r = rest(s);
    if (!(r >= 0 && r <= kBm25K1 + 1)) return "champions' rest";
  }
  return "";
}

uint32_t RankBoundsView::champion(uint64_t slot, uint64_t i) const {
  return GetU32(champions_ + slot * (kChampions * 4 + 8) + 4 * i);
}

double RankBoundsView::rest(uint64_t slot) const {
  double r;
  std::memcpy(&r, champions_ + slot * (kChampions * 4 + 8) + kChampions * 4, 8);
  return r;
}

uint32_t RankBoundsView::bounded_term(uint64_t slot) const { return GetU32(ids_ + 4 * slot); }

int64_t RankBoundsView::Slot(uint32_t id) const {
  uint64_t lo = 0, hi = m_;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const uint32_t v = GetU32(ids_ + 4 * mid);
    if (v == id) return static_cast<int64_t>(mid);
    if (v < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

}  // namespace bitsift::format
