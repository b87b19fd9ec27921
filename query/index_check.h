// A full consistency check of an open index (`bitsift check`).
//
// Opening an index verifies only its header, layout and small sections; every other chunk is
// verified when first read, and every record is bounds-checked when read. CheckIndex first
// verifies every checksum of every section and 4 KiB chunk and the zero padding
// (IndexFile::VerifyAll), then the bounds of every record (paths, forward and term offsets,
// band columns), then the invariants that answers depend on:
// every forward record decodes completely (ids ascending, < term_count, skip entries exact),
// the dictionary finds every term through its own hash and holds no stray table entry, document
// frequencies match the forward store, the bands hold every non-empty document exactly once in
// size order, each document's signature bits are set for all of its terms, and no bit past a
// band's document count is set. O(index size + postings x k).
#ifndef BITSIFT_QUERY_INDEX_CHECK_H_
#define BITSIFT_QUERY_INDEX_CHECK_H_

#include "format/segment_reader.h"

namespace bitsift::query {

// Throws Error(kCorrupt) naming the index path and the first problem found.
void CheckIndex(const format::SegmentReader& index);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_INDEX_CHECK_H_
