#include "query/ranker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
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

// The best k positions of `matched` (0 < k < its size), best first by `better`, scoring with
// `score_of` (into scores[position]) only the documents that could enter the top k. A
// document's bound is the sum, over the parts it holds, of the part's score at the largest
// frequency the part can have there (its block maximum, RANK_BOUNDS, or none: k1 + 1 for the
// term's idf; 1 for a phrase or prefix, which counts once) and the floor of its length.
// Documents are scored in decreasing bound; once the bound falls below the k-th best score, no
// document left can enter the top k (nor tie into it: equal bounds are still scored), and none
// of their records is read. Most documents' bounds are never sorted: the 8k highest are found
// in linear time and scored first, and the rest are sorted only if their bound reaches the
// k-th score by then.
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
  for (int c = 0; c < 256; ++c) {
    norm[c] = params.k1 *
              (1 - params.b + params.b * format::LengthFloor(static_cast<uint8_t>(c)) / avg_length);
  }
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
  auto higher = [](const std::pair<double, uint32_t>& a, const std::pair<double, uint32_t>& b) {
    return a.first > b.first;
  };
  using It = std::vector<std::pair<double, uint32_t>>::iterator;
  // order: a heap of the best k so far, the worst on top.
  std::vector<uint32_t> order;
  auto score_in_turn = [&](It from, It to) {
    for (It it = from; it != to; ++it) {
      const uint32_t i = it->second;
      if (order.size() == k && it->first * (1 + 1e-9) < scores[order.front()]) return false;
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
    return true;
  };
  const It head =
      by_bound.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(by_bound.size(), 8 * k));
  std::nth_element(by_bound.begin(), head, by_bound.end(), higher);
  std::sort(by_bound.begin(), head, higher);
  if (score_in_turn(by_bound.begin(), head)) {
    const double kth = scores[order.front()];
    const It rest = std::partition(head, by_bound.end(), [&](const std::pair<double, uint32_t>& b) {
      return b.first * (1 + 1e-9) >= kth;
    });
    std::sort(head, rest, higher);
    score_in_turn(head, rest);
  }
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
  if (any && ids_in_path_order && scope == nullptr && !phrases && query.excluded.empty()) {
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

  // In each segment: the term parts' ids there, ascending and distinct (want), for each part
  // the index of its id in want (-1: not a term, or absent from the segment), and its slot
  // among the segment's bounded terms (format/rank_bounds.h; -1: none).
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
