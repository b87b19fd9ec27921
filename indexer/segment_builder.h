// Building one segment: documents are tokenized (in parallel, batch by batch) into an
// in-memory segment whose size is tracked, then written as one immutable segment file.
//
// Write runs as named phases: SortByName -> AssignTermIds -> BuildDocumentTable -> ClassifyTerms
// (exact, Bloom and sparse terms) -> PlanSegmentRows -> BuildSignatureRows
// (indexer/signature_rows.h) -> BuildSparseSections -> EncodeForwardStore -> WriteSegmentFile.
#ifndef BITSIFT_INDEXER_SEGMENT_BUILDER_H_
#define BITSIFT_INDEXER_SEGMENT_BUILDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "documents/file_walker.h"
#include "format/forward_store.h"
#include "format/index_format.h"
#include "indexer/bands.h"
#include "indexer/term_interner.h"
#include "tokenizer/tokenizer.h"

namespace bitsift::indexer {

using documents::FileFacts;
using documents::SkipCallback;
using documents::SkipReason;

// A document's text (from documents::ReadDocumentFile) into a tokenizer and on to a sink.
class TokenizingSink : public documents::ByteSink {
 public:
  TokenizingSink(tokenizer::Tokenizer& tokenizer, tokenizer::TokenSink& sink)
      : tokenizer_(tokenizer), sink_(sink) {}
  void Write(std::string_view text) override { tokenizer_.Feed(text, sink_); }
  void Close() override { tokenizer_.Finish(sink_); }

 private:
  tokenizer::Tokenizer& tokenizer_;
  tokenizer::TokenSink& sink_;
};

// Reads document i of a batch into the sink: returns kCount on success, otherwise why it was
// skipped (with *detail). Called from several threads at once with distinct i.
using DocumentReader = std::function<SkipReason(size_t i, tokenizer::Tokenizer&,
                                                tokenizer::TokenSink&, FileFacts*, std::string*)>;

// What a written segment holds.
struct SegmentSummary {
  uint64_t documents = 0;
  uint64_t terms = 0;
  uint64_t postings = 0;
  uint64_t bands = 0;
  uint64_t input_bytes = 0;
  uint64_t file_bytes = 0;
};

// The META section of a new segment: `m` (its counts, fp_rate, exact_terms and fingerprint set
// by the caller) completed with the build time now, the token contract and this ICU's version,
// followed by `root`. Used by the builder and the merger alike.
std::string NewSegmentMeta(format::MetaRecord m, const std::string& root);

class SegmentBuilder {
 public:
  // fp_rate: the per-term false-positive target of every band (0 < fp_rate < 1); terms in at
  // most SegmentSparseMaxDf(sparse_max_df, documents) documents get sparse rows
  // (format/sparse_rows.h).
  // Documents are tokenized under `rules`; with `positions`, the records keep the positions of
  // the segment's frequent terms (format::IsPositionedTerm), or of every term if its documents
  // hold less than every_position_bytes of text.
  SegmentBuilder(double fp_rate, uint32_t sparse_max_df, tokenizer::TokenRules rules = {},
                 bool positions = true,
                 uint64_t every_position_bytes = format::kEveryPositionBytes);
  ~SegmentBuilder();

  // Reads documents 0..names.size()-1 with `read`, in parallel in the calling task arena, and
  // adds those read successfully under their names. A skipped document is reported to on_skip
  // and not added. `done(bytes)` is called once per document (progress). Names must be
  // distinct across everything added to one segment.
  void AddBatch(const std::vector<std::string>& names, const DocumentReader& read,
                const SkipCallback& on_skip, const std::function<void(uint64_t)>& done);

  uint64_t documents() const { return docs_.size(); }

  // The memory the builder holds now plus what Write will allocate, in bytes (an estimate
  // within a few percent on real corpora; docs/living-index.md).
  uint64_t EstimatedBytes() const;

  // Writes all added documents (sorted by name) as a segment file at `path` (atomically:
  // nothing at `path` until complete and synced), then empties the builder. `root` is recorded
  // in the segment's META. With `to_be_merged` (a flush that a merge will read), the records
  // keep the positions of every term, not only of the segment's frequent ones: the merge keeps
  // those of the merged segment's frequent terms (format::IsPositionedTerm of the merged
  // counts), which one flush cannot tell. Throws Error(kIo).
  SegmentSummary Write(const std::string& path, const std::string& root, bool to_be_merged = false);

 private:
  // Empties the builder for the next segment (and gives its memory back).
  void Reset();

  struct Doc {
    std::string name;
    std::vector<uint32_t> ids;     // provisional, then final term ids (sorted)
    format::ForwardCounts counts;  // its length, and tf aligned with ids (empty: all 1)
    std::string sequence;          // its phrase positions (DistinctTokens::sequence)
    FileFacts facts;
  };
  tokenizer::TokenRules rules_;
  bool positions_;
  uint64_t every_position_bytes_;
  double fp_rate_;
  uint32_t sparse_max_df_;
  std::unique_ptr<TermInterner> interner_;
  std::vector<Doc> docs_;
  TermCountOrder term_counts_;  // of the documents with 1..kMaxSignatureTerms terms
  uint64_t postings_ = 0;
  uint64_t tf_entries_ = 0;  // frequencies held (documents with a repeated term)
  uint64_t sequence_bytes_ = 0;
  uint64_t name_bytes_ = 0;
};

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_SEGMENT_BUILDER_H_
