// Several index directories answered as one (and one index of several segments): the
// single-machine form of shards. Each index contributes the segments of the state its MANIFEST
// named when it was opened (a snapshot: later updates and compactions are not seen, and the
// mapped files stay valid while they run).
#ifndef BITSIFT_QUERY_INDEX_SET_H_
#define BITSIFT_QUERY_INDEX_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/manifest.h"
#include "query/index_reader.h"
#include "query/scope.h"
#include "query/searcher.h"

namespace bitsift::query {

// Sums over the segments searched (the time fields too: with segments searched in parallel,
// total_us can exceed the wall time).
struct SetQueryStats : QueryStats {
  uint64_t segments_searched = 0;  // segments whose rows were read
  uint64_t segments_skipped = 0;   // segments whose dictionary lacks a term (no row read)
  uint64_t segments_out_of_scope = 0;  // segments with no document in the scope (nothing read)
};

class IndexSet {
 public:
  // Opens every index directory in `index_dirs` (in that order). Throws Error(kNotFound) for a
  // missing index, Error(kCorrupt) for a damaged one or a 0.1 index file (naming the repair).
  explicit IndexSet(const std::vector<std::string>& index_dirs);
  ~IndexSet();

  struct Segment {
    std::unique_ptr<IndexReader> reader;
    std::unique_ptr<Searcher> searcher;
    std::vector<uint64_t> deleted;  // bitmap over local ids; empty if none is deleted
    uint32_t index = 0;             // position of its index in the set
    uint64_t number = 0;            // its file is format::SegmentFileName(number)
    uint32_t first_id = 0;          // the global id of its local document 0
    uint64_t deleted_count = 0;
    bool is_deleted(uint32_t local) const {
      return !deleted.empty() && ((deleted[local / 64] >> (local % 64)) & 1);
    }
  };
  struct Index {
    std::string dir;   // as given
    std::string root;  // the directory it indexes (absolute; empty for in-memory documents)
    format::Manifest manifest;
    std::vector<size_t> segments;  // positions in segments()
  };

  const std::vector<Segment>& segments() const { return segments_; }
  const std::vector<Index>& indexes() const { return indexes_; }

  // Global ids number every document of every segment (deleted ones too) in segment order.
  uint64_t id_count() const { return id_count_; }
  uint64_t live_documents() const { return live_; }
  // The segment of global id `id` (precondition: id < id_count()).
  const Segment& SegmentOf(uint32_t id) const;
  uint32_t LocalOf(uint32_t id) const { return id - SegmentOf(id).first_id; }
  bool IsDeleted(uint32_t id) const { return SegmentOf(id).is_deleted(LocalOf(id)); }

  // The live documents containing every term (from Searcher::ParseQuery), as global ids: index
  // by index in the order given, and in path order within an index. At most `limit` (0 = all).
  // A segment whose dictionary lacks a term is skipped without reading a row. `scope`, if not
  // null, holds one IndexScope per index: documents outside it are never returned nor counted
  // against the limit, and a segment with no document in it is not searched. Throws
  // Error(kCorrupt) if a damaged record or chunk is met.
  std::vector<uint32_t> Search(const std::vector<std::string>& terms, uint64_t limit,
                               SetQueryStats* stats,
                               const std::vector<IndexScope>* scope = nullptr) const;

  // The full check (`bitsift check`): every segment (query/index_check.h), and no path live in
  // two segments of one index. Throws Error(kCorrupt) naming the path and the first problem.
  void Check() const;

 private:
  std::vector<Segment> segments_;
  std::vector<Index> indexes_;
  uint64_t id_count_ = 0;
  uint64_t live_ = 0;
};

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_INDEX_SET_H_
