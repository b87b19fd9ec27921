// Several index directories answered as one (and one index of several segments): the
// single-machine form of shards. Each index contributes the segments of the state its MANIFEST
// named when it was opened (a snapshot: later updates and compactions are not seen, and the
// mapped files stay valid while they run).
#ifndef BITSIFT_QUERY_INDEX_SET_H_
#define BITSIFT_QUERY_INDEX_SET_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "format/manifest.h"
#include "format/segment_reader.h"
#include "query/query_eval.h"
#include "query/rank_merge.h"
#include "query/scope.h"
#include "query/searcher.h"

namespace bitsift::query {

// Sums over the segments searched (the time fields too: with segments searched in parallel,
// total_us can exceed the wall time).
struct SetQueryStats : QueryStats {
  uint64_t segments_searched = 0;      // segments whose rows were read
  uint64_t segments_skipped = 0;       // segments whose dictionary lacks a term (no row read)
  uint64_t segments_out_of_scope = 0;  // segments with no document in the scope (nothing read)
  // Evaluate only (query_eval.h's EvalStats, summed):
  uint64_t prefix_terms = 0;       // dictionary terms the prefixes expanded to
  uint64_t phrase_candidates = 0;  // documents whose text was read to check a phrase
  uint64_t text_bytes = 0;         // bytes of that text
  uint64_t unreadable = 0;         // documents whose text was needed but could not be read
  double phrase_us = 0;            // time reading and tokenizing those texts
};

// Makes every later query of the process share its segments with the helper thread from its
// start, as after a query that took kSequentialMicros (index_set.cc): for tests, and for a
// program that knows a stream of queries is coming.
void ShareSegmentsFromNowOn();

class IndexSet {
 public:
  // Opens every index directory in `index_dirs` (in that order; one named twice, by any
  // spelling or link, is opened once, at its first place). Throws Error(kNotFound) for a
  // missing index, Error(kCorrupt) for a damaged one or a 0.1 index file (naming the repair).
  // `access`: how the segment files are read (format::IndexFile::Access; kOneShot for a
  // process that answers a query and exits). With kRandom (a set for many queries) and
  // `map_ahead`, a thread of the set maps the segment files' pages the page cache holds
  // (MapAhead, below).
  // A sharded index (a directory holding a shard map, format/shard_map.h) is one index of the
  // set: the segments of all its shards (or, if `shards` is not null, of those shards alone,
  // positions in its map, ascending) answer as the segments of one index do, merged in path
  // order; its root is the map's. Throws Error(kNotFound) naming the shard for a shard
  // directory that is missing, Error(kCorrupt) for a damaged one or a bad map.
  explicit IndexSet(const std::vector<std::string>& index_dirs,
                    format::IndexFile::Access access = format::IndexFile::Access::kRandom,
                    bool map_ahead = true, const std::vector<uint32_t>* shards = nullptr);
  // Stops the MapAhead thread (within one piece) and waits for it.
  ~IndexSet();

  struct Segment {
    std::unique_ptr<format::SegmentReader> reader;
    std::unique_ptr<Searcher> searcher;
    format::DeletionSet deleted;  // moved here from the manifest's entry
    uint32_t index = 0;           // position of its index in the set
    uint64_t number = 0;          // its file is format::SegmentFileName(number)
    uint32_t first_id = 0;        // the global id of its local document 0
    uint32_t shard = 0;           // its shard in its index's shard map (0 if not sharded)
    bool is_deleted(uint32_t local) const { return deleted.contains(local); }
  };
  struct Index {
    std::string dir;   // as given
    std::string root;  // the directory it indexes (absolute; empty for in-memory documents)
    format::Manifest manifest;     // its deletion sets moved to the segments (Segment::deleted)
    std::vector<size_t> segments;  // positions in segments()
    tokenizer::TokenRules rules;   // the token rules it was built with (its settings)
    uint32_t shard_count = 0;      // shards in its map; 0: not a sharded index
    // The shards opened (ascending) and the global id of each one's first document: a shard's
    // documents have consecutive global ids, in its segments' order.
    std::vector<uint32_t> shards;
    std::vector<uint32_t> shard_first_ids;
    std::vector<uint32_t> shard_id_counts;  // the ids of each (deleted documents' included)
  };
  // A document as its shard numbers it: the same in every set that opens the shard's state,
  // whichever other shards it opens (for passing results between processes).
  struct ShardPosition {
    uint32_t index = 0;  // in indexes()
    uint32_t shard = 0;  // in that index's shard map (0 if not sharded)
    uint32_t id = 0;     // among the shard's ids (its segments in order, deleted ones included)
  };
  // Precondition: id < id_count().
  ShardPosition ShardOf(uint32_t id) const;
  // The global id of `p`; false if its shard is not open here or its id is out of range.
  bool FromShard(const ShardPosition& p, uint32_t* id) const;

  const std::vector<Segment>& segments() const { return segments_; }
  const std::vector<Index>& indexes() const { return indexes_; }
  // The token rules of every index of the set (opening indexes whose rules differ fails), by
  // which queries on it are read.
  tokenizer::TokenRules rules() const {
    return indexes_.empty() ? tokenizer::TokenRules{} : indexes_.front().rules;
  }

  // Global ids number every document of every segment (deleted ones too) in segment order.
  uint64_t id_count() const { return id_count_; }
  uint64_t live_documents() const { return live_; }
  // The sum of the live documents' lengths (format::ForwardCounts::length): the segments'
  // totals less their deleted documents' lengths (read once, on the first call). Thread-safe.
  // Throws Error(kCorrupt) if a deleted document's record is damaged.
  uint64_t live_length() const;
  // The segment of global id `id` (precondition: id < id_count()).
  const Segment& SegmentOf(uint32_t id) const;
  // Asks for the records of documents `ids` (global ids, any order: their paths and facts) to
  // be read ahead at once, segment by segment (format::SegmentReader::WillNeedDocs): a hint for a
  // cold index before the results are read.
  void WillNeedDocuments(const std::vector<uint32_t>& ids) const;
  // Asks every cold segment's dictionary for what looking up `terms` will read, a stage at a
  // time across the segments (DictionaryView::WillNeedLookups): a hint before a plain query.
  void WillNeedLookups(const std::vector<std::string>& terms) const;
  uint32_t LocalOf(uint32_t id) const { return id - SegmentOf(id).first_id; }
  bool IsDeleted(uint32_t id) const { return SegmentOf(id).is_deleted(LocalOf(id)); }

  // The live documents containing every term (from Searcher::ParseQuery), as global ids: index
  // by index in the order given, and in path order within an index. At most `limit` (0 = all).
  // A segment whose dictionary lacks a term is skipped without reading a row. `scope`, if not
  // null, holds one IndexScope per index: documents outside it are never returned nor counted
  // against the limit, and a segment with no document in it is not searched. Throws
  // Error(kCorrupt) if a damaged record or chunk is met.
  // With `parallel`, segments are searched on this thread and the helper thread
  // (util/helper_thread.h) once the process has seen a query that took a while.
  std::vector<uint32_t> Search(const std::vector<std::string>& terms, uint64_t limit,
                               SetQueryStats* stats, const std::vector<IndexScope>* scope = nullptr,
                               bool parallel = true) const;

  // Reads into *text the text of local document `local` of segment `segment` exactly as it was
  // indexed; returns false if it cannot (changed or vanished file, no text). Called from several
  // threads at once.
  using SegmentText =
      std::function<bool(const Segment& segment, uint32_t local, std::string* text)>;

  // Answers a parsed query (query_parser.h, without error) as Search does (global ids, index by
  // index, path order within an index, at most `limit`, `scope` as in Search, segments without
  // a needed term skipped), evaluating it in each segment with query::Evaluate. Documents whose
  // text a phrase needed but `text` could not give are neither returned nor counted: their
  // global ids go to *unreadable (if not null). With `parallel`, segments are shared as in
  // Search and the texts of many candidates are read on TBB's threads. Throws Error(kCorrupt)
  // if a damaged record or chunk is met.
  std::vector<uint32_t> Evaluate(const QueryNode& query, uint64_t limit, const SegmentText& text,
                                 bool parallel, SetQueryStats* stats,
                                 const std::vector<IndexScope>* scope = nullptr,
                                 std::vector<uint32_t>* unreadable = nullptr) const;

  // Whether the path order of the indexes' documents has been found (after merges of
  // overlapping segments' hits that read order_price_ paths; see there): for tests.
  bool path_order_found() const { return order_ready_.load(std::memory_order_acquire); }

  // The bytes of segment files the MapAhead thread has asked to be mapped so far; with `wait`,
  // once it has finished (at once if there is none). For tests.
  uint64_t mapped_ahead(bool wait = false) const;

  // The full check (`bitsift check`): every segment (query/index_check.h), and no path live in
  // two segments of one index. Throws Error(kCorrupt) naming the path and the first problem.
  void Check() const;

 private:
  // One segment's part of an answer.
  struct SegmentAnswer {
    std::vector<uint32_t> hits;        // local ids, ascending
    std::vector<uint32_t> unreadable;  // local ids
    EvalStats stats;
  };
  // Answers segment `s` with at most `want` hits (0 = all) among the local ids in `ranges` (null
  // = all).
  using SegmentSearch = std::function<void(const Segment& s, uint64_t want,
                                           const std::vector<IdRange>* ranges, SegmentAnswer*)>;
  // The machinery of Search and Evaluate: scope to id ranges, segments shared with the helper
  // thread (if `parallel`; `settled` as in SearchShared), statistics,
  // and the merge of the segments' answers by path.
  std::vector<uint32_t> Answer(const SegmentSearch& search, uint64_t limit, SetQueryStats* stats,
                               const std::vector<IndexScope>* scope,
                               std::vector<uint32_t>* unreadable, bool parallel,
                               const std::vector<bool>* settled) const;

  // settled[i]: whether a term of `terms` is certainly absent from segment i (its TERM_FILTER
  // rules the term out), for every segment; empty when not `parallel` or with one segment
  // (then Searcher::Search finds it as quickly itself).
  std::vector<bool> SettledSegments(const std::vector<std::string>& terms, bool parallel) const;

  // Calls search(i) for every segment i of `index` (positions in index.segments): those
  // `settled` marks (by segment number, if not null: a query term is certainly absent there)
  // on this thread; the others on this thread while the process's queries are quick, then
  // shared with the helper thread (util/helper_thread.h), the largest segments first.
  void SearchShared(const Index& index, const std::vector<bool>* settled,
                    const std::function<void(size_t)>& search) const;

  // Appends to *out (up to `limit` in all, 0 = no limit) the hits of `parts` (each ascending
  // local ids of segment part_segment[i], in that segment's path order) in path order:
  // MergeByPath compares paths; MergeByOrder (the parts of index `index`, part p from the
  // segment at position part_position[p] of its segments) uses the index's PathOrder.
  void MergeByPath(const std::vector<std::vector<uint32_t>>& parts,
                   const std::vector<size_t>& part_segment, uint64_t limit,
                   std::vector<uint32_t>* out) const;
  void MergeByOrder(size_t index, const std::vector<std::vector<uint32_t>>& parts,
                    const std::vector<size_t>& part_position, uint64_t limit,
                    std::vector<uint32_t>* out) const;
  // The path order of the documents of index `index` (deleted documents too), for merging its
  // segments' hits (rank_merge.h). Found for every index on the first call: a k-way merge of
  // the paths of the segments other than the spine, each galloped into the spine's. Thread-safe.
  const SpineOrder& PathOrder(size_t index) const;

  // A term absent from a segment's TERM_FILTER is absent from the segment. Search tests every
  // query term against every segment's filter before it searches any (`settled`): an
  // absent-term query ends there. filters_[i] is segment i's filter, verified whole at open,
  // unless the set was opened for one query (Access::kOneShot: its words are null, and
  // DictionaryView::MayContainHash reads a block with lazy verification). Here, side by side,
  // the test of a query's terms touches a cache line per segment and term and nothing else.
  std::vector<format::DictionaryView::Filter> filters_;
  std::vector<Segment> segments_;
  std::vector<Index> indexes_;
  uint64_t id_count_ = 0;
  uint64_t live_ = 0;
  // Paths read by MergeByPath so far (estimated), until the PathOrder is found.
  mutable std::atomic<uint64_t> merged_by_path_{0};
  // The paths merges read before the PathOrder is found (ski rental: merge by path until the
  // paths read would have paid for the order). Finding it reads every document's path once at
  // most (an update's M documents read about M log(N / M) of the spine's N), as many as
  // id_count_, the price for a set opened for one query. A set opened for many (a long-running
  // reader, a `--queries` batch) will merge again and again, so it buys sooner, at
  // id_count_ / kLongLivedOrderDiscount. (linux-paras after its 10% update, 4 segments: the
  // first pass of a `--queries` process merged by path in its first six heavy queries, 1.2M
  // paths read at 35-45 ns, before the order was found in ~27 ms.)
  static constexpr uint64_t kLongLivedOrderDiscount = 8;
  uint64_t order_price_ = 0;
  mutable std::atomic<bool> order_ready_{false};
  mutable std::once_flag order_once_;
  mutable std::vector<SpineOrder> orders_;  // by index
  mutable std::once_flag length_once_;
  mutable uint64_t live_length_ = 0;

  // Maps ahead, on map_ahead_ (started by the constructor for Access::kRandom and map_ahead,
  // unless the environment holds BITSIFT_MAP_AHEAD=0), the pages of the segment files that the page
  // cache holds, in set order, kMapAheadPiece bytes a request (MappedFile::PopulateResident),
  // at most kMapAheadLimit bytes in all, until stop_map_ahead_. Why: a long-lived reader's
  // first pass faulted on each page it first touched, and a freshly updated index's large
  // segment paid most (linux-files after its 10% update, 2 segments: the first pass's p50
  // 21 us against 15 for the compacted index; with the files mapped 13-15 against 12.5-13).
  // Mapping them at open cost the open 10-20 ms per 200 MB, so a thread does it, at a lower
  // priority than the queries', reading nothing from the disk (a cold index stays cold). The
  // mapped pages are shared file pages: they count in the process's resident set.
  void MapAhead();
  static constexpr uint64_t kMapAheadPiece = uint64_t{2} << 20;
  static constexpr uint64_t kMapAheadLimit = uint64_t{1} << 30;
  std::thread map_ahead_;
  std::atomic<bool> stop_map_ahead_{false};
  std::atomic<bool> map_ahead_done_{true};
  std::atomic<uint64_t> mapped_ahead_{0};
};

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_INDEX_SET_H_
