// The forward store: for every document, the sorted ids of its distinct terms. Verification
// checks a candidate against it exactly (term ids come from the exact term dictionary, so there
// is no hashing and no false positive left after verification).
//
// Record format (see docs/index_format.md):
//   varint n                                   number of term ids
//   if n > kForwardBlock: (ceil(n/kForwardBlock) - 1) x {u32 first_id, u32 offset}
//                                              skip entries for blocks 1.., offsets relative
//                                              to the start of the block data
//   block data: per block, varint first id, then varint (gap - 1) for each following id
#ifndef BITSIFT_FORMAT_FORWARD_STORE_H_
#define BITSIFT_FORMAT_FORWARD_STORE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bitsift::format {

inline constexpr uint32_t kForwardBlock = 128;

// Appends the record of `sorted_ids` (strictly ascending) to out.
void EncodeForwardRecord(const std::vector<uint32_t>& sorted_ids, std::string& out);

// Decodes the record in [p, end) into out. Returns false if the record is malformed.
bool DecodeForwardRecord(const uint8_t* p, const uint8_t* end, std::vector<uint32_t>* out);

// Outcome of ContainsAll: a damaged record is reported, never read past `end`.
enum class ContainsResult { kNo, kYes, kCorrupt };

// Whether the record in [p, end) contains every id of `ids` (strictly ascending, n >= 1).
// Uses the skip entries, so it decodes at most about one block per query id.
ContainsResult ForwardRecordContainsAll(const uint8_t* p, const uint8_t* end, const uint32_t* ids,
                                        size_t n);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_FORWARD_STORE_H_
