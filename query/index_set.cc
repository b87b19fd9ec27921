#include "query/index_set.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <set>
#include <system_error>

#include "format/shard_map.h"
#include "query/index_check.h"
#include "query/rank_merge.h"
#include "util/error.h"
#include "util/gallop.h"
#include "util/helper_thread.h"

namespace bitsift::query {
namespace {

// The segments of a query are searched on the calling thread while the query is quick, and the
// rest shared with the helper thread (util/helper_thread.h) once it has taken this long. A
// one-shot query of a few rows and candidates takes less than that in all its segments, less
// than starting threads costs it (the helper's, and TBB's pool at a segment's first parallel
// loop: 2-4 ms). A heavy query loses at most this much of its parallelism; once a query of the
// process has gone parallel, later ones share at once (a long-running process pays the start
// once).
constexpr double kSequentialMicros = 1000;
std::atomic<bool> segments_in_parallel{false};

}  // namespace

void ShareSegmentsFromNowOn() { segments_in_parallel.store(true, std::memory_order_relaxed); }

IndexSet::IndexSet(const std::vector<std::string>& index_dirs, format::IndexFile::Access access,
                   bool map_ahead, const std::vector<uint32_t>* shards) {
  std::set<std::pair<dev_t, ino_t>> seen;  // the index directories opened
  for (const std::string& dir : index_dirs) {
    // A directory named again (by another spelling, or through a link) is opened once, at its
    // first place: a set answers each document once.
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0 && !seen.insert({st.st_dev, st.st_ino}).second) continue;
    const uint32_t i = static_cast<uint32_t>(indexes_.size());
    // The index directories that make up this index of the set: `dir`, or its shards.
    std::vector<std::pair<std::string, uint32_t>> parts;  // {directory, shard}
    Index index;
    index.dir = dir;
    if (format::IsShardedIndex(dir)) {
      const format::ShardMap map = format::ReadShardMap(dir);
      index.shard_count = map.count;
      index.root = map.root;
      for (uint32_t k = 0; k < map.count; ++k) {
        if (shards == nullptr || std::binary_search(shards->begin(), shards->end(), k)) {
          parts.emplace_back(dir + "/" + map.dirs[k], k);
        }
      }
    } else {
      parts.emplace_back(dir, 0);
    }
    for (const auto& part : parts) {
      // (Named copies: clang before 16 cannot capture structured bindings in a lambda.)
      const std::string& part_dir = part.first;
      const auto shard = part.second;
      std::vector<Segment> opened;
      format::Manifest manifest;
      try {
        manifest = format::OpenManifestSegments(part_dir, [&](format::Manifest& m) {
          opened.clear();
          for (format::ManifestSegment& e : m.segments) {
            Segment s;
            const std::string path = part_dir + "/" + format::SegmentFileName(e.number);
            // Queries touch scattered pages: no read-around, their own read-ahead requests,
            // from the open on.
            s.reader = std::make_unique<format::SegmentReader>(path, access);
            Ensure(s.reader->doc_count() == e.doc_count && s.reader->file_size() == e.file_size,
                   ErrorKind::kCorrupt, path + ": does not match the index manifest");
            s.searcher = std::make_unique<Searcher>(*s.reader);
            s.index = i;
            s.number = e.number;
            s.shard = shard;
            s.deleted = std::move(e.deleted);  // (a bitmap viewed in the manifest's mapping)
            opened.push_back(std::move(s));
          }
        });
      } catch (const Error& e) {
        if (index.shard_count == 0) throw;
        // Say which shard: the message of a missing or damaged index names a file in it.
        throw Error(e.kind(), "shard " + std::to_string(shard) + " of " + dir + ": " + e.what());
      }
      const std::string root = format::EngineSettings::From(manifest.settings).RootOf(part_dir);
      const tokenizer::TokenRules rules = tokenizer::TokenRulesFromSettings(manifest.settings);
      if (index.shard_count == 0) {
        index.root = root;
      } else {
        Ensure(root == index.root, ErrorKind::kCorrupt,
               part_dir + ": an index of " + root + ", not of " + index.root +
                   " as its shard map says");
      }
      if (!index.shards.empty()) {
        Ensure(rules == index.rules, ErrorKind::kCorrupt,
               part_dir + ": this shard reads words differently from the others");
      } else {
        index.rules = rules;
        index.manifest = std::move(manifest);  // the first shard's settings stand for all
      }
      index.shards.push_back(shard);
      index.shard_first_ids.push_back(static_cast<uint32_t>(id_count_));
      const uint64_t ids_before = id_count_;
      for (Segment& s : opened) {
        Ensure(id_count_ + s.reader->doc_count() < UINT32_MAX, ErrorKind::kInvalidArgument,
               "too many documents in the indexes opened together");
        s.first_id = static_cast<uint32_t>(id_count_);
        id_count_ += s.reader->doc_count();
        live_ += s.reader->doc_count() - s.deleted.size();
        index.segments.push_back(segments_.size());
        segments_.push_back(std::move(s));
      }
      index.shard_id_counts.push_back(static_cast<uint32_t>(id_count_ - ids_before));
    }
    if (!indexes_.empty() && index.rules != indexes_.front().rules) {
      throw Error(ErrorKind::kInvalidArgument,
                  "the indexes " + indexes_.front().dir + " and " + dir +
                      " read words differently (one keeps diacritics, the other folds them): "
                      "query them one at a time, or rebuild one like the other");
    }
    indexes_.push_back(std::move(index));
  }
  order_price_ = access == format::IndexFile::Access::kOneShot
                     ? id_count_
                     : std::max<uint64_t>(1, id_count_ / kLongLivedOrderDiscount);
  filters_.resize(segments_.size());
  if (access != format::IndexFile::Access::kOneShot) {
    for (size_t i = 0; i < segments_.size(); ++i) {
      filters_[i] = segments_[i].reader->dictionary().VerifiedFilter();
    }
  }
  const char* map_ahead_env = std::getenv("BITSIFT_MAP_AHEAD");
  if (access == format::IndexFile::Access::kRandom && map_ahead && !segments_.empty() &&
      !(map_ahead_env != nullptr && std::strcmp(map_ahead_env, "0") == 0)) {
    map_ahead_done_.store(false, std::memory_order_relaxed);
    try {
      map_ahead_ = std::thread([this] { MapAhead(); });
    } catch (const std::system_error&) {
      map_ahead_done_.store(true, std::memory_order_relaxed);  // no thread: no mapping ahead
    }
  }
}

IndexSet::~IndexSet() {
  stop_map_ahead_.store(true, std::memory_order_relaxed);
  if (map_ahead_.joinable()) map_ahead_.join();
}

void IndexSet::MapAhead() {
  // Below the queries' threads: on a busy machine this waits for a free core.
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
  uint64_t budget = kMapAheadLimit;
  for (const Segment& s : segments_) {
    const format::IndexFile& file = s.reader->file();
    for (uint64_t at = 0; at < file.file_size() && budget > 0; at += kMapAheadPiece) {
      if (stop_map_ahead_.load(std::memory_order_relaxed)) break;
      const uint64_t piece = std::min({kMapAheadPiece, file.file_size() - at, budget});
      budget -= piece;
      mapped_ahead_.fetch_add(file.PopulateResident(at, piece), std::memory_order_relaxed);
    }
  }
  map_ahead_done_.store(true, std::memory_order_release);
  map_ahead_done_.notify_all();
}

uint64_t IndexSet::mapped_ahead(bool wait) const {
  if (wait) map_ahead_done_.wait(false, std::memory_order_acquire);
  return mapped_ahead_.load(std::memory_order_relaxed);
}

const IndexSet::Segment& IndexSet::SegmentOf(uint32_t id) const {
  // A bisection without branches (the compiler's conditional moves): the hits of an updated
  // index alternate between segments at random, and std::upper_bound's mispredicted branches
  // cost more than the search (a third of the merged query's extra time).
  const Segment* base = segments_.data();
  for (size_t n = segments_.size(); n > 1;) {
    const size_t half = n / 2;
    base = base[half].first_id <= id ? base + half : base;
    n -= half;
  }
  return *base;
}

IndexSet::ShardPosition IndexSet::ShardOf(uint32_t id) const {
  const Segment& s = SegmentOf(id);
  const Index& index = indexes_[s.index];
  const size_t k = static_cast<size_t>(
      std::lower_bound(index.shards.begin(), index.shards.end(), s.shard) - index.shards.begin());
  return {s.index, s.shard, id - index.shard_first_ids[k]};
}

bool IndexSet::FromShard(const ShardPosition& p, uint32_t* id) const {
  if (p.index >= indexes_.size()) return false;
  const Index& index = indexes_[p.index];
  auto at = std::lower_bound(index.shards.begin(), index.shards.end(), p.shard);
  if (at == index.shards.end() || *at != p.shard) return false;
  const size_t k = static_cast<size_t>(at - index.shards.begin());
  if (p.id >= index.shard_id_counts[k]) return false;
  *id = index.shard_first_ids[k] + p.id;
  return true;
}

uint64_t IndexSet::live_length() const {
  std::call_once(length_once_, [this] {
    uint64_t total = 0;
    format::ForwardCounts counts;
    for (const Segment& s : segments_) {
      total += s.reader->meta().total_length;
      s.deleted.ForEach([&](uint32_t local) {
        (void)s.reader->DocumentTerms(local, &counts);
        total -= std::min<uint64_t>(total, counts.length);
      });
    }
    live_length_ = total;
  });
  return live_length_;
}

void IndexSet::WillNeedDocuments(const std::vector<uint32_t>& ids) const {
  auto warm = [](const Segment& s) {
    const format::IndexFile& f = s.reader->file();
    return !f.random_access() || f.Warm(format::SectionId::kDocFacts);
  };
  if (ids.empty() || std::all_of(segments_.begin(), segments_.end(), warm)) return;
  if (segments_.size() == 1) {
    segments_[0].reader->WillNeedDocs(ids.data(), ids.size());
    return;
  }
  // Each segment's ids come in its path order, which is its id order: bucket, do not sort.
  std::vector<std::vector<uint32_t>> local(segments_.size());
  for (uint32_t id : ids) {
    const Segment& s = SegmentOf(id);
    local[static_cast<size_t>(&s - segments_.data())].push_back(id - s.first_id);
  }
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (!local[i].empty()) segments_[i].reader->WillNeedDocs(local[i].data(), local[i].size());
  }
}

void IndexSet::WillNeedLookups(const std::vector<std::string>& terms) const {
  auto cold = [](const Segment& s) {
    const format::IndexFile& f = s.reader->file();
    return f.random_access() && !f.Warm(format::SectionId::kDictBlocks);
  };
  if (std::none_of(segments_.begin(), segments_.end(), cold)) return;
  std::vector<uint64_t> hashes;
  for (const std::string& t : terms) hashes.push_back(format::HashTerm(t));
  // Each stage asks every segment before the next waits for any: one round of reads a stage.
  for (int stage : {1, 2}) {
    for (const Segment& s : segments_) {
      if (cold(s)) s.reader->dictionary().WillNeedLookups(terms, hashes, stage);
    }
  }
}

std::vector<bool> IndexSet::SettledSegments(const std::vector<std::string>& terms,
                                            bool parallel) const {
  const size_t n = segments_.size();
  if (!parallel || n < 2 || terms.empty()) return {};
  constexpr size_t kStackTerms = 16;
  uint64_t stack_hashes[kStackTerms];
  std::vector<uint64_t> heap_hashes;
  uint64_t* hashes = stack_hashes;
  if (terms.size() > kStackTerms) {
    heap_hashes.resize(terms.size());
    hashes = heap_hashes.data();
  }
  for (size_t t = 0; t < terms.size(); ++t) hashes[t] = format::HashTerm(terms[t]);
  // Every block asked for before any is tested: their cache misses overlap.
  for (size_t i = 0; i < n; ++i) {
    const format::DictionaryView::Filter& f = filters_[i];
    if (f.words == nullptr) continue;
    for (size_t t = 0; t < terms.size(); ++t) __builtin_prefetch(f.Block(hashes[t]));
  }
  std::vector<bool> settled(n, false);
  for (size_t i = 0; i < n; ++i) {
    const format::DictionaryView::Filter& f = filters_[i];
    for (size_t t = 0; t < terms.size() && !settled[i]; ++t) {
      settled[i] = f.words != nullptr
                       ? !f.MayContain(hashes[t])
                       : !segments_[i].reader->dictionary().MayContainHash(hashes[t]);
    }
  }
  return settled;
}

std::vector<uint32_t> IndexSet::Search(const std::vector<std::string>& terms, uint64_t limit,
                                       SetQueryStats* stats, const std::vector<IndexScope>* scope,
                                       bool parallel) const {
  WillNeedLookups(terms);
  const std::vector<bool> settled = SettledSegments(terms, parallel);
  std::vector<uint32_t> out = Answer(
      [&](const Segment& s, uint64_t want, const std::vector<IdRange>* ranges, SegmentAnswer* a) {
        if (!settled.empty() && settled[static_cast<size_t>(&s - segments_.data())]) {
          a->stats.absent_term = true;  // as Searcher::Search would find, without its lookups
          return;
        }
        a->hits = s.searcher->Search(terms, want, &a->stats, s.deleted.bits(), ranges);
      },
      limit, stats, scope, nullptr, parallel, settled.empty() ? nullptr : &settled);
  stats->terms = terms.size();
  return out;
}

std::vector<uint32_t> IndexSet::Evaluate(const QueryNode& query, uint64_t limit,
                                         const SegmentText& text, bool parallel,
                                         SetQueryStats* stats, const std::vector<IndexScope>* scope,
                                         std::vector<uint32_t>* unreadable) const {
  std::vector<uint32_t> out = Answer(
      [&](const Segment& s, uint64_t want, const std::vector<IdRange>* ranges, SegmentAnswer* a) {
        EvalOptions options;
        options.limit = want;
        options.deleted = s.deleted.bits();
        options.scope = ranges;
        options.rules = rules();
        options.parallel = parallel;
        if (text) {
          options.text = [&s, &text](uint32_t doc, std::string* t) { return text(s, doc, t); };
        }
        EvalResult r = query::Evaluate(*s.reader, *s.searcher, query, options, &a->stats);
        a->hits = std::move(r.documents);
        a->unreadable = std::move(r.unreadable);
      },
      limit, stats, scope, unreadable, parallel, nullptr);
  return out;
}

namespace {

// Adds a segment's statistics to the set's.
void Tally(const EvalStats& st, SetQueryStats* stats) {
  (st.absent_term ? stats->segments_skipped : stats->segments_searched)++;
  stats->terms = std::max(stats->terms, st.terms);
  stats->candidates += st.candidates;
  stats->false_positives += st.false_positives;
  stats->rows_read += st.rows_read;
  stats->bytes_read += st.bytes_read;
  stats->parse_us += st.parse_us;
  stats->and_us += st.and_us;
  stats->verify_us += st.verify_us;
  stats->total_us += st.total_us;
  stats->prefix_terms += st.prefix_terms;
  stats->phrase_candidates += st.phrase_candidates;
  stats->text_bytes += st.text_bytes;
  stats->unreadable += st.unreadable;
  stats->phrase_us += st.phrase_us;
}

}  // namespace

std::vector<uint32_t> IndexSet::Answer(const SegmentSearch& search_segment, uint64_t limit,
                                       SetQueryStats* stats, const std::vector<IndexScope>* scope,
                                       std::vector<uint32_t>* unreadable, bool parallel,
                                       const std::vector<bool>* settled) const {
  *stats = SetQueryStats{};
  if (unreadable != nullptr) unreadable->clear();
  std::vector<uint32_t> out;
  for (size_t x = 0; x < indexes_.size(); ++x) {
    const Index& index = indexes_[x];
    if (limit != 0 && out.size() >= limit) break;
    const uint64_t want = limit == 0 ? 0 : limit - out.size();
    const IndexScope* in = scope == nullptr || scope->at(x).all ? nullptr : &scope->at(x);
    // Each segment answers in its own path order; a k-way merge by path gives the index's.
    // Segments are shared with the helper thread (each search may itself run in parallel); a
    // segment whose dictionary lacks a term returns at once, so does one with nothing in the scope.
    const size_t n = index.segments.size();
    std::vector<SegmentAnswer> answers(n);
    // With a scope, each segment's id ranges under it (limit(i) null: the whole segment).
    std::vector<std::vector<IdRange>> ranges(in != nullptr ? n : 0);
    for (size_t i = 0; in != nullptr && i < n; ++i) {
      const format::SegmentReader& r = *segments_[index.segments[i]].reader;
      ranges[i] = RangesUnder(r, in->prefixes);
      if (ranges[i].empty()) stats->segments_out_of_scope++;
    }
    auto limit_of = [&](size_t i) -> const std::vector<IdRange>* {
      if (in == nullptr) return nullptr;
      const uint32_t docs = static_cast<uint32_t>(segments_[index.segments[i]].reader->doc_count());
      const bool whole = ranges[i].size() == 1 && ranges[i][0] == IdRange{0, docs};
      return whole ? nullptr : &ranges[i];
    };
    auto out_of_scope = [&](size_t i) { return in != nullptr && ranges[i].empty(); };
    auto search = [&](size_t i) {
      if (out_of_scope(i)) return;
      search_segment(segments_[index.segments[i]], want, limit_of(i), &answers[i]);
    };
    if (!parallel) {
      for (size_t i = 0; i < n; ++i) search(i);
    } else {
      SearchShared(index, settled, search);
    }
    size_t answering = 0, only = 0;  // segments with hits; one of them
    for (size_t i = 0; i < n; ++i) {
      if (out_of_scope(i)) continue;
      Tally(answers[i].stats, stats);
      const Segment& seg = segments_[index.segments[i]];
      if (unreadable != nullptr) {
        for (uint32_t local : answers[i].unreadable) unreadable->push_back(seg.first_id + local);
      }
      if (!answers[i].hits.empty()) {
        ++answering;
        only = i;
      }
    }
    if (answering <= 1) {  // no merge: the hits as they are, made global, up to `want`
      if (answering == 0) continue;
      std::vector<uint32_t>& hits = answers[only].hits;
      if (want != 0 && hits.size() > want) hits.resize(want);
      const uint32_t first_id = segments_[index.segments[only]].first_id;
      if (first_id != 0) {
        for (uint32_t& h : hits) h += first_id;
      }
      if (out.empty()) {
        out = std::move(hits);
      } else {
        out.insert(out.end(), hits.begin(), hits.end());
      }
      continue;
    }
    std::vector<std::vector<uint32_t>> parts;
    std::vector<size_t> part_segment, part_position;  // (a global segment number; its position)
    for (size_t i = 0; i < n; ++i) {
      if (out_of_scope(i) || answers[i].hits.empty()) continue;
      parts.push_back(std::move(answers[i].hits));
      part_segment.push_back(index.segments[i]);
      part_position.push_back(i);
    }
    uint64_t hits = 0;
    for (const auto& part : parts) hits += part.size();
    // Once the path order is known, merging costs an integer or two per hit. Until then, merges
    // compare paths (a cache miss or two per path read: the first and last of each part, and
    // each hit if the parts overlap), until they have read about as many as order_price_ (see
    // there); then it is found once.
    const uint64_t reads = 2 * parts.size() + hits;
    if (order_ready_.load(std::memory_order_acquire) ||
        merged_by_path_.fetch_add(reads, std::memory_order_relaxed) + reads >= order_price_) {
      MergeByOrder(x, parts, part_position, limit, &out);
    } else {
      MergeByPath(parts, part_segment, limit, &out);
    }
  }
  stats->matches = out.size();
  return out;
}

void IndexSet::SearchShared(const Index& index, const std::vector<bool>* settled,
                            const std::function<void(size_t)>& search) const {
  if (index.segments.size() == 1) {
    search(0);
    return;
  }
  // Segments that a term's filter rules out return at once: searched here, not shared (handing
  // a 2 us absent-term query to the helper cost it 1-3 us more).
  std::vector<size_t> rest;
  for (size_t i = 0; i < index.segments.size(); ++i) {
    if (settled != nullptr && (*settled)[index.segments[i]]) {
      search(i);
    } else {
      rest.push_back(i);
    }
  }
  const size_t n = rest.size();
  size_t next = 0;
  if (n > 1 && !segments_in_parallel.load(std::memory_order_relaxed)) {
    const auto start = std::chrono::steady_clock::now();
    while (next < n &&
           std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                   .count() < kSequentialMicros) {
      search(rest[next++]);
    }
    // A query that took the whole budget with segments left makes later queries share at once
    // (with 2 segments, the one left is searched here: there is nothing to share yet).
    if (next < n) segments_in_parallel.store(true, std::memory_order_relaxed);
  }
  if (n - next <= 1) {
    if (next < n) search(rest[next]);
    return;
  }
  // The largest first: this thread takes it, the helper the next one.
  std::vector<size_t> order(rest.begin() + static_cast<std::ptrdiff_t>(next), rest.end());
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return segments_[index.segments[a]].reader->doc_count() >
           segments_[index.segments[b]].reader->doc_count();
  });
  util::RunShared(order.size(), [&](size_t k) { search(order[k]); });
}

namespace {

// MergeByPath's records read ahead by copy, in pieces of this many hits, shared with the helper
// thread if it is polling, and started for it from kSharedPathsStart hits on (as verification,
// query/searcher.cc).
constexpr size_t kSharedPathsPiece = 128;
constexpr size_t kSharedPathsStart = 2048;

// The merge's easy case. Segments written by one run cover consecutive path ranges (files are
// indexed in path order): when the parts do not overlap, ordering them by their first hit is
// the whole merge. key(part, pos) orders hits as paths do (the path itself). If the parts
// are disjoint, appends their hits to *out (global ids: first_id(part) + local id, up to `most`
// in all) and returns true; otherwise returns false and appends nothing.
template <typename Key, typename FirstId>
bool ConcatenateIfDisjoint(const std::vector<std::vector<uint32_t>>& parts, Key key,
                           FirstId first_id, uint64_t most, std::vector<uint32_t>* out) {
  std::vector<size_t> by_first(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) by_first[p] = p;
  std::sort(by_first.begin(), by_first.end(),
            [&](size_t a, size_t b) { return key(a, 0) < key(b, 0); });
  for (size_t i = 1; i < by_first.size(); ++i) {
    const size_t prev = by_first[i - 1];
    if (!(key(prev, parts[prev].size() - 1) < key(by_first[i], 0))) return false;
  }
  for (size_t p : by_first) {
    const uint32_t first = first_id(p);
    for (uint32_t local : parts[p]) {
      if (out->size() >= most) return true;
      out->push_back(first + local);
    }
  }
  return true;
}

}  // namespace

void IndexSet::MergeByPath(const std::vector<std::vector<uint32_t>>& parts,
                           const std::vector<size_t>& part_segment, uint64_t limit,
                           std::vector<uint32_t>* out) const {
  const uint64_t most = limit == 0 ? UINT64_MAX : limit;
  auto path_of = [&](size_t part, size_t pos) {
    return segments_[part_segment[part]].reader->path(parts[part][pos]);
  };
  auto first_id = [&](size_t part) { return segments_[part_segment[part]].first_id; };
  // Disjoint parts: no other document's path is read.
  if (ConcatenateIfDisjoint(parts, path_of, first_id, most, out)) return;
  // Every hit's path is read: on a cold index, ask for them all at once first.
  for (size_t p = 0; p < parts.size(); ++p)
    segments_[part_segment[p]].reader->WillNeedDocs(parts[p].data(), parts[p].size());
  // Read by copy (a one-shot query), each record is a pread that the reader keeps: read them
  // on this thread and the helper before the merge, which then finds them all kept.
  // (linux-paras, `handler goto`: 821 preads for 988 hits, ~3 ms on one thread.)
  std::vector<std::pair<size_t, size_t>> pieces;  // {part, first hit}
  size_t hits = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    hits += parts[p].size();
    if (!segments_[part_segment[p]].reader->file().copies(format::SectionId::kDocFacts)) continue;
    for (size_t i = 0; i < parts[p].size(); i += kSharedPathsPiece) pieces.emplace_back(p, i);
  }
  if (pieces.size() > 1) {
    util::RunShared(
        pieces.size(),
        [&](size_t k) {
          const auto [p, first] = pieces[k];
          const format::SegmentReader& reader = *segments_[part_segment[p]].reader;
          const size_t end = std::min(parts[p].size(), first + kSharedPathsPiece);
          for (size_t i = first; i < end; ++i) (void)reader.path(parts[p][i]);
        },
        hits >= kSharedPathsStart ? util::HelperNeed::kStart : util::HelperNeed::kIfPolling);
  }
  struct Head {
    std::string_view path;
    size_t part;
    size_t pos;
  };
  auto later = [](const Head& a, const Head& b) { return a.path > b.path; };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heap(later);
  for (size_t p = 0; p < parts.size(); ++p) heap.push({path_of(p, 0), p, 0});
  while (!heap.empty() && out->size() < most) {
    Head h = heap.top();
    heap.pop();
    out->push_back(segments_[part_segment[h.part]].first_id + parts[h.part][h.pos]);
    if (h.pos + 1 < parts[h.part].size())
      heap.push({path_of(h.part, h.pos + 1), h.part, h.pos + 1});
  }
}

void IndexSet::MergeByOrder(size_t index, const std::vector<std::vector<uint32_t>>& parts,
                            const std::vector<size_t>& part_position, uint64_t limit,
                            std::vector<uint32_t>* out) const {
  const uint64_t most = limit == 0 ? UINT64_MAX : limit;
  if (out->size() >= most) return;
  const Index& in = indexes_[index];
  std::vector<SpineOrder::Hits> hits(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    const size_t position = part_position[p];
    hits[p] = SpineOrder::Hits{position, parts[p].data(), parts[p].size(),
                               segments_[in.segments[position]].first_id};
  }
  PathOrder(index).Merge(hits, most - out->size(), out);
}

const SpineOrder& IndexSet::PathOrder(size_t index) const {
  std::call_once(order_once_, [this] {
    for (const Index& index : indexes_) {
      std::vector<uint32_t> counts;
      for (size_t si : index.segments) counts.push_back(segments_[si].reader->doc_count());
      SpineOrder order(counts);
      if (counts.empty()) {
        orders_.push_back(std::move(order));
        continue;
      }
      const size_t spine = order.spine();
      const format::SegmentReader& spine_reader = *segments_[index.segments[spine]].reader;
      // The documents outside the spine, in path order: a k-way merge of their segments.
      struct Cursor {
        std::string_view path;
        size_t position;  // in index.segments
        uint32_t local;
      };
      auto after = [](const Cursor& a, const Cursor& b) { return a.path > b.path; };
      std::priority_queue<Cursor, std::vector<Cursor>, decltype(after)> heap(after);
      for (size_t i = 0; i < index.segments.size(); ++i) {
        if (i != spine && counts[i] > 0)
          heap.push({segments_[index.segments[i]].reader->path(0), i, 0});
      }
      // How many spine documents sort before each: found by galloping from the last one's
      // answer (util::GallopPast), so that an update's M documents read about M log(N / M) of
      // the spine's N paths, not all of them.
      uint32_t before = 0;
      auto spine_before = [&](std::string_view path) {
        return static_cast<uint32_t>(util::GallopPast(before, counts[spine], [&](size_t i) {
          return spine_reader.path(static_cast<uint32_t>(i)) < path;
        }));
      };
      while (!heap.empty()) {
        const Cursor c = heap.top();
        heap.pop();
        before = spine_before(c.path);
        order.Next(c.position, c.local, before);
        if (c.local + 1 < counts[c.position]) {
          const format::SegmentReader& r = *segments_[index.segments[c.position]].reader;
          heap.push({r.path(c.local + 1), c.position, c.local + 1});
        }
      }
      orders_.push_back(std::move(order));
    }
    order_ready_.store(true, std::memory_order_release);
  });
  return orders_[index];
}

void IndexSet::Check() const {
  for (const Segment& s : segments_) CheckIndex(*s.reader);
  for (const Index& index : indexes_) {
    std::vector<std::string_view> live;
    for (size_t si : index.segments) {
      const Segment& s = segments_[si];
      for (uint32_t d = 0; d < s.reader->doc_count(); ++d) {
        if (!s.is_deleted(d)) live.push_back(s.reader->path(d));
      }
    }
    std::sort(live.begin(), live.end());
    for (size_t i = 1; i < live.size(); ++i) {
      if (live[i - 1] == live[i]) [[unlikely]]
        throw Error(ErrorKind::kCorrupt,
                    index.dir + ": '" + std::string(live[i]) + "' is live in two segments");
    }
  }
}

}  // namespace bitsift::query
