#include "query/ranker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "format/forward_store.h"
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
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool Holds(const std::vector<uint32_t>& sorted, uint32_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
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

std::vector<RankedHit> Rank(const IndexSet& set, const QueryNode& query, bool any, uint64_t k,
                            const IndexSet::SegmentText& text, bool parallel, SetQueryStats* stats,
                            const std::vector<IndexScope>* scope, std::vector<uint32_t>* unreadable,
                            const Bm25& params) {
  // The documents ranked: the query's exact answer (or its parts', with `any`) in the scope.
  const QueryNode ranked = any ? AnyOf(query) : query;
  std::vector<std::string> plain;
  std::vector<uint32_t> matched =
      IsPlainConjunction(ranked, &plain)
          ? set.Search(plain, 0, stats, scope, parallel)
          : set.Evaluate(ranked, 0, text, parallel, stats, scope, unreadable);

  // Collection statistics of the whole set.
  const std::vector<ScoringPart> parts = ScoringParts(query);
  const double n = static_cast<double>(set.live_documents());
  const double avg_length = n > 0 ? std::max(1.0, static_cast<double>(set.live_length()) / n) : 1.0;
  std::vector<std::vector<uint32_t>> answers(parts.size());
  std::vector<double> idf(parts.size());
  SetQueryStats part_stats;
  for (size_t p = 0; p < parts.size(); ++p) {
    answers[p] = PartAnswer(set, *parts[p].node, text, parallel, &part_stats);
    const double df = static_cast<double>(answers[p].size());
    idf[p] = std::max(1e-6, std::log((n - df + 0.5) / (df + 0.5)));
  }
  // In each segment: the term parts' ids there, ascending and distinct (want), and for each
  // part the index of its id in want (-1: not a term, or absent from the segment).
  struct SegmentTerms {
    std::vector<uint32_t> want;
    std::vector<int> slot;
  };
  std::vector<SegmentTerms> segment_terms(set.segments().size());
  for (size_t g = 0; g < set.segments().size(); ++g) {
    SegmentTerms& t = segment_terms[g];
    std::vector<std::optional<uint32_t>> found(parts.size());
    for (size_t p = 0; p < parts.size(); ++p) {
      if (parts[p].node->kind != Kind::kTerm) continue;
      found[p] = set.segments()[g].reader->dictionary().Find(parts[p].node->terms[0]);
      if (found[p]) t.want.push_back(*found[p]);
    }
    std::sort(t.want.begin(), t.want.end());
    t.want.erase(std::unique(t.want.begin(), t.want.end()), t.want.end());
    t.slot.assign(parts.size(), -1);
    for (size_t p = 0; p < parts.size(); ++p) {
      if (found[p]) {
        t.slot[p] = static_cast<int>(std::lower_bound(t.want.begin(), t.want.end(), *found[p]) -
                                     t.want.begin());
      }
    }
  }

  // A document's exact score, from the counts of its forward record.
  std::vector<uint32_t> tf;
  auto score_of = [&](uint32_t id) {
    const IndexSet::Segment& s = set.SegmentOf(id);
    const SegmentTerms& t = segment_terms[static_cast<size_t>(&s - set.segments().data())];
    uint32_t length = 0;
    tf.assign(t.want.size(), 0);
    s.reader->TermCounts(id - s.first_id, t.want.data(), t.want.size(), tf.data(), &length);
    const double norm =
        params.k1 * (1 - params.b + params.b * static_cast<double>(length) / avg_length);
    double score = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      if (!Holds(answers[p], id)) continue;
      const double f =
          t.slot[p] >= 0 ? std::max<uint32_t>(tf[static_cast<size_t>(t.slot[p])], 1) : 1;
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
    // Top k with pruning: a document's score is below the sum of (k1 + 1) idf over the parts
    // it holds (tf (k1 + 1) / (tf + norm) < k1 + 1), a bound known from the parts' answers
    // alone. Documents are scored in decreasing bound; once the bound falls below the k-th
    // best score, no document left can enter the top k (or tie into it: equal bounds are
    // still scored), and none of their records is read.
    std::vector<std::pair<uint32_t, uint32_t>> by_id(matched.size());  // (id, position)
    for (uint32_t i = 0; i < matched.size(); ++i) by_id[i] = {matched[i], i};
    std::sort(by_id.begin(), by_id.end());
    std::vector<double> bound(matched.size(), 0);
    for (size_t p = 0; p < parts.size(); ++p) {
      const double most = parts[p].repeats * idf[p] * (params.k1 + 1);
      auto at = by_id.begin();
      for (uint32_t id : answers[p]) {
        at = std::lower_bound(at, by_id.end(), std::make_pair(id, uint32_t{0}));
        if (at == by_id.end()) break;
        if (at->first == id) bound[at->second] += most;
      }
    }
    std::vector<uint32_t> by_bound(matched.size());
    for (uint32_t i = 0; i < by_bound.size(); ++i) by_bound[i] = i;
    std::sort(by_bound.begin(), by_bound.end(),
              [&](uint32_t a, uint32_t b) { return bound[a] > bound[b]; });
    // order: a heap of the best k so far, the worst on top.
    for (uint32_t i : by_bound) {
      if (order.size() == k && bound[i] * (1 + 1e-9) < scores[order.front()]) break;
      scores[i] = score_of(matched[i]);
      if (order.size() < k) {
        order.push_back(i);
        std::push_heap(order.begin(), order.end(), better);
      } else if (better(i, order.front())) {
        std::pop_heap(order.begin(), order.end(), better);
        order.back() = i;
        std::push_heap(order.begin(), order.end(), better);
      }
    }
    std::sort(order.begin(), order.end(), better);
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
