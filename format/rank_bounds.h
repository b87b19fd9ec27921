// Upper bounds for ranked queries (section RANK_BOUNDS): what a top-k query reads to skip
// documents without reading their forward records.
//
// BM25's part score rises with the term's frequency and falls with the document's length, so
// score(tf_max, length_floor) bounds it from above. The section keeps:
//   - every document's length as a floor code (one byte: LengthFloor(code) <= its length);
//   - for each common term (document frequency at least doc_count / kBoundedTermShare and at
//     least kBoundedTermMinDf), the largest frequency it has in each block of
//     kBoundBlockDocs documents (one byte a block: 0 absent, 255 for 255 or more).
//   - for each common term, its champions: the kChampions documents of highest BM25 term weight
//     T(tf, length) = tf (k1 + 1) / (tf + k1 (1 - b + b length / A0)) (kBm25K1, kBm25B) at an
//     average length A0 the section records (the segment's, or near it), ties to the lower
//     document, and the largest weight of every other document that holds it (its rest, 0 if
//     none). At another average A a weight is at most max(1, A / A0) times its weight at A0,
//     so the rest bounds every non-champion under any collection statistics.
// Rarer terms have no block maxima: their few holders are scored, or bounded by k1 + 1.
//
// Layout (little-endian):
//   u32 doc_count, u32 m (bounded terms)
//   u32 x m       the bounded terms' ids, ascending
//   u8 x doc_count  length floor codes
//   u8 x (m x blocks)  block maxima, term by term (blocks = ceil(doc_count / kBoundBlockDocs))
//   f64 A0
//   m x { u32 x kChampions  champion documents, ascending (UINT32_MAX: none), f64 rest }
#ifndef BITSIFT_FORMAT_RANK_BOUNDS_H_
#define BITSIFT_FORMAT_RANK_BOUNDS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bitsift::format {

inline constexpr uint64_t kBoundBlockDocs = 64;
inline constexpr uint64_t kBoundedTermShare = 32;
inline constexpr uint64_t kBoundedTermMinDf = 64;
// A block maximum of this value means "this many or more".
inline constexpr uint8_t kTfMaxOpen = 255;
// Champions per bounded term, and the BM25 parameters of their weights (query::Bm25's).
inline constexpr uint64_t kChampions = 64;
inline constexpr double kBm25K1 = 1.2;
inline constexpr double kBm25B = 0.75;
inline constexpr uint32_t kNoChampion = UINT32_MAX;

// A bounded term's weight T(tf, length) at average length a0 (the champions' order).
inline double ChampionWeight(uint32_t tf, uint32_t length, double a0) {
  const double f = tf;
  return f * (kBm25K1 + 1) / (f + kBm25K1 * (1 - kBm25B + kBm25B * length / a0));
}

// The largest length whose code is `code`: exact up to 31, then 16 steps per doubling
// (within 6.25% below the length).
uint32_t LengthFloor(uint8_t code);
// The largest code whose floor is at most `length`.
uint8_t LengthCode(uint32_t length);

// Whether a term of document frequency `df` in a segment of `doc_count` documents gets block
// maxima.
bool IsBoundedTerm(uint64_t df, uint64_t doc_count);

// The ids of the bounded terms of a segment whose term `id` has document frequency df[id].
std::vector<uint32_t> BoundedTerms(const std::vector<uint32_t>& df, uint64_t doc_count);

inline uint64_t BoundBlocks(uint64_t doc_count) {
  return (doc_count + kBoundBlockDocs - 1) / kBoundBlockDocs;
}

// Builds the section. Add may be called from several threads at once for documents of
// different blocks.
class RankBoundsWriter {
 public:
  // `bounded`: the ids of the bounded terms, ascending; `a0` (> 0): the average length the
  // champions are chosen at.
  RankBoundsWriter(uint64_t doc_count, std::vector<uint32_t> bounded, double a0);
  ~RankBoundsWriter();
  // Records document `doc`: its ids (ascending), their frequencies (tf empty: all 1) and its
  // length.
  void Add(uint64_t doc, const std::vector<uint32_t>& ids, const std::vector<uint32_t>& tf,
           uint32_t length);
  std::string Finish() const;

 private:
  uint64_t doc_count_;
  uint64_t blocks_;
  std::vector<uint32_t> bounded_;
  std::vector<uint8_t> lengths_;
  std::vector<uint8_t> maxima_;  // m x blocks
  double a0_;
  struct Champions;
  std::unique_ptr<Champions> champions_;  // the best kChampions + 1 of each bounded term
};

// A parsed RANK_BOUNDS section (a view: the bytes must outlive it).
class RankBoundsView {
 public:
  // Parses `bytes` (`size` long) for a segment of `doc_count` documents and `term_count` terms.
  // Returns "" on success, otherwise the problem.
  std::string Parse(const uint8_t* bytes, uint64_t size, uint64_t doc_count, uint64_t term_count);

  // The slot of term `id` among the bounded terms, or -1.
  int64_t Slot(uint32_t id) const;
  uint64_t bounded_count() const { return m_; }
  uint32_t bounded_term(uint64_t slot) const;
  uint8_t length_code(uint32_t doc) const { return lengths_[doc]; }
  // The block maximum of slot `slot` for the block of document `doc`.
  uint8_t tf_max(uint64_t slot, uint32_t doc) const {
    return maxima_[slot * blocks_ + doc / kBoundBlockDocs];
  }
  // The average length the champions were chosen at.
  double a0() const { return a0_; }
  // Champion i (< kChampions) of slot `slot`: a document, or kNoChampion.
  uint32_t champion(uint64_t slot, uint64_t i) const;
  // The largest weight at a0 of the documents holding slot's term that are not its champions.
  double rest(uint64_t slot) const;

 private:
  uint64_t m_ = 0;
  uint64_t blocks_ = 0;
  const uint8_t* ids_ = nullptr;
  const uint8_t* lengths_ = nullptr;
  const uint8_t* maxima_ = nullptr;
  const uint8_t* champions_ = nullptr;  // m x (kChampions x u32 + f64)
  double a0_ = 1;
};

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_RANK_BOUNDS_H_
