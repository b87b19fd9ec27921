// Merging segments: the live documents of several segments become one new segment file,
// streamed from the inputs' dictionaries and forward records instead of rebuilt in memory.
//
// DESIGN NOTE (docs/living-index.md, "Merging"): rebuilding merged documents through the
// SegmentBuilder held every posting and every term string at once (1.1 GB to compact
// linux-files). Here no posting list is held: the dictionaries are merged twice in byte order
// (cursors, as an external merge sort would), first to count the terms of each document
// frequency, then to give every term its final id (by decreasing df, ties by bytes, as the
// builder does) and write the new dictionary; every live document's forward record is then
// mapped to the new ids once and written to a scratch file beside the output (the new
// FORWARD_DATA, about the size of the inputs' forward store), and the rows (band by band) and
// the sparse rows are built from those records. Memory: the largest of the phases'
// (EstimateMergeBytes), about 9-13 bytes per input term and 48 bytes per document; not the
// records, nor the hashes of the terms that set no Bloom bit (held in memory they would be
// most of a merge's memory: 97 and 46 MB of linux-paras' 1.2M paragraphs and 5.7M terms).
#ifndef BITSIFT_INDEXER_SEGMENT_MERGER_H_
#define BITSIFT_INDEXER_SEGMENT_MERGER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/forward_store.h"
#include "format/manifest.h"
#include "format/segment_reader.h"
#include "indexer/segment_builder.h"

namespace bitsift::indexer {

struct MergeSource {
  const format::SegmentReader* reader = nullptr;
  const format::DeletionSet* deleted = nullptr;  // its deleted documents (or null: none)
  // Whether its records have a list for every term that stands at a phrase position (a flush
  // written to be merged: SegmentBuilder::Write), so a term without one stands at none.
  bool every_position = false;
};

// The memory MergeSegments needs for `sources` and sparse_max_df, in bytes (an upper estimate:
// docs/living-index.md).
uint64_t EstimateMergeBytes(const std::vector<MergeSource>& sources, uint32_t sparse_max_df);

// Writes the live documents of `sources` as one segment file at `path` (atomically), with
// signatures at fp_rate, sparse rows for the terms in at most
// format::SegmentSparseMaxDf(sparse_max_df, live documents) documents and
// `root` in its META. The documents' paths must be distinct across
// the sources. The records keep the lists of positions of the new segment's frequent terms
// (format::IsPositionedTerm), or all the sources have if its documents hold less than
// every_position_bytes of text. Returns what was written; a summary of 0 documents means
// nothing was written (no live document). Runs in parallel in the calling task arena. Throws
// Error (kCorrupt for a damaged input, kIo).
SegmentSummary MergeSegments(const std::vector<MergeSource>& sources, double fp_rate,
                             uint32_t sparse_max_df, const std::string& path,
                             const std::string& root,
                             uint64_t every_position_bytes = format::kEveryPositionBytes);

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_SEGMENT_MERGER_H_
