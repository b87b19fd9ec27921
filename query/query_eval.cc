#include "query/query_eval.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>

#include "format/bloom.h"
#include "format/forward_store.h"
#include "query/query_matcher.h"
#include "tokenizer/stemmer.h"
#include "util/error.h"

namespace bitsift::query {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = QueryNode::Kind;

double MicrosSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// A prefix is expanded into row ANDs (one per term) while their row bytes stay below this
// many times the bytes of the forward store; beyond, scanning every forward record is cheaper
// (rows are ANDed at memory speed, records are decoded about ten times slower per byte).
constexpr uint64_t kRowBytesPerForwardByte = 10;

enum class Truth { kNo, kYes, kUnknown };

// A query node prepared against one segment.
struct Plan {
  const QueryNode* node = nullptr;
  Kind kind = Kind::kAnd;
  std::vector<std::string> exact_terms;  // kTerm: its term; kPhrase: its distinct exact tokens
  std::vector<uint32_t> exact_ids;       // their ids, ascending (when all are present)
  const std::vector<uint32_t>* prefix = nullptr;  // kPrefix / a phrase's last: its term ids
  bool impossible = false;  // an exact term no document has, or a prefix of no term
  bool needs_text = false;  // deciding it may need the document's text (a phrase inside)
  int pattern = -1;         // kPhrase: its QueryMatcher pattern
  // kPhrase of exact tokens only (no prefix, no stem term): the id of each token in order, to
  // decide it from the records' positions. joined[e] (e >= 1): token e must overlap token
  // e - 1 (bigrams of one CJK run, QueryNode::joined), so the document's token there must not
  // start a run (format::ForwardPositions::run_starts); empty if no token must.
  std::vector<uint32_t> sequence_ids;
  std::vector<uint32_t> sequence_set;   // the distinct ones, ascending
  std::vector<uint32_t> sequence_slot;  // token i's id is sequence_set[sequence_slot[i]]
  std::vector<bool> joined;
  // When every token is a pair term of the segment: the PairKey of each two consecutive ones
  // and the LoneFingerprint of each, which a record's pair filter refutes the phrase by
  // (format::ForwardRecordMayHavePairs).
  std::vector<uint64_t> pair_keys;
  std::vector<uint16_t> lone_keys;
  uint64_t estimate = 0;  // an upper bound of its matches (document frequencies)
  std::vector<Plan> children, excluded;
};

// What evaluation knows of one document, loaded as needed.
struct Doc {
  uint32_t id = 0;
  bool terms_loaded = false;
  std::vector<uint32_t> terms;  // its term ids, ascending
  enum { kNotRead, kRead, kUnreadable } text = kNotRead;
  QueryMatcher::Result found;
};

// What one thread needs to test documents: its own matcher (tokenizer and scratch) and
// counters, merged into the query's statistics at the end.
struct Worker {
  Worker(const QueryNode& query, const tokenizer::TokenRules& rules) : matcher(query, rules) {}
  QueryMatcher matcher;
  std::string text;                 // the text of the document being tested (its buffer reused)
  std::vector<uint32_t> at, begin;  // the positions of a phrase's terms in one document
  uint64_t phrase_candidates = 0, text_bytes = 0, unreadable = 0, phrase_positions = 0;
  uint64_t phrase_pairs = 0;
  double phrase_us = 0;
};

// Text tests of at least this many candidates run in parallel (when allowed); with a limit,
// in blocks of kParallelBlock candidates, so that little work is wasted past the limit.
constexpr size_t kParallelMin = 16;
constexpr size_t kParallelBlock = 256;
// Candidates whose forward records are loaded ahead of the one being decided, and how much of
// each record (for phrases: the positions at its end; longer records are rare).
constexpr size_t kPrefetchAhead = 8;
constexpr uint64_t kPrefetchBytes = 8192;

bool Sorted(const std::vector<uint32_t>& v, uint32_t x) {
  return std::binary_search(v.begin(), v.end(), x);
}

// Ascending union of two ascending lists.
std::vector<uint32_t> Union(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<uint32_t> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class Evaluator {
 public:
  Evaluator(const format::SegmentReader& index, const Searcher& searcher, const QueryNode& query,
            const EvalOptions& options, EvalStats* stats)
      : index_(index),
        searcher_(searcher),
        options_(options),
        stats_(stats),
        matcher_(query, options.rules),
        workers_([&query, &options] { return Worker(query, options.rules); }) {
    for (size_t p = 0; p < matcher_.pattern_count(); ++p) {
      phrase_patterns_.push_back(matcher_.is_phrase(p));
      if (matcher_.is_phrase(p)) has_phrase_ = true;
    }
    Ensure(!has_phrase_ || static_cast<bool>(options.text), ErrorKind::kInvalidArgument,
           "a phrase query needs the documents' text (no text provider given)");
  }

  // Distinct exact terms looked up in the dictionary.
  uint64_t terms_looked_up() const { return ids_.size(); }

  EvalResult Run(const QueryNode& query) {
    Plan plan = Build(query);
    stats_->absent_term = plan.impossible;
    Docs docs = Materialize(plan, options_.limit);
    for (const Worker& w : workers_) {
      stats_->phrase_candidates += w.phrase_candidates;
      stats_->phrase_positions += w.phrase_positions;
      stats_->phrase_pairs += w.phrase_pairs;
      stats_->text_bytes += w.text_bytes;
      stats_->unreadable += w.unreadable;
      stats_->phrase_us += w.phrase_us;
    }
    EvalResult out;
    out.documents = std::move(docs.yes);
    out.unreadable = std::move(docs.unknown);
    return out;
  }

 private:
  struct Docs {
    std::vector<uint32_t> yes, unknown;
  };
  // A test applied to candidates; `terms_known`: the candidates have its exact terms already.
  struct Filter {
    const Plan* plan;
    bool terms_known;
  };

  bool Deleted(uint32_t d) const {
    return options_.deleted != nullptr && ((options_.deleted[d / 64] >> (d % 64)) & 1);
  }
  bool OutOfScope(uint32_t d) const {
    return options_.scope != nullptr &&
           !InRanges(options_.scope->data(), options_.scope->size(), d);
  }

  std::optional<uint32_t> Lookup(const std::string& term) {
    auto it = ids_.find(term);
    if (it != ids_.end()) return it->second;
    std::optional<uint32_t> id = index_.dictionary().Find(term);
    ids_.emplace(term, id);
    return id;
  }

  uint64_t Df(uint32_t id) const { return index_.dictionary().Df(id); }

  // The ids of the dictionary terms starting with `prefix`, ascending (a scan of one range of
  // the dictionary's blocks, cached per query). Their terms are kept in prefix_term_.
  const std::vector<uint32_t>& ExpandPrefix(const std::string& prefix) {
    auto [it, fresh] = prefixes_.try_emplace(prefix);
    if (!fresh) return it->second;
    std::vector<uint32_t>& ids = it->second;
    stats_->prefix_scan_bytes +=
        index_.dictionary().ForEachWithPrefix(prefix, [&](std::string_view term, uint32_t id) {
          ids.push_back(id);
          prefix_term_.try_emplace(id, term);
          return true;
        });
    std::sort(ids.begin(), ids.end());
    stats_->prefix_terms += ids.size();
    return ids;
  }

  Plan Build(const QueryNode& node) {
    Plan p;
    p.node = &node;
    p.kind = node.kind;
    switch (node.kind) {
      case Kind::kTerm:
      case Kind::kPhrase: {
        const size_t exact = node.terms.size() - (node.last_is_prefix ? 1 : 0);
        p.exact_terms.assign(node.terms.begin(), node.terms.begin() + exact);
        std::sort(p.exact_terms.begin(), p.exact_terms.end());
        p.exact_terms.erase(std::unique(p.exact_terms.begin(), p.exact_terms.end()),
                            p.exact_terms.end());
        p.estimate = UINT64_MAX;
        for (const std::string& t : p.exact_terms) {
          std::optional<uint32_t> id = Lookup(t);
          if (!id) {
            p.impossible = true;
            p.estimate = 0;
            break;
          }
          p.exact_ids.push_back(*id);
          p.estimate = std::min(p.estimate, Df(*id));
        }
        std::sort(p.exact_ids.begin(), p.exact_ids.end());
        if (node.last_is_prefix && !p.impossible) {
          p.prefix = &ExpandPrefix(node.terms.back());
          if (p.prefix->empty()) p.impossible = true;
        }
        if (node.kind == Kind::kPhrase) {
          p.pattern = matcher_.PatternOf(&node);
          p.needs_text = true;
          if (!p.impossible && !node.last_is_prefix &&
              std::none_of(node.terms.begin(), node.terms.end(),
                           [](const std::string& t) { return tokenizer::IsStemTerm(t); })) {
            for (const std::string& t : node.terms) p.sequence_ids.push_back(*Lookup(t));
            p.sequence_set = p.sequence_ids;
            std::sort(p.sequence_set.begin(), p.sequence_set.end());
            p.sequence_set.erase(std::unique(p.sequence_set.begin(), p.sequence_set.end()),
                                 p.sequence_set.end());
            for (uint32_t id : p.sequence_ids) {
              p.sequence_slot.push_back(static_cast<uint32_t>(
                  std::lower_bound(p.sequence_set.begin(), p.sequence_set.end(), id) -
                  p.sequence_set.begin()));
            }
            if (std::find(node.joined.begin() + 1, node.joined.end(), true) != node.joined.end())
              p.joined = node.joined;
            if (p.sequence_ids.size() > 1 &&
                *std::max_element(p.sequence_ids.begin(), p.sequence_ids.end()) <
                    index_.pair_terms()) {
              for (size_t e = 0; e + 1 < node.terms.size(); ++e) {
                p.pair_keys.push_back(format::PairKey(format::HashTerm(node.terms[e]),
                                                      format::HashTerm(node.terms[e + 1])));
              }
              for (const std::string& t : p.exact_terms)
                p.lone_keys.push_back(format::LoneFingerprint(format::HashTerm(t)));
            }
          }
        }
        if (p.impossible) p.estimate = 0;
        break;
      }
      case Kind::kPrefix:
        p.prefix = &ExpandPrefix(node.terms[0]);
        p.impossible = p.prefix->empty();
        for (uint32_t id : *p.prefix) p.estimate += Df(id);
        break;
      case Kind::kAnd:
      case Kind::kOr: {
        p.estimate = node.kind == Kind::kAnd ? UINT64_MAX : 0;
        bool all_impossible = true;
        for (const QueryNode& c : node.children) {
          Plan cp = Build(c);
          p.needs_text |= cp.needs_text;
          if (node.kind == Kind::kAnd) {
            p.impossible |= cp.impossible;
            p.estimate = std::min(p.estimate, cp.estimate);
          } else {
            all_impossible &= cp.impossible;
            p.estimate += cp.estimate;
          }
          p.children.push_back(std::move(cp));
        }
        if (node.kind == Kind::kOr) p.impossible = all_impossible;
        for (const QueryNode& e : node.excluded) {
          Plan ep = Build(e);
          p.needs_text |= ep.needs_text;
          p.excluded.push_back(std::move(ep));
        }
        if (p.impossible) p.estimate = 0;
        break;
      }
    }
    return p;
  }

  // The exact answer of a conjunction of terms through the rows and the forward store.
  std::vector<uint32_t> SearchTerms(const std::vector<std::string>& terms, uint64_t limit) {
    QueryStats st;
    std::vector<uint32_t> out =
        searcher_.Search(terms, limit, &st, options_.deleted, options_.scope);
    stats_->row_searches++;
    stats_->candidates += st.candidates;
    stats_->false_positives += st.false_positives;
    stats_->rows_read += st.rows_read;
    stats_->bytes_read += st.bytes_read;
    stats_->and_us += st.and_us;
    stats_->verify_us += st.verify_us;
    return out;
  }

  Docs Materialize(const Plan& p, uint64_t limit) {
    Docs out;
    if (p.impossible) return out;
    switch (p.kind) {
      case Kind::kTerm:
        out.yes = SearchTerms(p.exact_terms, limit);
        return out;
      case Kind::kPrefix:
        out.yes = MaterializePrefix(*p.prefix, limit);
        return out;
      case Kind::kPhrase:
        return Apply(SearchTerms(p.exact_terms, 0), {Filter{&p, true}}, {}, limit);
      case Kind::kOr: {
        for (const Plan& c : p.children) {
          Docs d = Materialize(c, limit);
          out.yes = Union(out.yes, d.yes);
          out.unknown = Union(out.unknown, d.unknown);
        }
        std::vector<uint32_t> unknown;
        std::set_difference(out.unknown.begin(), out.unknown.end(), out.yes.begin(), out.yes.end(),
                            std::back_inserter(unknown));
        out.unknown.swap(unknown);
        if (limit != 0 && out.yes.size() > limit) out.yes.resize(limit);
        return out;
      }
      case Kind::kAnd:
        return MaterializeAnd(p, limit);
    }
    return out;
  }

  Docs MaterializeAnd(const Plan& p, uint64_t limit) {
    // The exact terms of its terms and phrases give the candidates through the rows.
    std::vector<std::string> required;
    std::vector<Filter> filters;
    for (const Plan& c : p.children) {
      if (c.kind == Kind::kTerm || c.kind == Kind::kPhrase) {
        required.insert(required.end(), c.exact_terms.begin(), c.exact_terms.end());
      }
      if (c.kind != Kind::kTerm) filters.push_back(Filter{&c, true});
    }
    std::sort(required.begin(), required.end());
    required.erase(std::unique(required.begin(), required.end()), required.end());
    std::vector<const Plan*> excluded;
    for (const Plan& e : p.excluded) {
      if (!e.impossible) excluded.push_back(&e);
    }
    if (!required.empty()) {
      const bool final = filters.empty() && excluded.empty();
      return Apply(SearchTerms(required, final ? limit : 0), filters, excluded, limit);
    }
    // Only ORs and prefixes: the answer of the one with the fewest matches, then the others.
    const Plan* seed = &p.children[0];
    for (const Plan& c : p.children) {
      if (c.estimate < seed->estimate) seed = &c;
    }
    filters.erase(std::remove_if(filters.begin(), filters.end(),
                                 [&](const Filter& f) { return f.plan == seed; }),
                  filters.end());
    Docs base = Materialize(*seed, filters.empty() && excluded.empty() ? limit : 0);
    Docs out = Apply(std::move(base.yes), filters, excluded, limit);
    // Where the seed itself was undecided, the whole conjunction decides (No wins).
    for (uint32_t d : base.unknown) {
      Doc doc;
      doc.id = d;
      if (Test(p, doc, workers_.local()) != Truth::kNo) out.unknown.push_back(d);
    }
    std::sort(out.unknown.begin(), out.unknown.end());
    return out;
  }

  std::vector<uint32_t> MaterializePrefix(const std::vector<uint32_t>& ids, uint64_t limit) {
    uint64_t row_bytes = 0;
    for (uint64_t b = 0; b < index_.band_count(); ++b) {
      const format::BandRecord& band = index_.band(b);
      for (uint32_t id : ids)
        row_bytes += band.words_per_row * 8 * (id < index_.exact_terms() ? 1 : band.k);
    }
    const uint64_t forward_bytes = index_.SectionBytes(format::SectionId::kForwardData);
    if (row_bytes <= kRowBytesPerForwardByte * forward_bytes) {
      std::vector<uint32_t> out;
      for (uint32_t id : ids) {
        out = Union(out, SearchTerms({prefix_term_.at(id)}, limit));
        if (limit != 0 && out.size() > limit) out.resize(limit);
      }
      return out;
    }
    // Too many terms: every live document's forward record.
    std::vector<uint32_t> out;
    for (uint32_t d = 0; d < index_.doc_count(); ++d) {
      if (Deleted(d) || OutOfScope(d)) continue;
      ++stats_->forward_scans;
      Doc doc;
      doc.id = d;
      if (HasAny(doc, ids)) {
        out.push_back(d);
        if (limit != 0 && out.size() >= limit) break;
      }
    }
    return out;
  }

  // Keeps the candidates (ascending, not deleted) that pass every filter and match no
  // exclusion, at most `limit` of them; forward-record tests run before text tests. Text tests
  // of many candidates run in parallel when options_.parallel allows.
  Docs Apply(std::vector<uint32_t> base, const std::vector<Filter>& filters,
             const std::vector<const Plan*>& excluded, uint64_t limit) {
    Docs out;
    if (filters.empty() && excluded.empty()) {
      if (limit != 0 && base.size() > limit) base.resize(limit);
      out.yes = std::move(base);
      return out;
    }
    bool text = false;
    for (const Filter& f : filters) text |= f.plan->needs_text;
    for (const Plan* e : excluded) text |= e->needs_text;
    auto keep = [&](uint32_t d, Truth t) {
      if (t == Truth::kYes) out.yes.push_back(d);
      if (t == Truth::kUnknown) out.unknown.push_back(d);
      return limit != 0 && out.yes.size() >= limit;
    };
    // Every candidate's record is read (a cold index: asked for at once; for a limited query,
    // those it may reach), in full for phrases (their positions end them): loaded ahead.
    index_.WillNeedRecords(base.data(),
                           limit == 0
                               ? base.size()
                               : std::min<size_t>(base.size(), std::max<uint64_t>(4 * limit, 256)));
    const uint64_t ahead_bytes = has_phrase_ ? kPrefetchBytes : 1;
    if (!text || !options_.parallel || base.size() < kParallelMin) {
      Worker& w = workers_.local();
      for (size_t i = 0; i < base.size(); ++i) {
        if (i + kPrefetchAhead < base.size())
          index_.PrefetchRecord(base[i + kPrefetchAhead], ahead_bytes);
        if (keep(base[i], Decide(base[i], filters, excluded, w))) break;
      }
      return out;
    }
    std::vector<Truth> truth;
    for (size_t i = 0; i < base.size();) {
      const size_t n = limit == 0 ? base.size() - i : std::min(kParallelBlock, base.size() - i);
      truth.assign(n, Truth::kNo);
      tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4),
                        [&](const tbb::blocked_range<size_t>& r) {
                          Worker& w = workers_.local();
                          for (size_t j = r.begin(); j != r.end(); ++j) {
                            if (j + kPrefetchAhead < r.end())
                              index_.PrefetchRecord(base[i + j + kPrefetchAhead], ahead_bytes);
                            truth[j] = Decide(base[i + j], filters, excluded, w);
                          }
                        });
      bool full = false;
      for (size_t j = 0; j < n && !full; ++j) full = keep(base[i + j], truth[j]);
      if (full) break;
      i += n;
    }
    return out;
  }

  // Whether document d passes the filters and no exclusion holds.
  Truth Decide(uint32_t d, const std::vector<Filter>& filters,
               const std::vector<const Plan*>& excluded, Worker& w) {
    Doc doc;
    doc.id = d;
    Truth t = Truth::kYes;
    for (bool text : {false, true}) {
      for (const Filter& f : filters) {
        if (t == Truth::kNo || f.plan->needs_text != text) continue;
        Truth r = f.terms_known && f.plan->kind == Kind::kPhrase ? TestPhrase(*f.plan, doc, true, w)
                                                                 : Test(*f.plan, doc, w);
        if (r == Truth::kNo) t = Truth::kNo;
        if (r == Truth::kUnknown) t = Truth::kUnknown;
      }
      for (const Plan* e : excluded) {
        if (t == Truth::kNo || e->needs_text != text) continue;
        Truth r = Test(*e, doc, w);
        if (r == Truth::kYes) t = Truth::kNo;
        if (r == Truth::kUnknown) t = Truth::kUnknown;
      }
    }
    return t;
  }

  const std::vector<uint32_t>& Terms(Doc& doc) {
    if (!doc.terms_loaded) {
      doc.terms = index_.DocumentTerms(doc.id);
      doc.terms_loaded = true;
    }
    return doc.terms;
  }

  bool HasAny(Doc& doc, const std::vector<uint32_t>& ids) {
    const std::vector<uint32_t>& terms = Terms(doc);
    if (ids.size() < terms.size()) {
      return std::any_of(ids.begin(), ids.end(), [&](uint32_t id) { return Sorted(terms, id); });
    }
    return std::any_of(terms.begin(), terms.end(), [&](uint32_t id) { return Sorted(ids, id); });
  }

  // Whether the phrase's pattern occurs in the document's text (read once per document, and
  // every phrase of the query is looked for in that one pass).
  Truth TextHas(Doc& doc, int pattern, Worker& w) {
    if (doc.text == Doc::kNotRead) {
      const auto start = Clock::now();
      std::string& text = w.text;
      if (!options_.text(doc.id, &text)) {
        doc.text = Doc::kUnreadable;
        ++w.unreadable;
      } else {
        doc.text = Doc::kRead;
        ++w.phrase_candidates;
        w.text_bytes += text.size();
        w.matcher.Scan(text, false, phrase_patterns_, &doc.found);
      }
      w.phrase_us += MicrosSince(start);
    }
    if (doc.text == Doc::kUnreadable) return Truth::kUnknown;
    return doc.found.found[pattern] ? Truth::kYes : Truth::kNo;
  }

  Truth TestPhrase(const Plan& p, Doc& doc, bool terms_known, Worker& w) {
    if (p.impossible) return Truth::kNo;
    if (!terms_known) {
      for (uint32_t id : p.exact_ids) {
        if (!Sorted(Terms(doc), id)) return Truth::kNo;
      }
    }
    if (p.prefix != nullptr && !HasAny(doc, *p.prefix)) return Truth::kNo;
    if (!p.sequence_ids.empty()) {
      const Truth t = PositionsHave(p, doc, w);
      if (t != Truth::kUnknown) {
        ++w.phrase_positions;
        return t;
      }
    }
    return TextHas(doc, p.pattern, w);
  }

  // Whether the terms `ids` stand at consecutive positions of the document, in this order (the
  // joined ones each continuing a run), by its record's positions (format::ForwardPositions);
  // kUnknown if it lacks the positions of one of them or its run starts.
  Truth PositionsHave(const Plan& p, Doc& doc, Worker& w) {
    const bool runs = !p.joined.empty();
    const format::PhraseLists found = index_.TermPositions(
        doc.id, p.sequence_set.data(), p.sequence_set.size(), &w.at, &w.begin, p.pair_keys.data(),
        p.pair_keys.size(), p.lone_keys.data(), p.lone_keys.size(), runs);
    if (found == format::PhraseLists::kNoPair) {
      ++w.phrase_pairs;
      return Truth::kNo;
    }
    if (found == format::PhraseLists::kAbsent) return Truth::kNo;
    if (found != format::PhraseLists::kFound) return Truth::kUnknown;
    const size_t m = p.sequence_ids.size();
    constexpr size_t kMaxElements = 64;
    if (m > kMaxElements) return Truth::kUnknown;
    const uint32_t* list[kMaxElements];
    size_t size[kMaxElements], at[kMaxElements] = {};
    for (size_t e = 0; e < m; ++e) {
      const uint32_t i = p.sequence_slot[e];
      list[e] = w.at.data() + w.begin[i];
      size[e] = w.begin[i + 1] - w.begin[i];
    }
    const size_t set = p.sequence_set.size();
    const uint32_t* run_starts = runs ? w.at.data() + w.begin[set] : nullptr;
    const uint32_t* runs_end = runs ? w.at.data() + w.begin[set + 1] : nullptr;
    // Every start x of the first list, each other list advanced to x + e.
    for (size_t i = 0; i < size[0]; ++i) {
      const uint64_t x = list[0][i];
      bool all = true;
      for (size_t e = 1; e < m && all; ++e) {
        while (at[e] < size[e] && list[e][at[e]] < x + e) ++at[e];
        if (at[e] == size[e]) return Truth::kNo;
        all = list[e][at[e]] == x + e;
        if (all && runs && p.joined[e]) all = !std::binary_search(run_starts, runs_end, x + e);
      }
      if (all) return Truth::kYes;
    }
    return Truth::kNo;
  }

  // The exact truth of a node for one document (Kleene logic over undecidable texts).
  Truth Test(const Plan& p, Doc& doc, Worker& w) {
    if (p.impossible) return Truth::kNo;
    switch (p.kind) {
      case Kind::kTerm:
        return Sorted(Terms(doc), p.exact_ids[0]) ? Truth::kYes : Truth::kNo;
      case Kind::kPrefix:
        return HasAny(doc, *p.prefix) ? Truth::kYes : Truth::kNo;
      case Kind::kPhrase:
        return TestPhrase(p, doc, false, w);
      case Kind::kAnd: {
        Truth t = Truth::kYes;
        for (bool text : {false, true}) {
          for (const Plan& c : p.children) {
            if (c.needs_text != text) continue;
            Truth r = Test(c, doc, w);
            if (r == Truth::kNo) return Truth::kNo;
            if (r == Truth::kUnknown) t = Truth::kUnknown;
          }
          for (const Plan& e : p.excluded) {
            if (e.needs_text != text) continue;
            Truth r = Test(e, doc, w);
            if (r == Truth::kYes) return Truth::kNo;
            if (r == Truth::kUnknown) t = Truth::kUnknown;
          }
        }
        return t;
      }
      case Kind::kOr: {
        Truth t = Truth::kNo;
        for (bool text : {false, true}) {
          for (const Plan& c : p.children) {
            if (c.needs_text != text) continue;
            Truth r = Test(c, doc, w);
            if (r == Truth::kYes) return Truth::kYes;
            if (r == Truth::kUnknown) t = Truth::kUnknown;
          }
        }
        return t;
      }
    }
    return Truth::kNo;
  }

  const format::SegmentReader& index_;
  const Searcher& searcher_;
  const EvalOptions& options_;
  EvalStats* stats_;
  QueryMatcher matcher_;  // for the patterns' numbering; workers scan with their own
  tbb::enumerable_thread_specific<Worker> workers_;
  std::vector<bool> phrase_patterns_;
  bool has_phrase_ = false;
  std::map<std::string, std::optional<uint32_t>> ids_;
  std::map<std::string, std::vector<uint32_t>> prefixes_;
  std::unordered_map<uint32_t, std::string> prefix_term_;  // terms of the expanded ids
};

}  // namespace

EvalResult Evaluate(const format::SegmentReader& index, const Searcher& searcher,
                    const QueryNode& query, const EvalOptions& options, EvalStats* stats) {
  const auto start = Clock::now();
  *stats = EvalStats{};
  EvalResult out;
  std::vector<std::string> terms;
  if (IsPlainConjunction(query, &terms)) {
    // 0.1's query: exactly the searcher's path.
    out.documents = searcher.Search(terms, options.limit, stats, options.deleted, options.scope);
    stats->row_searches = 1;
  } else {
    Evaluator evaluator(index, searcher, query, options, stats);
    out = evaluator.Run(query);
    stats->terms = evaluator.terms_looked_up();
    stats->matches = out.documents.size();
    stats->total_us = MicrosSince(start);
  }
  return out;
}

}  // namespace bitsift::query
