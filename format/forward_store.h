// The forward store: for every document, the sorted ids of its distinct terms. Verification
// checks a candidate against it exactly (term ids come from the exact term dictionary, so there
// is no hashing and no false positive left after verification).
//
// Record format (see docs/index_format.md):
//   varint n                                   number of term ids
//   if n > 0: varint id bytes                  the length of the block data (where the counts
//                                              begin)
//   if n > kForwardBlock: (ceil(n/kForwardBlock) - 1) x {u32 first_id, u32 offset}
//                                              skip entries for blocks 1.., offsets relative
//                                              to the start of the block data
//   block data: per block, varint first id, then varint (gap - 1) for each following id
//   counts (for ranking): varint length (the document's words), then varint h and either
//     h even: for each of the h / 2 ids that occur more than once, varint (index gap),
//             varint (tf - 2) (index gap: its position in the id list minus the previous
//             one's, or its position for the first), or
//     h = 1:  an Elias-gamma code of every id's tf, least significant bit first (for tf with
//             z = floor(log2 tf): z zero bits, a one bit, tf's z low bits), zero-padded to a
//             byte; the encoder takes whichever is smaller
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
// with sorted_ids, each >= 1) to out.
void EncodeForwardRecord(const std::vector<uint32_t>& sorted_ids, const ForwardCounts& counts,
                         std::string& out);

// What a strict decode checks beyond decoding: every id below term_count, each skip entry naming
// exactly its block's first id and offset, and no byte after the last id.
struct StrictForward {
  uint64_t term_count = 0;
  std::string* problem = nullptr;  // set to what is wrong when the decode fails
};

// Decodes the record in [p, end) into *out (strictly ascending ids) and, if `counts` is not
// null, its counts (tf filled for every id). Returns false if it is malformed: it cannot be
// decoded, or (with `strict`, for Index::Check) it breaks what the query path relies on
// (StrictForward), then *strict->problem says what.
bool DecodeForwardRecord(const uint8_t* p, const uint8_t* end, std::vector<uint32_t>* out,
                         const StrictForward* strict = nullptr, ForwardCounts* counts = nullptr);

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

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_FORWARD_STORE_H_
