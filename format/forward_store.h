// The forward store: for every document, the sorted ids of its distinct terms. Verification
// checks a candidate against it exactly (term ids come from the exact term dictionary, so there
// is no hashing and no false positive left after verification).
//
// Record format (see docs/index_format.md):
//   varint n                                   number of term ids
//   if n > 0: varint (id bytes * 2 + f)        id bytes: the length of the block data (where
//                                              the counts begin); f: 1 if a pair filter follows
//   if f: the pair filter (only in a record with positions that holds a pair term,
//     IsPairTerm): varint (m * 2 + l), m >= 1 bytes: bit PairBit(PairKey(a, b), 8 m) set for
//     every two pair terms a, b at consecutive phrase positions and no other; if l: varint u,
//     then u x u16: the LoneFingerprint of every pair term that stands at a phrase position but
//     has no positions in the record (it came from a segment where the term was rarer),
//     ascending
//   if n > kForwardBlock: (ceil(n/kForwardBlock) - 1) x {u32 first_id, u32 offset}
//                                              skip entries for blocks 1.., offsets relative
//                                              to the start of the block data
//   block data: per block, varint first id, then varint (gap - 1) for each following id
//   counts (for ranking): varint length (the document's words), then varint h and either
//     h even: for each of the h / 2 ids that occur more than once, varint (index gap),
//             varint (tf - 2) (index gap: its position in the id list minus the previous
//             one's, or its position for the first), or
//     h = 1:  if n > kForwardBlock, a block table: u8 w, then for each block of ids after the
//             first, where its codes start (in bits after the first code) in w bits, least
//             significant bit first, zero-padded to a byte; then an Elias-gamma code of every
//             id's tf, least significant bit first (for tf with z = floor(log2 tf): z zero
//             bits, a one bit, tf's z low bits), zero-padded to a byte; the encoder takes
//             whichever form is smaller, or
//     h = 3:  varint (bytes of the table and the codes), then both as for h = 1 (a record with
//             positions: they are found without decoding the codes)
//   positions (phrases; only if the record holds some, after h even or 3, up to the record's
//     end): one bit stream, least significant bit first, zero-padded to a byte:
//     gamma(count) the document's phrase positions, gamma(P) the ids that have positions;
//     for each block of 32 lists after the first, a skip entry: gamma(index gap + 1),
//     gamma(header gap + 1), gamma(body gap + 1) (from the previous entry's, or 0: the index
//     before its first list, where its first header and body start); gamma(H) the headers'
//     bits; P headers: gamma(index gap) (an id's index in the id list minus the previous one's,
//     or its index + 1), gamma(c) its positions; then P bodies, each the Elias-Fano code of its
//     c positions with k = floor(log2(count / c)) (0 below 2): the c low parts of k bits, then
//     the high parts as a bit vector of c + ((count - 1) >> k) + 1 bits (for each position, the
//     zeros since the previous one's high part and a one), so a body's size follows from c
#ifndef BITSIFT_FORMAT_FORWARD_STORE_H_
#define BITSIFT_FORMAT_FORWARD_STORE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::format {

inline constexpr uint32_t kForwardBlock = 128;

// What a record holds beside its ids, for ranking: how often each term occurs and how long the
// document is.
struct ForwardCounts {
  uint32_t length = 0;       // the document's words (tokenizer::TokenRole word or whole)
  std::vector<uint32_t> tf;  // tf[i]: occurrences of ids[i] (any role); empty: every one 1
  // The frequency of the i-th id.
  uint32_t TfAt(size_t i) const { return tf.empty() ? 1 : tf[i]; }
};

// The phrase positions a record holds: for some of its ids (the terms that were common in the
// segment when the document was indexed: IsPositionedTerm), where each stands in the
// document's sequence of phrase positions (tokenizer::IsPosition tokens, numbered from 0).
// A phrase of such terms is decided from them without the document's text.
struct ForwardPositions {
  uint32_t count = 0;           // the document's phrase positions
  std::vector<uint32_t> which;  // indexes into the record's ids, ascending
  std::vector<uint32_t> begin;  // list k is at[begin[k] .. begin[k + 1]) (which.size() + 1)
  std::vector<uint32_t> at;     // the positions, ascending within each list
  // For the encoder (not stored, not decoded): list k's term's HashTerm if it is a pair term of
  // the segment (IsPairTerm), else 0 (empty: none is). The record's pair filter is made of them
  // and of `unlisted`: the LoneFingerprints of the pair terms that stand at phrase positions
  // without a list here (stored and decoded).
  std::vector<uint64_t> pair_hash;
  std::vector<uint16_t> unlisted;
  // The positions, ascending, of the tokens that start a run of kana/ideographic characters
  // (tokenizer::TokenSink::OnRunStart): each other bigram of a run overlaps the token before
  // it, which a phrase of CJK characters needs (query::QueryNode::joined). Empty in a record
  // without such runs; stored only with lists.
  std::vector<uint32_t> run_starts;
  bool empty() const { return which.empty(); }
  void clear() {
    count = 0;
    which.clear();
    begin.clear();
    at.clear();
    pair_hash.clear();
    unlisted.clear();
    run_starts.clear();
  }
  // The positions of list k.
  const uint32_t* List(size_t k, size_t* n) const {
    *n = begin[k + 1] - begin[k];
    return at.data() + begin[k];
  }
};

// Whether a term in `df` of a segment's `docs` documents gets positions in the records of the
// documents that hold it. Frequent terms do: their phrases have the most candidates, whose
// texts would otherwise be read; a phrase with a rarer term has at most that many (a
// measurement in docs/design.md, "Phrases").
inline bool IsPositionedTerm(uint64_t df, uint64_t docs) { return df >= 32 && df * 256 >= docs; }

// By default, a segment whose documents hold less text than this (MetaRecord::input_bytes)
// keeps the positions of every term instead, so that none of its phrases reads a text: below
// 16 MiB its index stays well under FTS5's with them (docs/design.md, "Phrases").
inline constexpr uint64_t kEveryPositionBytes = uint64_t{16} << 20;

// Whether a positioned term is also a pair term: the pairs of pair terms at consecutive
// positions are in the record's pair filter, which refutes most candidates of a phrase of them
// without decoding a list (a phrase with a term below docs / 64 has fewer candidates; a
// measurement in docs/design.md, "Phrases"). Whether a term is one follows from its df and the
// document count of the segment that holds the record: a merge makes its records' filters anew.
inline bool IsPairTerm(uint64_t df, uint64_t docs) {
  return IsPositionedTerm(df, docs) && df * 64 >= docs;
}
// The pair filter's bits per distinct pair (one bit set per pair: 28% false positives).
inline constexpr uint64_t kPairFilterBits = 3;
// The key of term a (HashTerm a_hash) followed by term b (b_hash).
uint64_t PairKey(uint64_t a_hash, uint64_t b_hash);
// The fingerprint of a pair term (HashTerm hash) that stands at phrase positions of a record
// without a list there (a record from a segment where the term was rarer).
uint16_t LoneFingerprint(uint64_t hash);
// The bit of `key` in a filter of `bits` bits (a multiply-shift of its high half).
inline uint64_t PairBit(uint64_t key, uint64_t bits) { return ((key >> 32) * bits) >> 32; }
// The pair filter of `positions` (pair_hash and unlisted) as a record stores it, or nothing if
// it holds no pair term or has no positions.
std::string PairFilter(const ForwardPositions& positions);

// Sorts `ids` ascending, keeping counts->tf (if not empty) and positions->which (if positions
// is not null) aligned with them.
void SortRecord(std::vector<uint32_t>* ids, ForwardCounts* counts, ForwardPositions* positions);

// FORWARD_OFFSETS: where each record starts in FORWARD_DATA, for doc_count + 1 offsets (the
// last is FORWARD_DATA's size): u64 bases[ForwardOffsetBases(doc_count)] (base b: offset 64 b),
// then u32 rel[doc_count + 1] (offset i = bases[i / 64] + rel[i]; rel of every 64th is 0).
// 4.1 bytes a document instead of 8.
inline constexpr uint64_t kOffsetBlock = 64;
inline uint64_t ForwardOffsetBases(uint64_t doc_count) { return doc_count / kOffsetBlock + 1; }
inline uint64_t ForwardOffsetsBytes(uint64_t doc_count) {
  return ForwardOffsetBases(doc_count) * 8 + (doc_count + 1) * 4;
}
// The section for `offsets` (doc_count + 1 of them, ascending). Throws Error(kInvalidArgument)
// if 64 records take 4 GiB or more.
std::string EncodeForwardOffsets(const std::vector<uint64_t>& offsets);
// The offsets back from the section's bytes (`doc_count` documents); false if its size is wrong
// or an offset is not its block's (rel of a 64th not 0).
bool DecodeForwardOffsets(std::string_view section, uint64_t doc_count,
                          std::vector<uint64_t>* offsets);

// Appends the record of `sorted_ids` (strictly ascending) and `counts` (tf empty or aligned
// with sorted_ids, each >= 1) to out, with `positions` if not null nor empty (which[k] <
// sorted_ids.size(), each list not empty, ascending and below count).
// Returns the bytes the positions and the pair filter took.
uint64_t EncodeForwardRecord(const std::vector<uint32_t>& sorted_ids, const ForwardCounts& counts,
                             std::string& out, const ForwardPositions* positions = nullptr);

// What a strict decode checks beyond decoding: every id below term_count, each skip entry naming
// exactly its block's first id and offset, and no byte after the last id.
struct StrictForward {
  uint64_t term_count = 0;
  std::string* problem = nullptr;  // set to what is wrong when the decode fails
  // If not null: by term id, the HashTerm of each pair term of the segment (0 for others; ids
  // beyond its size are not pair terms). The pair filter must then be exactly PairFilter's.
  const std::vector<uint64_t>* pair_hash = nullptr;
};

// Decodes the record in [p, end) into *out (strictly ascending ids) and, if `counts` is not
// null, its counts (tf filled for every id), and if `positions` is not null, its positions
// (empty if it has none). Returns false if it is malformed: it cannot be decoded, or (with
// `strict`, for Index::Check) it breaks what the query path relies on (StrictForward; a
// list longer than its id's tf, positions beyond count, a pair filter that is not the one its
// positions make), then *strict->problem says what. With strict->pair_hash, the positions'
// pair_hash is filled too (encoding them again gives the same record).
bool DecodeForwardRecord(const uint8_t* p, const uint8_t* end, std::vector<uint32_t>* out,
                         const StrictForward* strict = nullptr, ForwardCounts* counts = nullptr,
                         ForwardPositions* positions = nullptr);

// The positions of the record in [p, end) (with its pair filter's `unlisted`), without decoding
// its ids: false if they are damaged. Empty if it has none.
bool ForwardRecordPositions(const uint8_t* p, const uint8_t* end, ForwardPositions* positions);

// Outcome of ContainsAll: a damaged record is reported, never read past `end`.
enum class ContainsResult { kNo, kYes, kCorrupt };

// Whether the record in [p, end) contains every id of `ids` (strictly ascending, n >= 1).
// Uses the skip entries, so it decodes at most about one block per query id.
ContainsResult ForwardRecordContainsAll(const uint8_t* p, const uint8_t* end, const uint32_t* ids,
                                        size_t n);

// The counts of the ids `want` (strictly ascending; none for the length alone) in the record in [p,
// end): tf[i] the frequency of want[i] (0 if the record does not hold it), *length the document's
// length. Reads the blocks that can hold them and the
// counts, not the whole record (and only as far as the last wanted id's count). Returns false if
// what it reads is damaged; never reads past `end`.
bool ForwardRecordCounts(const uint8_t* p, const uint8_t* end, const uint32_t* want, size_t n,
                         uint32_t* tf, uint32_t* length);

// Whether the document of the record in [p, end) may hold a phrase of pair terms whose
// consecutive terms make the PairKeys `pairs` and whose terms the LoneFingerprints `lone`:
// false if its pair filter lacks one of the pairs and none of the terms is among those it
// holds without positions (so each of them it holds has its positions, and two never stand
// together). True if it has no filter, or is damaged (the reader that decides reports it).
// Reads the record's first bytes only: [p, end) may be just those (a record's head read alone),
// and answers as the whole record once they hold its filter; a head that cuts the filter short
// refutes nothing. Thread-safe.
bool ForwardRecordMayHavePairs(const uint8_t* p, const uint8_t* end, const uint64_t* pairs,
                               size_t pairs_n, const uint16_t* lone, size_t lone_n);

// What ForwardRecordLists found.
enum class PhraseLists {
  kFound,         // every wanted id with its positions
  kAbsent,        // the record lacks one of the ids
  kUnpositioned,  // it holds them all, but not the positions of one
  kCorrupt,       // what it read is damaged
  kNoPair,        // its pair filter lacks a pair asked for: it holds no phrase of them
};

// The positions of the ids `want` (strictly ascending, n >= 1) in the record in [p, end): list
// i (of want[i]) is (*at)[(*begin)[i] .. (*begin)[i + 1]) when kFound; with `runs`, list n is
// the record's run starts (ForwardPositions::run_starts), and a record with lists but without
// run starts is kUnpositioned. Finds the ids through the skip entries and passes the counts
// and the other lists without decoding them; never reads past `end`. Thread-safe.
PhraseLists ForwardRecordLists(const uint8_t* p, const uint8_t* end, const uint32_t* want, size_t n,
                               std::vector<uint32_t>* at, std::vector<uint32_t>* begin,
                               bool runs = false);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_FORWARD_STORE_H_
