#include "indexer/index_builder.h"

#include <malloc.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>
#include <unicode/uversion.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <unordered_set>

#include "indexer/bands.h"
#include "format/bloom.h"
#include "format/dictionary.h"
#include "format/forward_store.h"
#include "format/index_format.h"
#include "util/error.h"

namespace bitsift::indexer {
namespace {

using Clock = std::chrono::steady_clock;

// A term gets an exact row when it is in at least 1/kExactRowDensity of the documents.
constexpr uint64_t kExactRowDensity = 10;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Reads document i into the sink; returns kCount on success or why it was skipped.
using DocumentReader = std::function<SkipReason(size_t i, tokenizer::Tokenizer&,
                                                tokenizer::TokenSink&, FileFacts*, std::string*)>;

struct Corpus {
  std::vector<std::string> names;  // sorted
  DocumentReader read;
  std::string root;  // stored in the index for `bitsift stats`
};

// Collects a document's distinct tokens.
class DistinctTokens : public tokenizer::TokenSink {
 public:
  void OnToken(std::string_view token) override { set_.emplace(token); }
  const std::unordered_set<std::string>& set() const { return set_; }
  void Clear() { set_.clear(); }

 private:
  std::unordered_set<std::string> set_;
};

struct DocState {
  std::vector<uint32_t> ids;  // provisional, then final term ids (sorted)
  FileFacts facts;
  bool indexed = false;
};

class ProgressReporter {
 public:
  ProgressReporter(const BuildConfig& config, uint64_t total, Clock::time_point start)
      : config_(config), total_(total), start_(start) {}
  void Done(uint64_t bytes) {
    uint64_t files = ++files_;
    bytes_ += bytes;
    if (!config_.progress) return;
    int64_t now =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
    int64_t last = last_ms_.load();
    if ((now - last >= 200 || files == total_) && last_ms_.compare_exchange_strong(last, now)) {
      std::lock_guard<std::mutex> lock(mu_);
      config_.progress({files, total_, bytes_.load(), SecondsSince(start_)});
    }
  }

 private:
  const BuildConfig& config_;
  uint64_t total_;
  Clock::time_point start_;
  std::atomic<uint64_t> files_{0}, bytes_{0};
  std::atomic<int64_t> last_ms_{0};
  std::mutex mu_;
};

template <typename T>
void AddSection(format::IndexFileWriter& w, format::SectionId id, const std::vector<T>& v) {
  w.AddSection(id, v.data(), v.size() * sizeof(T));
}

void Build(const Corpus& corpus, const std::string& index_path, const BuildConfig& config,
           BuildReport* report, Clock::time_point start) {
  Ensure(config.fp_rate > 0 && config.fp_rate < 1, ErrorKind::kInvalidArgument,
         "--fp-rate must be between 0 and 1 (exclusive), got " + std::to_string(config.fp_rate));
  AtomicFileWriter::RemoveStaleTemporaries(index_path);
  const size_t n = corpus.names.size();
  Ensure(n < std::numeric_limits<uint32_t>::max(), ErrorKind::kInvalidArgument,
         "too many documents for one index");
  std::vector<DocState> docs(n);
  auto interner = std::make_unique<format::TermInterner>();  // freed once final ids are known
  std::mutex skip_mu;
  ProgressReporter progress(config, n, start);

  // 1. Tokenize every document and intern its distinct terms.
  tbb::enumerable_thread_specific<tokenizer::Tokenizer> tokenizers;
  tbb::enumerable_thread_specific<DistinctTokens> collectors;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1), [&](const tbb::blocked_range<size_t>& r) {
    tokenizer::Tokenizer& tok = tokenizers.local();
    DistinctTokens& tokens = collectors.local();
    for (size_t i = r.begin(); i != r.end(); ++i) {
      tokens.Clear();
      std::string detail;
      SkipReason why = corpus.read(i, tok, tokens, &docs[i].facts, &detail);
      if (why != SkipReason::kCount) {
        std::lock_guard<std::mutex> lock(skip_mu);
        report->skipped[static_cast<size_t>(why)]++;
        if (config.on_skip) config.on_skip(corpus.names[i], why, detail);
        progress.Done(0);
        continue;
      }
      docs[i].indexed = true;
      docs[i].ids.reserve(tokens.set().size());
      for (const std::string& t : tokens.set())
        docs[i].ids.push_back(interner->Intern(t, format::HashTerm(t)));
      progress.Done(docs[i].facts.size);
    }
  });

  // 2. Final term ids by decreasing document frequency (ties by bytes, so builds are
  //    reproducible).
  std::vector<std::vector<uint32_t>> df_by_shard(1u << format::TermInterner::kShardBits);
  interner->ForEach([&](uint32_t pid, std::string_view, uint64_t) {
    auto& v = df_by_shard[format::TermInterner::ShardOf(pid)];
    if (v.size() <= format::TermInterner::LocalOf(pid)) v.resize(format::TermInterner::LocalOf(pid) + 1, 0);
  });
  for (const DocState& d : docs) {
    for (uint32_t pid : d.ids)
      ++df_by_shard[format::TermInterner::ShardOf(pid)][format::TermInterner::LocalOf(pid)];
  }
  // 16 bytes a term (this array is part of the peak memory on corpora with millions of terms).
  struct TermInfo {
    uint64_t hash;
    uint32_t pid;
    uint32_t df;
  };
  std::vector<TermInfo> terms;
  terms.reserve(interner->size());
  interner->ForEach([&](uint32_t pid, std::string_view, uint64_t hash) {
    terms.push_back(
        {hash, pid, df_by_shard[format::TermInterner::ShardOf(pid)][format::TermInterner::LocalOf(pid)]});
  });
  tbb::parallel_sort(terms.begin(), terms.end(), [&](const TermInfo& a, const TermInfo& b) {
    // Ties by bytes: terms of one document often share prefixes (identifiers of one source
    // file), so byte order keeps their ids close and the forward store's gaps small. Ordering
    // ties by hash instead made linux-files' index 1.3% larger.
    return a.df != b.df ? a.df > b.df : interner->Term(a.pid) < interner->Term(b.pid);
  });
  std::vector<std::vector<uint32_t>> final_id(df_by_shard.size());
  for (size_t s = 0; s < df_by_shard.size(); ++s) final_id[s].resize(df_by_shard[s].size());
  for (uint32_t id = 0; id < terms.size(); ++id) {
    uint32_t pid = terms[id].pid;
    final_id[format::TermInterner::ShardOf(pid)][format::TermInterner::LocalOf(pid)] = id;
  }
  tbb::parallel_for(size_t{0}, n, [&](size_t i) {
    for (uint32_t& id : docs[i].ids)
      id = final_id[format::TermInterner::ShardOf(id)][format::TermInterner::LocalOf(id)];
    std::sort(docs[i].ids.begin(), docs[i].ids.end());
  });
  final_id.clear();
  df_by_shard.clear();

  // The dictionary sections, by final id. Then the sort records and the interner go, before
  // the rows are allocated: on linux-files (5.7M terms) they were 40% of the peak memory.
  const uint64_t term_count = terms.size();
  std::vector<uint32_t> term_df(term_count);
  std::vector<uint64_t> term_hashes(term_count);
  std::vector<uint32_t> pid_by_id(term_count);
  for (size_t id = 0; id < term_count; ++id) {
    term_df[id] = terms[id].df;
    term_hashes[id] = terms[id].hash;
    pid_by_id[id] = terms[id].pid;
  }
  std::vector<TermInfo>().swap(terms);
  std::vector<uint64_t> term_offsets(term_count + 1, 0);
  uint64_t term_bytes_total = 0;
  for (uint32_t pid : pid_by_id) term_bytes_total += interner->Term(pid).size();
  std::string term_bytes;
  term_bytes.reserve(term_bytes_total);
  for (size_t id = 0; id < term_count; ++id) {
    term_offsets[id] = term_bytes.size();
    term_bytes += interner->Term(pid_by_id[id]);
  }
  term_offsets[term_count] = term_bytes.size();
  std::vector<uint32_t>().swap(pid_by_id);
  interner.reset();
  malloc_trim(0);  // give the freed interner back to the system (glibc keeps it otherwise)

  // 3. Keep indexed documents; their order (by name) is the document id order.
  std::vector<uint32_t> kept;
  for (size_t i = 0; i < n; ++i) {
    if (docs[i].indexed) kept.push_back(static_cast<uint32_t>(i));
  }
  const uint64_t doc_count = kept.size();
  std::vector<format::DocRecord> doc_records(doc_count);
  std::string paths;
  uint64_t postings = 0, input_bytes = 0;
  for (uint64_t d = 0; d < doc_count; ++d) {
    const DocState& s = docs[kept[d]];
    const std::string& name = corpus.names[kept[d]];
    doc_records[d] = {paths.size(),      static_cast<uint32_t>(name.size()),
                      static_cast<uint32_t>(s.ids.size()), s.facts.size,
                      s.facts.file_size, s.facts.mtime_ns,
                      s.facts.ctime_ns,  s.facts.inode,
                      0,                 0};
    paths += name;
    postings += s.ids.size();
    input_bytes += s.facts.size;
  }

  // 4. Exact rows for frequent terms (BitFunnel's "private rows"). A term in at least a tenth
  //    of the documents costs about 9.6 * df Bloom bits but only one bit per document as an
  //    exact row, so the exact row is smaller; it also keeps the Bloom rows sparse, reads one
  //    row instead of k, and needs no verification. Ids are by decreasing df, so the exact terms
  //    are the ids below exact_terms.
  uint64_t nonempty = 0;
  for (uint64_t d = 0; d < doc_count; ++d) nonempty += doc_records[d].term_count > 0;
  uint32_t exact_terms = 0;
  while (exact_terms < term_count && term_df[exact_terms] >= 2 &&
         uint64_t{term_df[exact_terms]} * kExactRowDensity >= nonempty) {
    ++exact_terms;
  }
  // Bloom-hashed terms of document d: its ids at or above exact_terms.
  auto bloom_terms = [&](uint64_t d) -> uint64_t {
    const auto& ids = docs[kept[d]].ids;
    return ids.end() - std::lower_bound(ids.begin(), ids.end(), exact_terms);
  };

  // 5. Bands: non-empty documents sorted by Bloom-hashed terms (then id).
  std::vector<uint32_t> by_size;
  std::vector<uint64_t> bloom_count(doc_count, 0);
  for (uint64_t d = 0; d < doc_count; ++d) {
    if (doc_records[d].term_count == 0) continue;
    by_size.push_back(static_cast<uint32_t>(d));
    // A document with only exact terms still needs a column (width is sized for at least 1).
    bloom_count[d] = std::max<uint64_t>(1, bloom_terms(d));
  }
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](uint32_t a, uint32_t b) { return bloom_count[a] < bloom_count[b]; });
  std::vector<uint64_t> sorted_counts(by_size.size());
  for (size_t i = 0; i < by_size.size(); ++i) sorted_counts[i] = bloom_count[by_size[i]];
  std::vector<BandPlan> plan = PlanBands(sorted_counts, config.fp_rate);
  std::vector<format::BandRecord> bands(plan.size());
  uint64_t row_words = 0;
  for (size_t b = 0; b < plan.size(); ++b) {
    format::BandRecord& r = bands[b];
    r.rows_offset = row_words * 8;
    r.width = plan[b].shape.width;
    r.k = plan[b].shape.k;
    r.words_per_row = (plan[b].count + format::kDocsPerBlock - 1) / format::kDocsPerBlock * (format::kDocsPerBlock / 64);
    r.first_column = plan[b].first;
    r.max_terms = plan[b].max_terms;
    r.doc_count = static_cast<uint32_t>(plan[b].count);
    row_words += (r.width + exact_terms) * r.words_per_row;
  }
  std::vector<uint64_t> rows(row_words, 0);
  // Each task owns whole 512-column blocks of one band, so no two tasks write the same word.
  struct BlockTask {
    uint32_t band;
    uint64_t first_col;
  };
  std::vector<BlockTask> tasks;
  for (uint32_t b = 0; b < bands.size(); ++b) {
    for (uint64_t c = 0; c < bands[b].doc_count; c += format::kDocsPerBlock) tasks.push_back({b, c});
  }
  tbb::parallel_for(size_t{0}, tasks.size(), [&](size_t t) {
    const format::BandRecord& band = bands[tasks[t].band];
    uint64_t* base = rows.data() + band.rows_offset / 8;
    uint64_t end = std::min<uint64_t>(tasks[t].first_col + format::kDocsPerBlock, band.doc_count);
    for (uint64_t col = tasks[t].first_col; col < end; ++col) {
      const DocState& d = docs[kept[by_size[band.first_column + col]]];
      const uint64_t word = col / 64, bit = uint64_t{1} << (col % 64);
      for (uint32_t id : d.ids) {
        if (id < exact_terms) {
          base[(band.width + id) * band.words_per_row + word] |= bit;
        } else {
          format::ForEachPosition(term_hashes[id], band.width, band.k,
                          [&](uint64_t row) { base[row * band.words_per_row + word] |= bit; });
        }
      }
    }
  });
  std::vector<uint32_t> band_docs(by_size.begin(), by_size.end());

  // 6. Forward store.
  std::vector<uint64_t> forward_offsets(doc_count + 1, 0);
  std::string forward;
  for (uint64_t d = 0; d < doc_count; ++d) {
    forward_offsets[d] = forward.size();
    format::EncodeForwardRecord(docs[kept[d]].ids, forward);
    std::vector<uint32_t>().swap(docs[kept[d]].ids);
  }
  forward_offsets[doc_count] = forward.size();

  // 7. Dictionary hash table (the arrays were made in step 2).
  std::vector<uint32_t> table = format::BuildTermTable(term_hashes);

  // 8. Meta and the file.
  std::string meta(sizeof(format::MetaRecord), '\0');
  format::MetaRecord m{};
  m.doc_count = doc_count;
  m.term_count = term_count;
  m.band_count = bands.size();
  m.term_table_slots = table.size();
  m.fp_rate = config.fp_rate;
  m.input_bytes = input_bytes;
  m.build_time_unix = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  m.contract_version = format::kContractVersion;
  m.exact_terms = exact_terms;
  std::strncpy(m.icu_version, U_ICU_VERSION, sizeof(m.icu_version) - 1);
  std::memcpy(meta.data(), &m, sizeof(m));
  meta += corpus.root;

  format::IndexFileWriter w(index_path);
  w.AddSection(format::SectionId::kMeta, meta.data(), meta.size());
  AddSection(w, format::SectionId::kBands, bands);
  AddSection(w, format::SectionId::kBandDocs, band_docs);
  AddSection(w, format::SectionId::kRows, rows);
  AddSection(w, format::SectionId::kDocs, doc_records);
  w.AddSection(format::SectionId::kPaths, paths.data(), paths.size());
  AddSection(w, format::SectionId::kTermOffsets, term_offsets);
  w.AddSection(format::SectionId::kTermBytes, term_bytes.data(), term_bytes.size());
  AddSection(w, format::SectionId::kTermDf, term_df);
  AddSection(w, format::SectionId::kTermTable, table);
  AddSection(w, format::SectionId::kForwardOffsets, forward_offsets);
  w.AddSection(format::SectionId::kForwardData, forward.data(), forward.size());
  report->index_bytes = w.Finish();

  report->documents = doc_count;
  report->terms = term_count;
  report->postings = postings;
  report->bands = bands.size();
  report->input_bytes = input_bytes;
  report->seconds = SecondsSince(start);
}

void BuildWithThreads(const Corpus& corpus, const std::string& index_path,
                      const BuildConfig& config, BuildReport* report, Clock::time_point start) {
  int threads = config.threads == 0 ? tbb::this_task_arena::max_concurrency()
                                    : static_cast<int>(config.threads);
  tbb::task_arena arena(threads);
  arena.execute([&] { Build(corpus, index_path, config, report, start); });
}

// Whether `rel` (relative to root) names the index file or one of its temporaries.
std::function<bool(const std::string&)> IndexExcluder(const std::string& root,
                                                      const std::string& index_path) {
  char* r = ::realpath(root.c_str(), nullptr);
  char* d = ::realpath(DirectoryOf(index_path).c_str(), nullptr);
  std::string root_abs = r ? r : root;
  std::string index_abs = (d ? std::string(d) : DirectoryOf(index_path)) + "/" +
                          index_path.substr(index_path.find_last_of('/') + 1);
  std::free(r);
  std::free(d);
  return [root_abs, index_abs](const std::string& rel) {
    std::string abs = root_abs + "/" + rel;
    return abs == index_abs || abs.compare(0, index_abs.size() + 5, index_abs + ".tmp.") == 0;
  };
}

}  // namespace

void BuildIndexFromDirectory(const std::string& root, const std::string& index_path,
                             const BuildConfig& config, BuildReport* report) {
  auto start = Clock::now();
  *report = BuildReport{};
  std::mutex mu;
  SkipCallback on_skip = [&](const std::string& path, SkipReason why, const std::string& detail) {
    std::lock_guard<std::mutex> lock(mu);
    report->skipped[static_cast<size_t>(why)]++;
    if (config.on_skip) config.on_skip(path, why, detail);
  };
  Corpus corpus;
  corpus.names = WalkDirectory(root, config.documents, IndexExcluder(root, index_path), on_skip);
  char* abs = ::realpath(root.c_str(), nullptr);
  corpus.root = abs ? abs : root;
  std::free(abs);
  const uint64_t max_size = config.max_file_size;
  corpus.read = [&](size_t i, tokenizer::Tokenizer& tok, tokenizer::TokenSink& sink,
                    FileFacts* facts, std::string* detail) {
    return ReadDocumentFile(root, corpus.names[i], max_size, config.documents, tok, sink, facts,
                            detail);
  };
  BuildWithThreads(corpus, index_path, config, report, start);
}

void BuildIndexFromMemory(const std::vector<MemoryDocument>& docs, const std::string& index_path,
                          const BuildConfig& config, BuildReport* report) {
  auto start = Clock::now();
  *report = BuildReport{};
  std::vector<size_t> order(docs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return docs[a].name < docs[b].name; });
  Corpus corpus;
  for (size_t i : order) corpus.names.push_back(docs[i].name);
  corpus.read = [&](size_t i, tokenizer::Tokenizer& tok, tokenizer::TokenSink& sink,
                    FileFacts* facts, std::string*) {
    const MemoryDocument& d = docs[order[i]];
    tok.Tokenize(d.text, sink);
    facts->size = facts->file_size = d.text.size();
    facts->mtime_ns = d.mtime_ns;
    return SkipReason::kCount;
  };
  BuildWithThreads(corpus, index_path, config, report, start);
}

}  // namespace bitsift::indexer
