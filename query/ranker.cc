#include "query/ranker.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iterator>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include "format/forward_store.h"
#include "format/rank_bounds.h"
#include "util/error.h"

namespace bitsift::query {
namespace {

using Kind = QueryNode::Kind;

void CollectParts(const QueryNode& n, std::vector<ScoringPart>* parts,
                  std::vector<std::string>* seen) {
  if (n.kind == Kind::kAnd || n.kind == Kind::kOr) {
    for (const QueryNode& c : n.children) CollectParts(c, parts, seen);
    return;
  }
  std::string key = n.ToString();
  auto at = std::find(seen->begin(), seen->end(), key);
  if (at != seen->end()) {
    ++(*parts)[static_cast<size_t>(at - seen->begin())].repeats;
    return;
  }
  seen->push_back(std::move(key));
  parts->push_back({&n, 1});
}

// A part's exact answer over the whole set: sorted global ids.
std::vector<uint32_t> PartAnswer(const IndexSet& set, const QueryNode& part,
                                 const IndexSet::SegmentText& text, bool parallel,
                                 SetQueryStats* stats) {
  std::vector<uint32_t> ids = set.Evaluate(part, 0, text, parallel, stats);
  if (!std::is_sorted(ids.begin(), ids.end())) std::sort(ids.begin(), ids.end());
  return ids;
}

bool Holds(const std::vector<uint32_t>& sorted, uint32_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

// A query's term parts in one segment: their ids there, ascending and distinct (want); for each
// part the index of its id in want (-1: not a term, or absent from the segment), and the id
// itself (found).
struct SegmentTerms {
  std::vector<uint32_t> want;
  std::vector<int> slot;
  std::vector<std::optional<uint32_t>> found;
};

std::vector<SegmentTerms> SegmentTermsOf(const IndexSet& set,
                                         const std::vector<ScoringPart>& parts) {
  std::vector<SegmentTerms> out(set.segments().size());
  for (size_t g = 0; g < set.segments().size(); ++g) {
    SegmentTerms& t = out[g];
    t.found.resize(parts.size());
    for (size_t p = 0; p < parts.size(); ++p) {
      if (parts[p].node->kind != Kind::kTerm) continue;
      t.found[p] = set.segments()[g].reader->dictionary().Find(parts[p].node->terms[0]);
      if (t.found[p]) t.want.push_back(*t.found[p]);
    }
    std::sort(t.want.begin(), t.want.end());
    t.want.erase(std::unique(t.want.begin(), t.want.end()), t.want.end());
    t.slot.assign(parts.size(), -1);
    for (size_t p = 0; p < parts.size(); ++p) {
      if (t.found[p]) {
        t.slot[p] = static_cast<int>(std::lower_bound(t.want.begin(), t.want.end(), *t.found[p]) -
                                     t.want.begin());
      }
    }
  }
  return out;
}

// BM25's part score at frequency f for a document whose length normalization is `norm`
// (k1 (1 - b + b len / avglen)), `weight` = repeats x idf.
inline double PartScore(double weight, double f, double norm, const Bm25& params) {
  return weight * f * (params.k1 + 1) / (f + norm);
}

// BM25's length normalization k1 (1 - b + b len / avglen) at the floor of each length code
// (format/rank_bounds.h).
void LengthCodeNorms(const Bm25& params, double avg_length, double norm[256]) {
  for (int c = 0; c < 256; ++c) {
    norm[c] = params.k1 *
              (1 - params.b + params.b * format::LengthFloor(static_cast<uint8_t>(c)) / avg_length);
  }
}

// Reads documents' counts for scoring: the frequencies of a query's terms (SegmentTermsOf) and
// the length normalization, from each document's forward record.
class CountReader {
 public:
  CountReader(const IndexSet& set, const std::vector<SegmentTerms>& terms, double avg_length,
              const Bm25& params)
      : set_(set), terms_(terms), avg_length_(avg_length), params_(params) {}
  // Reads document `id`'s counts: returns its segment's terms (tf(slot) then gives the count of
  // the term at that slot of `want`) and sets *norm to its length normalization.
  const SegmentTerms& Read(uint32_t id, double* norm) {
    const IndexSet::Segment& s = set_.SegmentOf(id);
    const SegmentTerms& t = terms_[static_cast<size_t>(&s - set_.segments().data())];
    uint32_t length = 0;
    tf_.assign(t.want.size(), 0);
    s.reader->TermCounts(id - s.first_id, t.want.data(), t.want.size(), tf_.data(), &length);
    *norm = params_.k1 * (1 - params_.b + params_.b * static_cast<double>(length) / avg_length_);
    return t;
  }
  uint32_t tf(int slot) const { return tf_[static_cast<size_t>(slot)]; }

 private:
  const IndexSet& set_;
  const std::vector<SegmentTerms>& terms_;
  double avg_length_;
  Bm25 params_;
  std::vector<uint32_t> tf_;
};

// Documents whose counts are loaded ahead of the one being scored, and how much of each record.
constexpr std::ptrdiff_t kScoreAhead = 8;
constexpr uint64_t kScorePrefetchBytes = 1024;

// Hints that document `id`'s counts will be read soon (CountReader).
void PrefetchCounts(const IndexSet& set, uint32_t id) {
  const IndexSet::Segment& s = set.SegmentOf(id);
  s.reader->PrefetchRecord(id - s.first_id, kScorePrefetchBytes);
}

// Offers `x` to `heap`: the best k so far by `better`, the worst on top.
template <typename T, typename Better>
void Offer(std::vector<T>& heap, uint64_t k, const T& x, const Better& better) {
  if (heap.size() < k) {
    heap.push_back(x);
    std::push_heap(heap.begin(), heap.end(), better);
  } else if (better(x, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), better);
    heap.back() = x;
    std::push_heap(heap.begin(), heap.end(), better);
  }
}

// Rounds of at least this many candidates are scored on every thread (ScoreInBoundOrder's
// `parallel`), a wave of kScoreWave at a time.
constexpr std::ptrdiff_t kParallelScore = 4096;
constexpr std::ptrdiff_t kScoreWave = 1024;

// Calls score(key) for the candidates (bound, key) in decreasing bound until a bound falls below
// threshold() (the k-th best score so far; below every score while fewer than k are held):
// then no candidate left can enter the top k, nor tie into it (equal bounds are still scored).
// The next 8k highest bounds are found in linear time (nth_element) and sorted; the rest are cut
// to those whose bound reaches the threshold, and so on with 16k, 32k, ...: most bounds are
// never sorted.
// prefetch(key) hints that key will be scored soon.
// With `parallel`, a round of many candidates is scored in waves of kScoreWave on every
// thread, so score and threshold must be safe to call from several threads at once; a
// candidate whose bound is below the final threshold may then be scored too, which changes
// nothing: the first k of a total order do not depend on which others were looked at.
template <typename Threshold, typename Score, typename Prefetch>
void ScoreInBoundOrder(std::vector<std::pair<double, uint32_t>>& candidates, uint64_t k,
                       const Threshold& threshold, const Score& score, const Prefetch& prefetch,
                       bool parallel = false) {
  using It = std::vector<std::pair<double, uint32_t>>::iterator;
  auto higher = [](const std::pair<double, uint32_t>& a, const std::pair<double, uint32_t>& b) {
    return a.first > b.first;
  };
  auto below = [&](It it) { return it->first * (1 + 1e-9) < threshold(); };
  // Scores [it, end) in order until a bound is below the threshold; false if one was.
  auto run = [&](It it, It end) {
    for (; it != end; ++it) {
      if (below(it)) return false;
      if (end - it > kScoreAhead) prefetch((it + kScoreAhead)->second);
      score(it->second);
    }
    return true;
  };
  It from = candidates.begin(), end = candidates.end();
  // Each round takes twice the last one's (many equal bounds above the threshold would
  // otherwise cost a selection over all that remain per 8k scored).
  uint64_t take = 8 * k;
  for (; from != end; take *= 2) {
    const It head = from + static_cast<std::ptrdiff_t>(
                               std::min<uint64_t>(static_cast<uint64_t>(end - from), take));
    std::nth_element(from, head, end, higher);
    if (parallel && head - from >= kParallelScore) {
      tbb::parallel_sort(from, head, higher);
      for (It wave = from; wave != head;) {
        const It wave_end = head - wave > kScoreWave ? wave + kScoreWave : head;
        if (below(wave)) return;
        tbb::parallel_for(tbb::blocked_range<std::ptrdiff_t>(0, wave_end - wave, 64),
                          [&](const tbb::blocked_range<std::ptrdiff_t>& r) {
                            run(wave + r.begin(), wave + r.end());
                          });
        wave = wave_end;
      }
    } else {
      std::sort(from, head, higher);
      if (!run(from, head)) return;
    }
    const double at_least = threshold();
    end = std::partition(head, end, [&](const std::pair<double, uint32_t>& c) {
      return c.first * (1 + 1e-9) >= at_least;
    });
    from = head;
  }
}

// Whether `ranked` is a term, prefix or phrase, or an OR of them, with nothing excluded: its
// answer is the union of its parts' answers.
bool OrOfLeaves(const QueryNode& ranked) {
  auto leaf = [](const QueryNode& n) { return n.kind != Kind::kAnd && n.kind != Kind::kOr; };
  if (!ranked.excluded.empty()) return false;
  if (ranked.kind != Kind::kOr) return leaf(ranked);
  return std::all_of(ranked.children.begin(), ranked.children.end(), leaf);
}

// Whether the top k of `query` with `any` can be found by MaxScore over its terms alone
// (TopTermsByMaxScore): every part is a term operand of the top-level OR, nothing is excluded,
// every index is one segment without deleted documents (so a term's document frequency is the
// dictionaries' and global ids ascend in path order), and no scope narrows the documents.
bool TermsOnly(const IndexSet& set, const QueryNode& ranked, const std::vector<IndexScope>* scope) {
  if (scope != nullptr || !ranked.excluded.empty()) return false;
  if (ranked.kind == Kind::kOr) {
    for (const QueryNode& c : ranked.children) {
      if (c.kind != Kind::kTerm) return false;
    }
  } else if (ranked.kind != Kind::kTerm) {
    return false;
  }
  for (const IndexSet::Index& index : set.indexes()) {
    if (index.segments.size() > 1) return false;
  }
  for (const IndexSet::Segment& s : set.segments()) {
    if (!s.deleted.empty()) return false;
  }
  return true;
}

// The top k (k > 0) of an `any` query that TermsOnly accepts, best first, ties in path order
// (ascending global id), by MaxScore (Turtle and Flood) after the champions: every part's
// champions (RANK_BOUNDS) are scored first; any other document's contribution from a part is
// then at most W = repeats idf x its rest bound (k1 + 1 for a term without champions). The
// parts are taken in decreasing W; part j's answer is read only while the sum of W over parts
// j.. can still reach the k-th best score, since a document none of parts 0..j-1 holds scores
// at most that sum. A document first met in part j's answer holds none of the parts before it;
// its bound adds, for each part from j on, the smaller of W and the part's score at its block
// maximum and the document's length floor (0 where the block holds the term nowhere).
// Documents are scored in decreasing bound as TopByBound does.
// `global_df`, if not null, gives each part's df (Rank's `global`) instead of the set's.
std::vector<RankedHit> TopTermsByMaxScore(const IndexSet& set,
                                          const std::vector<ScoringPart>& parts, uint64_t k,
                                          double n, double avg_length, const Bm25& params,
                                          bool parallel, SetQueryStats* stats,
                                          const std::vector<uint64_t>* global_df) {
  const std::vector<SegmentTerms> segment_terms = SegmentTermsOf(set, parts);
  const size_t m = parts.size();
  std::vector<double> weight(m), most(m);
  std::vector<uint64_t> part_df(m);
  for (size_t p = 0; p < m; ++p) {
    uint64_t df = 0;
    for (size_t g = 0; g < set.segments().size(); ++g) {
      const std::optional<uint32_t>& id = segment_terms[g].found[p];
      if (id) df += set.segments()[g].reader->dictionary().Df(*id);
    }
    part_df[p] = df;  // (this set's: what a part's answer here costs)
    if (global_df != nullptr) df = (*global_df)[p];  // the whole collection's (CollectionStats)
    const double d = static_cast<double>(df);
    weight[p] = parts[p].repeats * std::max(1e-6, std::log((n - d + 0.5) / (d + 0.5)));
    most[p] = weight[p] * (params.k1 + 1);
  }
  double norm[256];
  LengthCodeNorms(params, avg_length, norm);
  // bound_slot[g * m + p]: part p's slot among segment g's bounded terms, kOpen for a term
  // without block maxima, kAbsent for a term the segment lacks.
  constexpr int64_t kOpen = -1, kAbsent = -2;
  const size_t segments = set.segments().size();
  std::vector<int64_t> bound_slot(segments * m, kAbsent);
  std::vector<const format::RankBoundsView*> views(segments, nullptr);
  // scale[g]: max(1, avg_length / segment g's champion average): a term weight here is at most
  // this times its weight at that average (format/rank_bounds.h).
  std::vector<double> scale(segments, 1);
  auto view_of = [&](size_t g) {
    if (views[g] == nullptr) {
      views[g] = &set.segments()[g].reader->RankBounds();
      scale[g] = std::max(1.0, avg_length / views[g]->a0());
      for (size_t p = 0; p < m; ++p) {
        const std::optional<uint32_t>& id = segment_terms[g].found[p];
        if (!id) continue;
        const int64_t slot = views[g]->Slot(*id);
        bound_slot[g * m + p] = slot >= 0 ? slot : kOpen;
      }
    }
    return views[g];
  };
  // A bounded term's champions are scored first (below); past them its contribution is at
  // most its rest bound, weight x scale x rest. rest_most[p]: part p's largest contribution
  // from a document that is not one of its champions, over the segments. The champions are
  // chosen under the format's BM25 parameters only.
  const bool champions = params.k1 == format::kBm25K1 && params.b == format::kBm25B;
  std::vector<double> rest_most(m, 0);
  for (size_t g = 0; g < segments; ++g) {
    const format::RankBoundsView* view = view_of(g);
    for (size_t p = 0; p < m; ++p) {
      const int64_t slot = bound_slot[g * m + p];
      if (slot == kAbsent) continue;
      rest_most[p] = std::max(rest_most[p],
                              slot >= 0 && champions
                                  ? weight[p] * scale[g] * view->rest(static_cast<uint64_t>(slot))
                                  : most[p]);
    }
  }
  std::vector<size_t> ord(m);
  for (size_t i = 0; i < m; ++i) ord[i] = i;
  std::stable_sort(ord.begin(), ord.end(),
                   [&](size_t a, size_t b) { return rest_most[a] > rest_most[b]; });
  std::vector<double> suffix(m + 1, 0);
  for (size_t j = m; j-- > 0;) suffix[j] = suffix[j + 1] + rest_most[ord[j]];

  struct Entry {
    double score;
    uint32_t id;
  };
  auto better = [](const Entry& a, const Entry& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.id < b.id;
  };
  std::vector<Entry> heap;  // the best k so far, the worst on top
  // The k-th best score once k are held, else -1: read by every scoring thread, written under
  // heap_lock with the heap.
  std::atomic<double> kth_score{-1.0};
  std::mutex heap_lock;
  auto kth = [&] { return kth_score.load(std::memory_order_relaxed); };
  auto offer = [&](const Entry& e) {
    if (e.score < kth()) return;  // (equal scores may still enter by their id)
    std::lock_guard<std::mutex> hold(heap_lock);
    Offer(heap, k, e, better);
    if (heap.size() == k) kth_score.store(heap.front().score, std::memory_order_relaxed);
  };
  tbb::enumerable_thread_specific<CountReader> readers(
      [&] { return CountReader(set, segment_terms, avg_length, params); });
  auto score_of = [&](uint32_t id) {
    double doc_norm = 0;
    CountReader& counts = readers.local();
    const SegmentTerms& t = counts.Read(id, &doc_norm);
    double score = 0;
    for (size_t p = 0; p < m; ++p) {
      if (t.slot[p] < 0) continue;
      const uint32_t f = counts.tf(t.slot[p]);
      if (f > 0) score += PartScore(weight[p], f, doc_norm, params);
    }
    return score;
  };

  std::vector<uint64_t> seen((set.id_count() + 63) / 64, 0);
  auto first_sight = [&](uint32_t id) {
    uint64_t& word = seen[id / 64];
    const uint64_t bit = uint64_t{1} << (id % 64);
    if (word & bit) return false;
    word |= bit;
    return true;
  };
  // The champions of every part, scored: the k-th score starts near its final value.
  for (size_t g = 0; champions && g < segments; ++g) {
    const format::RankBoundsView* view = view_of(g);
    const uint32_t first = set.segments()[g].first_id;
    for (size_t p = 0; p < m; ++p) {
      const int64_t slot = bound_slot[g * m + p];
      if (slot < 0) continue;
      for (uint64_t i = 0; i < format::kChampions; ++i) {
        const uint32_t local = view->champion(static_cast<uint64_t>(slot), i);
        if (local == format::kNoChampion) break;
        if (first_sight(first + local)) offer(Entry{score_of(first + local), first + local});
      }
    }
  }
  // Whether a document holds a later part, so that its bound leaves out the parts it lacks:
  // for a term with a document list in every segment (its answer costs ~7 ns an id), a bitmap
  // of its answer; for an exact term in under a quarter of the documents, one bit of its exact
  // row (HasExactTerm); otherwise none, and its block maximum bounds it. Tested only for
  // documents whose bound without them reaches the k-th score.
  enum class Test : uint8_t { kNone, kBitmap, kExactBit };
  std::vector<Test> test(m, Test::kNone);
  for (size_t p = 0; p < m; ++p) {
    bool lists = true, exact = true;
    for (size_t g = 0; g < segments; ++g) {
      const std::optional<uint32_t>& id = segment_terms[g].found[p];
      if (!id) continue;
      lists = lists && set.segments()[g].reader->HasList(*id);
      exact = exact && *id < set.segments()[g].reader->exact_terms();
    }
    test[p] = lists                                      ? Test::kBitmap
              : exact && part_df[p] * 4 < set.id_count() ? Test::kExactBit
                                                         : Test::kNone;
  }
  std::vector<std::optional<std::vector<uint32_t>>> answers(m);
  auto answer_of = [&](size_t p) -> const std::vector<uint32_t>& {
    if (!answers[p])
      answers[p] = set.Search({parts[p].node->terms[0]}, 0, stats, nullptr, parallel);
    return *answers[p];
  };
  std::vector<std::vector<uint64_t>> member(m);  // Test::kBitmap's, made on first use
  auto holds = [&](size_t p, size_t g, uint32_t id, uint32_t local) {
    switch (test[p]) {
      case Test::kBitmap:
        if (member[p].empty()) {
          member[p].assign(set.id_count() / 64 + 1, 0);
          for (uint32_t d : answer_of(p)) member[p][d / 64] |= uint64_t{1} << (d % 64);
        }
        return ((member[p][id / 64] >> (id % 64)) & 1) != 0;
      case Test::kExactBit:
        return set.segments()[g].reader->HasExactTerm(local, *segment_terms[g].found[p]);
      case Test::kNone:
        break;
    }
    return true;
  };
  std::vector<std::pair<double, uint32_t>> candidates;  // (bound, id)
  std::vector<double> later(m);  // a document's bound of each part, from ord[j] on
  for (size_t j = 0; j < m; ++j) {
    if (heap.size() == k && suffix[j] * (1 + 1e-9) < kth()) break;
    const size_t p = ord[j];
    const std::vector<uint32_t>& answer = answer_of(p);
    candidates.clear();
    size_t g = segments;
    uint32_t first = 0, end_id = 0;
    const format::RankBoundsView* view = nullptr;
    for (uint32_t id : answer) {
      if (!first_sight(id)) continue;
      if (id < first || id >= end_id) {
        const IndexSet::Segment& s = set.SegmentOf(id);
        g = static_cast<size_t>(&s - set.segments().data());
        first = s.first_id;
        end_id = s.first_id + static_cast<uint32_t>(s.reader->doc_count());
        view = view_of(g);
      }
      const uint32_t local = id - first;
      const double doc_norm = norm[view->length_code(local)];
      double bound = 0;
      for (size_t i = j; i < m; ++i) {
        const size_t q = ord[i];
        const int64_t slot = bound_slot[g * m + q];
        later[i] = 0;
        if (slot == kAbsent) continue;
        if (slot == kOpen) {
          bound += later[i] = most[q];
          continue;
        }
        const uint8_t f = view->tf_max(static_cast<uint64_t>(slot), local);
        if (f == 0 && i > j) continue;  // no document of the block holds it
        const double by_block =
            f == 0 || f == format::kTfMaxOpen ? most[q] : PartScore(weight[q], f, doc_norm, params);
        // Not a champion (they were all scored): at most the rest bound.
        bound += later[i] =
            champions
                ? std::min(by_block, weight[q] * scale[g] * view->rest(static_cast<uint64_t>(slot)))
                : by_block;
      }
      // A bound below the k-th score now is never scored; one above it drops the later parts
      // the document lacks.
      if (bound * (1 + 1e-9) < kth()) continue;
      for (size_t i = j + 1; i < m && bound * (1 + 1e-9) >= kth(); ++i) {
        if (later[i] > 0 && !holds(ord[i], g, id, local)) bound -= later[i];
      }
      if (bound * (1 + 1e-9) >= kth()) candidates.emplace_back(bound, id);
    }
    ScoreInBoundOrder(
        candidates, k, kth,
        [&](uint32_t id) {
          offer(Entry{score_of(id), id});
        },
        [&](uint32_t id) { PrefetchCounts(set, id); }, parallel);
    // Part p is no later part of any part to come: its answer and bitmap are done with.
    answers[p].reset();
    std::vector<uint64_t>().swap(member[p]);
  }
  std::sort(heap.begin(), heap.end(), better);
  std::vector<RankedHit> out;
  out.reserve(heap.size());
  for (const Entry& e : heap) out.push_back({e.id, e.score});
  return out;
}

// The best k positions of `matched` (0 < k < its size), best first by `better`, scoring with
// `score_of` (into scores[position]) only the documents that could enter the top k. A
// document's bound is the sum, over the parts it holds, of the part's score at the largest
// frequency the part can have there (its block maximum, RANK_BOUNDS, or none: k1 + 1 for the
// term's idf; 1 for a phrase or prefix, which counts once) and the floor of its length.
// Documents are scored in decreasing bound; once the bound falls below the k-th best score, no
// document left can enter the top k (nor tie into it: equal bounds are still scored), and none
// of their records is read. Most documents' bounds are never sorted: the 8k highest are found
// in linear time and scored, then the next 8k of those whose bound still reaches the k-th
// score, and so on.
template <typename Better, typename ScoreOf>
std::vector<uint32_t> TopByBound(const IndexSet& set, const std::vector<ScoringPart>& parts,
                                 const std::vector<std::vector<uint32_t>>& answers,
                                 const std::vector<double>& idf,
                                 const std::vector<uint32_t>& matched, uint64_t k,
                                 double avg_length, const Bm25& params, std::vector<double>& scores,
                                 const Better& better, const ScoreOf& score_of) {
  // (id, position in matched), by id.
  std::vector<std::pair<uint32_t, uint32_t>> by_id(matched.size());
  for (uint32_t i = 0; i < matched.size(); ++i) by_id[i] = {matched[i], i};
  if (!std::is_sorted(matched.begin(), matched.end())) std::sort(by_id.begin(), by_id.end());
  double norm[256];
  LengthCodeNorms(params, avg_length, norm);
  // slot_of[g * parts + p]: part p's slot among segment g's bounded terms; kOpen: none (a term
  // without block maxima); kOnce: not a term; kUnknown: not looked up yet.
  constexpr int64_t kOpen = -1, kOnce = -2, kUnknown = -3;
  const size_t segments = set.segments().size();
  std::vector<int64_t> slot_of(segments * parts.size(), kUnknown);
  std::vector<double> bound(matched.size(), 0);
  for (size_t p = 0; p < parts.size(); ++p) {
    const double weight = parts[p].repeats * idf[p];
    const bool gallop = answers[p].size() * 16 < by_id.size();
    auto at = by_id.begin();
    size_t g = segments;
    uint32_t first = 0, end_id = 0;
    const format::RankBoundsView* view = nullptr;
    int64_t slot = kOpen;
    for (uint32_t id : answers[p]) {
      if (gallop) {
        at = std::lower_bound(at, by_id.end(), std::make_pair(id, uint32_t{0}));
      } else {
        while (at != by_id.end() && at->first < id) ++at;
      }
      if (at == by_id.end()) break;
      if (at->first != id) continue;
      if (id < first || id >= end_id) {
        const IndexSet::Segment& s = set.SegmentOf(id);
        g = static_cast<size_t>(&s - set.segments().data());
        first = s.first_id;
        end_id = s.first_id + static_cast<uint32_t>(s.reader->doc_count());
        view = &s.reader->RankBounds();
        int64_t& known = slot_of[g * parts.size() + p];
        if (known == kUnknown) {
          known = kOnce;
          if (parts[p].node->kind == Kind::kTerm) {
            const std::optional<uint32_t> term =
                s.reader->dictionary().Find(parts[p].node->terms[0]);
            known = term ? view->Slot(*term) : kOpen;
            if (known < 0) known = kOpen;
          }
        }
        slot = known;
      }
      const uint32_t local = id - first;
      double most = weight * (params.k1 + 1);
      const double f = slot == kOnce ? 1 : slot >= 0 ? view->tf_max(slot, local) : 0;
      // (0 for a holder would be a damaged section: then no bound but k1 + 1.)
      if (f > 0 && f < format::kTfMaxOpen) most = most * f / (f + norm[view->length_code(local)]);
      bound[at->second] += most;
    }
  }
  // (bound, position), the highest bounds first after the selection below.
  std::vector<std::pair<double, uint32_t>> by_bound(matched.size());
  for (uint32_t i = 0; i < by_bound.size(); ++i) by_bound[i] = {bound[i], i};
  std::vector<double>().swap(bound);
  // order: a heap of the best k so far, the worst on top.
  std::vector<uint32_t> order;
  ScoreInBoundOrder(
      by_bound, k, [&] { return order.size() == k ? scores[order.front()] : -1.0; },
      [&](uint32_t i) {
        scores[i] = score_of(matched[i]);
        Offer(order, k, i, better);
      },
      [&](uint32_t i) { PrefetchCounts(set, matched[i]); });
  std::sort(order.begin(), order.end(), better);
  return order;
}

}  // namespace

std::vector<ScoringPart> ScoringParts(const QueryNode& query) {
  std::vector<ScoringPart> parts;
  std::vector<std::string> seen;
  CollectParts(query, &parts, &seen);
  return parts;
}

QueryNode AnyOf(const QueryNode& query) {
  if (query.kind != Kind::kAnd || query.children.size() < 2) return query;
  QueryNode either;
  either.kind = Kind::kOr;
  either.position = query.position;
  for (const QueryNode& c : query.children) {
    if (c.kind == Kind::kOr) {
      either.children.insert(either.children.end(), c.children.begin(), c.children.end());
    } else {
      either.children.push_back(c);
    }
  }
  if (query.excluded.empty()) return either;
  QueryNode out;
  out.kind = Kind::kAnd;
  out.position = query.position;
  out.children.push_back(std::move(either));
  out.excluded = query.excluded;
  return out;
}

void CollectionStats::Add(const CollectionStats& other) {
  documents += other.documents;
  length += other.length;
  if (part_documents.size() < other.part_documents.size()) {
    part_documents.resize(other.part_documents.size(), 0);
  }
  for (size_t p = 0; p < other.part_documents.size(); ++p) {
    part_documents[p] += other.part_documents[p];
  }
}

CollectionStats CollectionStatsOf(const IndexSet& set, const QueryNode& query,
                                  const IndexSet::SegmentText& text, bool parallel,
                                  SetQueryStats* stats) {
  CollectionStats out;
  out.documents = set.live_documents();
  out.length = out.documents > 0 ? set.live_length() : 0;
  for (const ScoringPart& part : ScoringParts(query)) {
    out.part_documents.push_back(PartAnswer(set, *part.node, text, parallel, stats).size());
  }
  return out;
}

std::vector<RankedHit> Rank(const IndexSet& set, const QueryNode& query, bool any, uint64_t k,
                            const IndexSet::SegmentText& text, bool parallel, SetQueryStats* stats,
                            const std::vector<IndexScope>* scope, std::vector<uint32_t>* unreadable,
                            const Bm25& params, const CollectionStats* global) {
  const std::vector<ScoringPart> parts = ScoringParts(query);
  Ensure(global == nullptr || global->part_documents.size() == parts.size(),
         ErrorKind::kInvalidArgument,
         "ranking statistics for " + std::to_string(global ? global->part_documents.size() : 0) +
             " query parts, but the query has " + std::to_string(parts.size()));
  const double n = static_cast<double>(global ? global->documents : set.live_documents());
  const double total_length = static_cast<double>(global  ? global->length
                                                  : n > 0 ? set.live_length()
                                                          : 0);
  const double avg_length = n > 0 ? std::max(1.0, total_length / n) : 1.0;
  if (any && k > 0 && TermsOnly(set, AnyOf(query), scope)) {
    return TopTermsByMaxScore(set, parts, k, n, avg_length, params, parallel, stats,
                              global ? &global->part_documents : nullptr);
  }
  // Each part's exact answer over the whole set (sorted global ids) and its idf.
  std::vector<std::vector<uint32_t>> answers(parts.size());
  std::vector<double> idf(parts.size());
  SetQueryStats part_stats;
  bool phrases = false;
  for (size_t p = 0; p < parts.size(); ++p) {
    phrases = phrases || parts[p].node->kind == Kind::kPhrase;
    answers[p] = PartAnswer(set, *parts[p].node, text, parallel, &part_stats);
    const double df = static_cast<double>(global ? global->part_documents[p] : answers[p].size());
    idf[p] = std::max(1e-6, std::log((n - df + 0.5) / (df + 0.5)));
  }
  // Global ids ascend in path order when every index is one segment: then `matched` (below)
  // may be sorted by id, and a position in it is a position in path order.
  bool ids_in_path_order = true;
  for (const IndexSet::Index& index : set.indexes())
    ids_in_path_order = ids_in_path_order && index.segments.size() <= 1;

  // The documents ranked: the query's exact answer (or its parts', with `any`) in the scope,
  // in path order. With `any` over the whole set, and no exclusion or phrase (whose texts
  // could be unreadable), it is the union of the parts' answers.
  const QueryNode ranked = any ? AnyOf(query) : query;
  std::vector<uint32_t> matched;
  std::vector<std::string> plain;
  if (any && ids_in_path_order && scope == nullptr && !phrases && OrOfLeaves(ranked)) {
    for (const std::vector<uint32_t>& a : answers) {
      std::vector<uint32_t> both;
      both.reserve(matched.size() + a.size());
      std::set_union(matched.begin(), matched.end(), a.begin(), a.end(), std::back_inserter(both));
      matched.swap(both);
    }
  } else if (IsPlainConjunction(ranked, &plain)) {
    matched = set.Search(plain, 0, stats, scope, parallel);
  } else {
    matched = set.Evaluate(ranked, 0, text, parallel, stats, scope, unreadable);
  }

  const std::vector<SegmentTerms> segment_terms = SegmentTermsOf(set, parts);

  // A document's exact score, from the counts of its forward record.
  CountReader counts(set, segment_terms, avg_length, params);
  auto score_of = [&](uint32_t id) {
    double norm = 0;
    const SegmentTerms& t = counts.Read(id, &norm);
    double score = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      // A term is held when the record counts it (the document is live); a phrase or prefix
      // when its answer holds the document.
      double f = 1;
      if (parts[p].node->kind == Kind::kTerm) {
        if (t.slot[p] < 0) continue;
        f = counts.tf(t.slot[p]);
        if (f == 0) continue;
      } else if (!Holds(answers[p], id)) {
        continue;
      }
      score += parts[p].repeats * idf[p] * f * (params.k1 + 1) / (f + norm);
    }
    return score;
  };
  // Best first; ties in path order: position i of `matched` (path order within an index,
  // index by index) before position j > i.
  std::vector<double> scores(matched.size(), 0);
  auto better = [&](uint32_t a, uint32_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return a < b;
  };
  std::vector<uint32_t> order;
  if (k == 0 || k >= matched.size()) {
    for (uint32_t i = 0; i < matched.size(); ++i) {
      scores[i] = score_of(matched[i]);
      order.push_back(i);
    }
    std::sort(order.begin(), order.end(), better);
  } else {
    order = TopByBound(set, parts, answers, idf, matched, k, avg_length, params, scores, better,
                       score_of);
  }
  std::vector<RankedHit> out;
  out.reserve(order.size());
  for (uint32_t i : order) out.push_back({matched[i], scores[i]});
  if (stats != nullptr) {
    stats->prefix_terms += part_stats.prefix_terms;
    stats->phrase_candidates += part_stats.phrase_candidates;
    stats->text_bytes += part_stats.text_bytes;
    stats->phrase_us += part_stats.phrase_us;
  }
  return out;
}

}  // namespace bitsift::query
