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
  std::vector<uint32_t> ids = part.kind == Kind::kTerm
                                  ? set.Search(part.terms, 0, stats, nullptr, parallel)
                                  : set.Evaluate(part, 0, text, parallel, stats);
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
  // A term part's id in each segment (none where the segment lacks it).
  std::vector<std::vector<std::optional<uint32_t>>> term_ids(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    if (parts[p].node->kind != Kind::kTerm) continue;
    for (const IndexSet::Segment& s : set.segments()) {
      term_ids[p].push_back(s.reader->dictionary().Find(parts[p].node->terms[0]));
    }
  }

  std::vector<RankedHit> hits;
  hits.reserve(matched.size());
  std::vector<uint32_t> ids;
  format::ForwardCounts counts;
  for (uint32_t id : matched) {
    const IndexSet::Segment& s = set.SegmentOf(id);
    const size_t segment = static_cast<size_t>(&s - set.segments().data());
    ids = s.reader->DocumentTerms(id - s.first_id, &counts);
    const double norm =
        params.k1 * (1 - params.b + params.b * static_cast<double>(counts.length) / avg_length);
    double score = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      if (!Holds(answers[p], id)) continue;
      double tf = 1;
      if (parts[p].node->kind == Kind::kTerm && term_ids[p][segment]) {
        auto at = std::lower_bound(ids.begin(), ids.end(), *term_ids[p][segment]);
        if (at != ids.end() && *at == *term_ids[p][segment]) {
          tf = counts.TfAt(static_cast<size_t>(at - ids.begin()));
        }
      }
      score += parts[p].repeats * idf[p] * tf * (params.k1 + 1) / (tf + norm);
    }
    hits.push_back({id, score});
  }
  // Best first; ties in path order (the order of the matched ids, which come in path order
  // within an index and index by index).
  std::vector<uint32_t> order(matched.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  auto better = [&](uint32_t a, uint32_t b) {
    if (hits[a].score != hits[b].score) return hits[a].score > hits[b].score;
    return a < b;
  };
  if (k != 0 && k < order.size()) {
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      better);
    order.resize(k);
  } else {
    std::sort(order.begin(), order.end(), better);
  }
  std::vector<RankedHit> out;
  out.reserve(order.size());
  for (uint32_t i : order) out.push_back(hits[i]);
  if (stats != nullptr) {
    stats->prefix_terms += part_stats.prefix_terms;
    stats->phrase_candidates += part_stats.phrase_candidates;
    stats->text_bytes += part_stats.text_bytes;
    stats->phrase_us += part_stats.phrase_us;
  }
  return out;
}

}  // namespace bitsift::query
