#include "answers/index_engine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "answers/file_states.h"
#include "answers/lines.h"
#include "answers/shell_paths.h"
#include "format/bloom.h"
#include "format/segment_reader.h"
#include "query/document_text.h"
#include "query/query_matcher.h"
#include "query/ranker.h"
#include "util/error.h"
#include "util/helper_thread.h"

namespace bitsift::answers {
namespace {

// The absolute path of document `id`'s file, for messages.
std::string AbsolutePath(const DocumentInfo& d) {
  std::string out;
  ShellPathTo(d.root, d.path, "", &out);
  return out;
}

double MicrosSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
}

// Reads (so verifies) the record and path of document `id`, which document() reads later.
void VerifyRecord(const query::IndexSet& set, uint32_t id) {
  const query::IndexSet::Segment& s = set.SegmentOf(id);
  (void)s.reader->path(id - s.first_id);
}

QueryStats StatsOf(const query::SetQueryStats& st) {
  QueryStats out;
  out.terms = st.terms;
  out.candidates = st.candidates;
  out.false_positives = st.false_positives;
  out.rows_read = st.rows_read;
  out.bytes_read = st.bytes_read;
  out.segments_searched = st.segments_searched;
  out.segments_skipped = st.segments_skipped;
  out.segments_out_of_scope = st.segments_out_of_scope;
  out.prefix_terms = st.prefix_terms;
  out.phrase_candidates = st.phrase_candidates;
  out.text_bytes = st.text_bytes;
  out.phrase_us = st.phrase_us;
  out.parse_us = st.parse_us;
  out.and_us = st.and_us;
  out.verify_us = st.verify_us;
  return out;
}

// Adds the live documents of `seg` to *counts by encoding name; nothing if a chunk of its
// document table is damaged.
void CountEncodings(const query::IndexSet::Segment& seg, std::map<std::string, uint64_t>* counts) {
  const format::SegmentReader& r = *seg.reader;
  std::vector<uint64_t> by_index(r.encodings().size(), 0);
  try {
    for (uint32_t d = 0; d < r.doc_count(); ++d) {
      if (seg.is_deleted(d)) continue;
      const uint32_t e = r.doc(d).encoding;
      if (e >= by_index.size()) return;  // Check reports it
      ++by_index[e];
    }
  } catch (const Error&) {
    return;
  }
  for (size_t e = 0; e < by_index.size(); ++e) {
    if (by_index[e] != 0) (*counts)[r.encodings()[e]] += by_index[e];
  }
}

// The statistics of one band of `r`: its shape, and the fill of its rows (read in full).
BandStats StatsOfBand(const format::SegmentReader& r, const format::BandRecord& band) {
  BandStats bs;
  bs.width = band.width;
  bs.k = band.k;
  bs.documents = band.doc_count;
  bs.max_terms = band.max_terms;
  uint64_t set_bits = 0;
  try {
    for (uint64_t row = 0; row < band.width; ++row) {
      const uint64_t* p = r.Row(band, row);
      for (uint64_t w = 0; w < band.words_per_row; ++w)
        set_bits += static_cast<uint64_t>(__builtin_popcountll(p[w]));
    }
    bs.fill_ratio =
        band.doc_count && band.width
            ? static_cast<double>(set_bits) / (static_cast<double>(band.width) * band.doc_count)
            : 0;
  } catch (const Error&) {
    bs.fill_ratio = std::numeric_limits<double>::quiet_NaN();  // a damaged chunk of its rows
  }
  // A band of width 0 (huge documents) has no signature: every one is a candidate.
  bs.expected_fp_rate =
      band.width ? format::ExpectedFalsePositiveRate({band.width, band.k}, band.max_terms) : 1.0;
  return bs;
}

}  // namespace

std::vector<query::IndexScope> ScopeOf(const query::IndexSet& set,
                                       const std::vector<std::string>& scope,
                                       const std::string& working_dir) {
  std::vector<query::IndexScope> out(set.indexes().size());
  if (scope.empty() && working_dir.empty()) return out;
  std::vector<std::string> entries;
  for (const std::string& e : scope) {
    entries.push_back(!e.empty() && e[0] == '/' ? query::CanonicalPath(e) : e);
  }
  const std::string dir = working_dir.empty() ? "" : query::CanonicalPath(working_dir);
  // An absolute entry must lie in some index's tree: a path outside all of them is a mistake.
  std::string roots;
  for (const query::IndexSet::Index& index : set.indexes()) {
    roots += (roots.empty() ? "" : ", ") + (index.root.empty() ? "(in-memory)" : index.root);
  }
  for (const std::string& e : entries) {
    bool somewhere = e.empty() || e[0] != '/';
    for (const query::IndexSet::Index& index : set.indexes()) {
      somewhere = somewhere || query::ResolveScopeEntry(index.root, e).has_value();
    }
    Ensure(somewhere, ErrorKind::kInvalidArgument,
           e + ": not inside the indexed directory (" + roots + ")");
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string& root = set.indexes()[i].root;
    query::IndexScope& s = out[i];
    if (std::optional<std::string> inside = query::FolderInside(root, dir);
        !dir.empty() && inside) {
      s = {false, {*inside}};
    }
    if (entries.empty()) continue;
    query::Prefixes selected;
    for (const std::string& e : entries) {
      if (std::optional<std::string> p = query::ResolveScopeEntry(root, e)) selected.push_back(*p);
    }
    s.prefixes = s.all ? selected : query::IntersectPrefixes(s.prefixes, selected);
    s.all = false;
  }
  for (query::IndexScope& s : out) {
    if (std::find(s.prefixes.begin(), s.prefixes.end(), "") != s.prefixes.end()) s = {};
  }
  return out;
}

namespace {

// OpenOptions::shards, sorted and distinct, or null for every shard.
std::optional<std::vector<uint32_t>> SortedShards(const OpenOptions& options) {
  if (!options.shards) return std::nullopt;
  std::vector<uint32_t> s = *options.shards;
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

}  // namespace

IndexEngine::IndexEngine(const std::vector<std::string>& paths, const OpenOptions& options)
    : shards_(SortedShards(options)),
      set_(paths,
           options.one_shot ? format::IndexFile::Access::kOneShot
                            : format::IndexFile::Access::kRandom,
           options.map_ahead, shards_ ? &*shards_ : nullptr),
      paths_(paths) {}

RankStatistics IndexEngine::Statistics(const QueryForm& form, const QueryOptions& options) const {
  const QueryForm& q = form.Under(set_.rules());
  const query::IndexSet::SegmentText text = TextOf(options);
  query::SetQueryStats st;
  const query::CollectionStats c =
      query::CollectionStatsOf(set_, q.root(), text, options.parallel, &st);
  return {c.documents, c.length, c.part_documents};
}

query::IndexSet::SegmentText IndexEngine::TextOf(const QueryOptions& options) const {
  return [this, &options](const query::IndexSet::Segment& s, uint32_t local, std::string* out) {
    if (options.document_text) return options.document_text(Document(s.first_id + local), out);
    std::string detail;
    return query::ReadIndexedText(set_, s, local, out, &detail) == query::TextState::kRead;
  };
}

std::vector<query::IndexScope> IndexEngine::Scope(const QueryOptions& options) const {
  if (options.scope.empty() && options.working_dir.empty()) {
    return std::vector<query::IndexScope>(set_.indexes().size());
  }
  if (!options.working_dir.empty() && options.working_dir[0] != '/') {
    return ScopeOf(set_, options.scope, options.working_dir);
  }
  std::lock_guard<std::mutex> lock(scope_mu_);
  if (!scope_known_ || options.scope != scope_entries_ || options.working_dir != scope_dir_) {
    // Throws for a bad entry: nothing is cached then.
    scope_value_ = ScopeOf(set_, options.scope, options.working_dir);
    scope_entries_ = options.scope;
    scope_dir_ = options.working_dir;
    scope_known_ = true;
  }
  return scope_value_;
}

QueryResult IndexEngine::Answer(const QueryForm& form, const QueryOptions& options,
                                double parse_us) const {
  QueryResult result;
  const auto start = std::chrono::steady_clock::now();
  const QueryForm& q = form.Under(set_.rules());
  const query::IndexSet::SegmentText text = TextOf(options);
  std::vector<query::IndexScope> scope = Scope(options);
  result.scoped =
      std::any_of(scope.begin(), scope.end(), [](const query::IndexScope& s) { return !s.all; });
  query::SetQueryStats st;
  double files_us = 0;
  // With check_files, vanished files leave gaps that the next matches fill: ask again for as
  // many more as were left out (rarely needed: files vanish between updates).
  for (uint64_t ask = options.limit;;) {
    std::vector<uint32_t> documents;
    if (options.rank || options.any) {
      result.scores.clear();
      std::optional<query::CollectionStats> global;
      if (options.statistics != nullptr) {
        global = query::CollectionStats{options.statistics->documents, options.statistics->length,
                                        options.statistics->part_documents};
      }
      for (const query::RankedHit& h :
           query::Rank(set_, q.root(), options.any, ask, text, options.parallel, &st,
                       result.scoped ? &scope : nullptr, &result.unreadable, {},
                       global ? &*global : nullptr)) {
        documents.push_back(h.id);
        result.scores.push_back(h.score);
      }
    } else if (q.plain()) {
      // A plain conjunction takes the short path: the row AND and the forward store alone.
      documents =
          set_.Search(q.terms(), ask, &st, result.scoped ? &scope : nullptr, options.parallel);
    } else {
      documents = set_.Evaluate(q.root(), ask, text, options.parallel, &st,
                                result.scoped ? &scope : nullptr, &result.unreadable);
    }
    // Verify the records document() will read for these results (chunks are verified lazily):
    // damage there fails this query (with no documents), never meets document().
    // SetAsideStaleFiles reads (so verifies) them itself, on two threads. A cold index reads
    // them in one round of requests first.
    if (!options.count_only) set_.WillNeedDocuments(documents);
    if (!options.check_files && !options.count_only) {
      for (uint32_t id : documents) VerifyRecord(set_, id);
    }
    result.documents = std::move(documents);
    if (!options.check_files) break;
    const uint64_t found = result.documents.size();
    const auto files_start = std::chrono::steady_clock::now();
    SetAsideStaleFiles(&result, options.known_files);
    files_us += MicrosSince(files_start);
    if (options.limit == 0 || found < ask || result.documents.size() >= options.limit) break;
    ask = options.limit + result.vanished.size();
  }
  if (options.limit != 0 && result.documents.size() > options.limit) {
    result.documents.resize(options.limit);
    if (!result.scores.empty()) result.scores.resize(options.limit);
  }
  result.stats = StatsOf(st);
  result.stats.parse_us += parse_us;
  result.stats.files_us = files_us;
  result.stats.total_us = MicrosSince(start) + parse_us - files_us;
  return result;
}

void IndexEngine::SetAsideStaleFiles(QueryResult* result,
                                     std::vector<std::optional<FileState>>* known) const {
  const std::vector<uint32_t>& docs = result->documents;
  std::vector<FileState> states;
  if (known == nullptr) {
    states = LookAtDocumentFiles(set_, docs);
  } else {  // a run's cache: each file looked at once however many queries return it
    if (known->size() != set_.id_count()) known->resize(set_.id_count());
    std::vector<uint32_t> unknown;  // the documents whose files are looked at
    for (uint32_t id : docs) {
      if (!(*known)[id]) {
        unknown.push_back(id);
      } else {  // the record and path document() will read: verified as looking at it does
        VerifyRecord(set_, id);
      }
    }
    const std::vector<FileState> looked = LookAtDocumentFiles(set_, unknown);
    for (size_t k = 0; k < unknown.size(); ++k) (*known)[unknown[k]] = looked[k];
    states.reserve(docs.size());
    for (uint32_t id : docs) states.push_back(*(*known)[id]);
  }
  std::vector<uint32_t> kept;
  std::vector<double> kept_scores;
  const bool scored = !result->scores.empty();
  result->changed.clear();
  result->vanished.clear();
  for (size_t i = 0; i < docs.size(); ++i) {
    const uint32_t id = docs[i];
    if (states[i] == FileState::kVanished) {
      result->vanished.push_back(id);
      continue;
    }
    if (states[i] == FileState::kChanged) result->changed.push_back(id);
    kept.push_back(id);
    if (scored) kept_scores.push_back(result->scores[i]);
  }
  result->documents.swap(kept);
  result->scores.swap(kept_scores);
}

IndexEngine::LinesState IndexEngine::MatchingLines(uint32_t id, const QueryForm& form,
                                                   const bitsift::LineOptions& options,
                                                   std::vector<bitsift::LineGroup>* groups) const {
  groups->clear();
  const query::IndexSet::Segment& seg = set_.SegmentOf(id);
  std::string text;
  documents::LineOrigins origins;  // where the lines come from in the file
  if (options.document_text) {
    if (!options.document_text(Document(id), &text)) {
      throw Error(ErrorKind::kIo,
                  std::string(seg.reader->path(id - seg.first_id)) + ": its text cannot be read");
    }
  } else {
    std::string detail;
    switch (query::ReadIndexedText(set_, seg, id - seg.first_id, &text, &detail, &origins)) {
      case query::TextState::kRead:
        break;
      case query::TextState::kChanged:
        return LinesState::kChanged;
      case query::TextState::kVanished:
        return LinesState::kVanished;
      case query::TextState::kUnreadable:
        throw Error(ErrorKind::kIo, AbsolutePath(Document(id)) + ": cannot be read: " + detail);
      case query::TextState::kNoFile:
        throw Error(ErrorKind::kInvalidArgument,
                    AbsolutePath(Document(id)) +
                        ": an in-memory document (give LineOptions::document_text)");
    }
  }
  const tokenizer::TokenRules rules = set_.rules();
  query::QueryMatcher matcher(form.Under(rules).root(), rules);
  answers::LineOptions lo;
  lo.before = options.before;
  lo.after = options.after;
  lo.best = options.best_lines;
  const bool extracted = origins.paged || !origins.source_lines.empty();
  for (answers::LineGroup& g : answers::MatchingLines(text, matcher, lo, &origins)) {
    bitsift::LineGroup out;
    for (answers::Line& l : g.lines) {
      MatchLine m;
      m.number = extracted ? l.source_line : l.number;
      m.text_line = extracted ? l.number : 0;
      m.page = l.page;
      m.text = text.substr(l.begin, l.end - l.begin);
      m.match = l.match;
      m.spans = std::move(l.spans);
      out.lines.push_back(std::move(m));
    }
    groups->push_back(std::move(out));
  }
  return LinesState::kRead;
}

DocumentPath IndexEngine::Path(uint32_t id) const {
  try {
    const query::IndexSet::Segment& s = set_.SegmentOf(id);
    return {set_.indexes()[s.index].root, s.reader->path(id - s.first_id)};
  } catch (const Error&) {
    return {};  // a damaged record, as Document (Answer verified those of its results)
  }
}

DocumentInfo IndexEngine::Document(uint32_t id) const {
  try {
    const query::IndexSet::Segment& s = set_.SegmentOf(id);
    const uint32_t local = id - s.first_id;
    const format::DocRecord d = s.reader->doc(local);
    DocumentInfo info;
    info.path = std::string(s.reader->path(local));
    info.root = set_.indexes()[s.index].root;
    info.index = s.index;
    info.size = d.size;
    info.mtime_ns = d.mtime_ns;
    info.terms = d.term_count;
    info.file_size = d.file_size;
    info.ctime_ns = d.ctime_ns;
    info.inode = d.inode;
    info.encoding = s.reader->encoding(d);
    return info;
  } catch (const Error&) {
    return {};  // a damaged record (Answer verified those of its results, so not one of them)
  }
}

FileState IndexEngine::StateOfFile(uint32_t id) const { return LookAtDocumentFile(set_, id); }

IndexStats IndexEngine::Stats() const {
  IndexStats s;
  std::map<std::string, uint64_t> encodings;
  s.root = set_.indexes().empty() ? "" : set_.indexes()[0].root;
  s.documents = set_.live_documents();
  uint64_t rows = 0, sparse = 0, band_bytes = 0, forward = 0, dictionary = 0, doc_table = 0,
           meta = 0;
  using format::SectionId;
  for (const query::IndexSet::Segment& seg : set_.segments()) {
    const format::SegmentReader& r = *seg.reader;
    s.icu_version = std::string(r.meta().icu_version,
                                strnlen(r.meta().icu_version, sizeof(r.meta().icu_version)));
    s.terms += r.meta().term_count;
    s.exact_terms += r.exact_terms();
    s.sparse_terms += r.meta().term_count - r.meta().sparse_first;
    s.bloom_terms += r.meta().sparse_first - r.exact_terms();
    s.fp_rate = r.meta().fp_rate;
    s.file_bytes += r.file_size();
    s.segments.push_back({format::SegmentFileName(seg.number), r.doc_count(), seg.deleted.size(),
                          r.meta().term_count, r.band_count(), r.file_size()});
    for (uint64_t b = 0; b < r.band_count(); ++b) s.bands.push_back(StatsOfBand(r, r.band(b)));
    CountEncodings(seg, &encodings);
    rows += r.SectionBytes(SectionId::kRows);
    sparse += r.SectionBytes(SectionId::kSparseData) + r.SectionBytes(SectionId::kSparseIndex);
    band_bytes += r.SectionBytes(SectionId::kBandDocs) + r.SectionBytes(SectionId::kBands);
    forward += r.SectionBytes(SectionId::kForwardData) + r.SectionBytes(SectionId::kForwardOffsets);
    dictionary += r.SectionBytes(SectionId::kDictIndex) + r.SectionBytes(SectionId::kDictBlocks) +
                  r.SectionBytes(SectionId::kDfRuns);
    doc_table += r.SectionBytes(SectionId::kDocBands) + r.SectionBytes(SectionId::kDocFacts) +
                 r.SectionBytes(SectionId::kDocFactsIndex);
    meta += r.SectionBytes(SectionId::kMeta);
  }
  s.section_bytes = {{"signature rows", rows},
                     {"document lists", sparse},
                     {"band columns", band_bytes},
                     {"forward store", forward},
                     {"dictionary", dictionary},
                     {"document table", doc_table},
                     {"meta", meta}};
  s.encodings.assign(encodings.begin(), encodings.end());
  std::stable_sort(s.encodings.begin(), s.encodings.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return s;
}

std::vector<std::string> PathLines(const std::function<DocumentPath(uint32_t)>& path_of,
                                   const uint32_t* ids, size_t n, std::string_view prefix,
                                   std::string_view from_dir, char end) {
  const bool shared = n >= kParallelPathLines;
  const size_t piece = shared ? kPathLinesPiece : std::max<size_t>(n, 1);
  std::vector<std::string> pieces((n + piece - 1) / piece);
  auto write_piece = [&](size_t k) {
    std::string& out = pieces[k];
    std::string path;
    for (size_t i = k * piece; i < std::min(n, (k + 1) * piece); ++i) {
      const DocumentPath where = path_of(ids[i]);
      ShellPathTo(where.root, where.path, from_dir, &path);
      out.append(prefix).append(path).push_back(end);
    }
  };
  if (shared) {
    util::RunShared(pieces.size(), write_piece);
  } else if (!pieces.empty()) {
    write_piece(0);
  }
  return pieces;
}

}  // namespace bitsift::answers
