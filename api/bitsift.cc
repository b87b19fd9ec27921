// The public API: a thin layer that turns internal exceptions into Status values.
#include "bitsift/bitsift.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <new>

#include "format/bloom.h"
#include "indexer/index_builder.h"
#include "query/index_check.h"
#include "query/index_reader.h"
#include "query/searcher.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace bitsift {
namespace {

Status::Code CodeOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      return Status::Code::kInvalidArgument;
    case ErrorKind::kIo:
      return Status::Code::kIoError;
    case ErrorKind::kCorrupt:
      return Status::Code::kCorrupt;
    case ErrorKind::kNotFound:
      return Status::Code::kNotFound;
  }
  return Status::Code::kInternal;
}

template <typename F>
Status Guard(F&& f) {
  try {
    f();
    return Status();
  } catch (const Error& e) {
    return Status(CodeOf(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return Status(Status::Code::kInternal, "out of memory");
  } catch (const std::exception& e) {
    return Status(Status::Code::kInternal, e.what());
  }
}

indexer::BuildConfig ConfigOf(const IndexOptions& o) {
  indexer::BuildConfig c;
  c.fp_rate = o.fp_rate;
  c.threads = o.threads;
  c.max_file_size = o.max_file_size;
  c.documents.encoding = o.encoding;
  c.documents.hidden = o.hidden;
  c.documents.no_ignore = o.no_ignore;
  c.documents.globs = o.globs;
  c.documents.max_decompressed_bytes = o.max_decompressed_bytes;
  if (o.progress) {
    c.progress = [f = o.progress](const indexer::BuildProgress& p) {
      f({p.files_done, p.files_total, p.bytes_done, p.seconds});
    };
  }
  if (o.on_skip) {
    c.on_skip = [f = o.on_skip](const std::string& path, indexer::SkipReason why,
                                const std::string& detail) {
      f(path, indexer::SkipReasonName(why), detail);
    };
  }
  return c;
}

void Summarize(const indexer::BuildReport& r, IndexSummary* s) {
  if (s == nullptr) return;
  *s = IndexSummary{};
  s->documents = r.documents;
  for (size_t i = 0; i < r.skipped.size(); ++i) {
    if (r.skipped[i] != 0) {
      s->skipped.emplace_back(indexer::SkipReasonName(static_cast<indexer::SkipReason>(i)),
                              r.skipped[i]);
    }
  }
  s->terms = r.terms;
  s->postings = r.postings;
  s->bands = r.bands;
  s->input_bytes = r.input_bytes;
  s->index_bytes = r.index_bytes;
  s->seconds = r.seconds;
}

}  // namespace

Status BuildIndex(const std::string& dir, const std::string& index_path,
                  const IndexOptions& options, IndexSummary* summary) {
  return Guard([&] {
    indexer::BuildReport report;
    indexer::BuildIndexFromDirectory(dir, index_path, ConfigOf(options), &report);
    Summarize(report, summary);
  });
}

Status BuildIndexFromDocuments(const std::vector<Document>& documents,
                               const std::string& index_path, const IndexOptions& options,
                               IndexSummary* summary) {
  return Guard([&] {
    std::vector<indexer::MemoryDocument> docs;
    docs.reserve(documents.size());
    for (const Document& d : documents) docs.push_back({d.name, d.text, d.mtime_ns});
    indexer::BuildReport report;
    indexer::BuildIndexFromMemory(docs, index_path, ConfigOf(options), &report);
    Summarize(report, summary);
  });
}

Status Tokenize(std::string_view text, std::vector<std::string>* tokens) {
  return Guard([&] { *tokens = tokenizer::TokenSet(text); });
}

struct Index::Rep {
  explicit Rep(const std::string& path) : reader(path), searcher(reader) {}
  query::IndexReader reader;
  query::Searcher searcher;
};

Index::Index(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
Index::~Index() = default;

Status Index::Open(const std::string& path, std::unique_ptr<Index>* index) {
  return Guard([&] { index->reset(new Index(std::make_unique<Rep>(path))); });
}

Status Index::Find(const std::string& start_dir, std::string* index_path) {
  return Guard([&] {
    char* abs = ::realpath(start_dir.c_str(), nullptr);
    Ensure(abs != nullptr, ErrorKind::kNotFound, ErrnoMessage(start_dir, "cannot resolve", errno));
    std::string dir = abs;
    std::free(abs);
    for (;;) {
      std::string candidate = (dir == "/" ? "" : dir) + "/.bitsift";
      struct stat st;
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        *index_path = candidate;
        return;
      }
      if (dir == "/") break;
      dir = DirectoryOf(dir);
    }
    throw Error(ErrorKind::kNotFound,
                "no index: no .bitsift in " + start_dir +
                    " or any parent (run 'bitsift index DIR' or pass --index PATH)");
  });
}

Status Index::Query(const std::vector<std::string>& arguments, const QueryOptions& options,
                    QueryResult* result) const {
  return Guard([&] {
    *result = QueryResult{};
    auto start = std::chrono::steady_clock::now();
    std::vector<std::string> terms = query::Searcher::ParseQuery(arguments);
    double tokenize_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    query::QueryStats st;
    result->documents = rep_->searcher.Search(terms, options.limit, &st);
    result->stats = {st.terms,     st.candidates, st.false_positives,
                     st.rows_read, st.bytes_read, st.parse_us + tokenize_us,
                     st.and_us,    st.verify_us,  st.total_us + tokenize_us};
  });
}

uint64_t Index::document_count() const { return rep_->reader.doc_count(); }

DocumentInfo Index::document(uint32_t id) const {
  const format::DocRecord& d = rep_->reader.doc(id);
  return {std::string(rep_->reader.path(id)), d.size, d.mtime_ns, d.term_count};
}

const std::string& Index::path() const { return rep_->reader.path(); }

Status Index::Check() const {
  return Guard([&] { query::CheckIndex(rep_->reader); });
}

Status CheckIndex(const std::string& path) {
  std::unique_ptr<Index> index;
  Status s = Index::Open(path, &index);
  return s.ok() ? index->Check() : s;
}

IndexStats Index::Stats() const {
  const query::IndexReader& r = rep_->reader;
  IndexStats s;
  s.root = std::string(r.root());
  s.icu_version = std::string(r.meta().icu_version,
                              strnlen(r.meta().icu_version, sizeof(r.meta().icu_version)));
  s.documents = r.doc_count();
  s.terms = r.meta().term_count;
  s.exact_terms = r.exact_terms();
  s.fp_rate = r.meta().fp_rate;
  s.file_bytes = r.file_size();
  for (uint64_t b = 0; b < r.band_count(); ++b) {
    const format::BandRecord& band = r.band(b);
    BandStats bs;
    bs.width = band.width;
    bs.k = band.k;
    bs.documents = band.doc_count;
    bs.max_terms = band.max_terms;
    uint64_t set = 0;
    for (uint64_t row = 0; row < band.width; ++row) {
      const uint64_t* p = r.Row(band, row);
      for (uint64_t w = 0; w < band.words_per_row; ++w)
        set += static_cast<uint64_t>(__builtin_popcountll(p[w]));
    }
    bs.fill_ratio = band.doc_count ? static_cast<double>(set) /
                                         (static_cast<double>(band.width) * band.doc_count)
                                   : 0;
    bs.expected_fp_rate = format::ExpectedFalsePositiveRate({band.width, band.k}, band.max_terms);
    s.bands.push_back(bs);
  }
  using format::SectionId;
  s.section_bytes = {
      {"signature rows", r.SectionBytes(SectionId::kRows)},
      {"band columns", r.SectionBytes(SectionId::kBandDocs) + r.SectionBytes(SectionId::kBands)},
      {"forward store",
       r.SectionBytes(SectionId::kForwardData) + r.SectionBytes(SectionId::kForwardOffsets)},
      {"dictionary",
       r.SectionBytes(SectionId::kTermBytes) + r.SectionBytes(SectionId::kTermOffsets) +
           r.SectionBytes(SectionId::kTermDf) + r.SectionBytes(SectionId::kTermTable)},
      {"document table", r.SectionBytes(SectionId::kDocs) + r.SectionBytes(SectionId::kPaths)},
      {"meta", r.SectionBytes(SectionId::kMeta)},
  };
  return s;
}

}  // namespace bitsift
