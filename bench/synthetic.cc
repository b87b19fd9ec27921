// Synthetic and directory benchmark for the closing numbers of a build: index size by part,
// bits per document, false-positive rate before verification, and median query time of 1-,
// 2- and 3-term queries. Prints Markdown tables.
//
//   synthetic [DOCS]        generate DOCS documents (default 100000) of Zipf-distributed words
//   synthetic --dir DIR     index the files under DIR instead
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bitsift/bitsift.h"
#include "format/bloom.h"
#include "format/manifest.h"
#include "format/segment_reader.h"
#include "query/searcher.h"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> Vocabulary(size_t n, std::mt19937_64& rng) {
  const char* letters = "etaoinshrdlucmfwypvbgkjqxz";
  std::vector<std::string> v;
  std::map<std::string, bool> seen;
  while (v.size() < n) {
    std::string w;
    size_t len = 2 + rng() % 8;
    for (size_t i = 0; i < len; ++i) w += letters[std::min<size_t>(rng() % 26, rng() % 26)];
    if (!seen[w]) {
      seen[w] = true;
      v.push_back(w);
    }
  }
  return v;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  size_t ndocs = 100000;
  if (argc > 2 && std::strcmp(argv[1], "--dir") == 0) {
    dir = argv[2];
  } else if (argc > 1) {
    ndocs = std::stoul(argv[1]);
  }
  std::mt19937_64 rng(2026);
  std::string tmp = (std::filesystem::temp_directory_path() / "bitsift-synthetic.idx").string();
  bitsift::IndexSummary summary;
  bitsift::Status s;
  std::vector<std::vector<std::string>> doc_tokens;  // for sampling queries with hits
  if (dir.empty()) {
    std::vector<std::string> vocab = Vocabulary(200000, rng);
    std::vector<double> w(vocab.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / static_cast<double>(i + 1);
    std::discrete_distribution<size_t> zipf(w.begin(), w.end());
    std::lognormal_distribution<double> len(5.0, 1.0);  // median ~150 words
    std::vector<bitsift::Document> docs(ndocs);
    for (size_t d = 0; d < ndocs; ++d) {
      char name[32];
      std::snprintf(name, sizeof(name), "%03zu/%07zu.txt", d % 1000, d);
      docs[d].name = name;
      size_t words = 1 + static_cast<size_t>(len(rng));
      for (size_t i = 0; i < words; ++i) {
        docs[d].text += vocab[zipf(rng)];
        docs[d].text += ' ';
      }
    }
    for (size_t q = 0; q < 3000; ++q) {
      std::vector<std::string> t;
      bitsift::Tokenize(docs[rng() % ndocs].text, &t);
      doc_tokens.push_back(t);
    }
    s = bitsift::BuildIndexFromDocuments(docs, tmp, {}, &summary);
  } else {
    s = bitsift::BuildIndex(dir, tmp, {}, &summary);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "build failed: %s\n", s.message().c_str());
    return 2;
  }
  std::unique_ptr<bitsift::Index> index;
  s = bitsift::Index::Open(tmp, &index);
  if (!s.ok()) return 2;
  if (!dir.empty()) {
    for (uint32_t id = 0; id < index->document_count(); ++id) {
      std::string path = dir + "/" + index->document(id).path;
      FILE* f = std::fopen(path.c_str(), "rb");
      std::string text;
      char buf[65536];
      for (size_t n; f && (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
      if (f) std::fclose(f);
      std::vector<std::string> t;
      bitsift::Tokenize(text, &t);
      if (!t.empty()) doc_tokens.push_back(t);
    }
  }
  bitsift::IndexStats st = index->Stats();
  const double docs = static_cast<double>(st.documents);
  std::printf("## %s\n\n",
              dir.empty() ? ("generated corpus, " + std::to_string(ndocs) + " documents").c_str()
                          : dir.c_str());
  std::printf(
      "| documents | input bytes | distinct terms | postings | bands | build s | index bytes | "
      "bits/document | bits/posting |\n|---|---|---|---|---|---|---|---|---|\n");
  std::printf("| %llu | %llu | %llu | %llu | %llu | %.2f | %llu | %.1f | %.2f |\n\n",
              (unsigned long long)summary.documents, (unsigned long long)summary.input_bytes,
              (unsigned long long)summary.terms, (unsigned long long)summary.postings,
              (unsigned long long)st.bands.size(), summary.seconds,
              (unsigned long long)summary.index_bytes, 8.0 * summary.index_bytes / docs,
              8.0 * summary.index_bytes / std::max<double>(1, summary.postings));
  std::printf("| part | bytes | share | bits/document |\n|---|---|---|---|\n");
  for (const auto& [name, bytes] : st.section_bytes) {
    std::printf("| %s | %llu | %.1f%% | %.1f |\n", name.c_str(), (unsigned long long)bytes,
                100.0 * bytes / st.file_bytes, 8.0 * bytes / docs);
  }

  // False-positive rate of the signatures alone: absent terms probed through the rows.
  bitsift::format::SegmentReader reader(tmp + "/" + bitsift::format::SegmentFileName(1));
  bitsift::query::Searcher searcher(reader);
  uint64_t fp = 0;
  const int probes = 300;
  for (int p = 0; p < probes; ++p) {
    bitsift::query::QueryStats qs;
    std::vector<std::string> h = {"zzabsent" + std::to_string(p)};
    fp += searcher.Candidates(h, true, &qs).size();
  }
  std::printf(
      "\nsignature false-positive rate, one absent term (%d probes x %llu documents): "
      "%.5f (target %.3f)\n",
      probes, (unsigned long long)st.documents, fp / (probes * docs), st.fp_rate);

  // Queries of 1, 2, 3 terms sampled from documents (so they have hits).
  std::printf(
      "\n| terms | queries | median us | p95 us | mean matches | mean candidates | "
      "FP rate before verification | mean rows read | mean KB read |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  for (size_t nterms = 1; nterms <= 3; ++nterms) {
    std::vector<double> times;
    double matches = 0, candidates = 0, fps = 0, rows = 0, bytes = 0, fp_rate_sum = 0;
    size_t n = 0;
    for (const auto& toks : doc_tokens) {
      if (toks.size() < nterms) continue;
      std::vector<std::string> q;
      for (size_t i = 0; i < nterms; ++i) q.push_back(toks[rng() % toks.size()]);
      bitsift::QueryResult r;
      auto t0 = Clock::now();
      if (!index->Query(q, {}, &r).ok()) continue;
      times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      matches += r.documents.size();
      candidates += r.stats.candidates;
      fps += r.stats.false_positives;
      rows += r.stats.rows_read;
      bytes += r.stats.bytes_read;
      fp_rate_sum += r.stats.false_positives / std::max(1.0, docs - r.documents.size());
      if (++n == 1000) break;
    }
    if (n == 0) continue;
    std::printf("| %zu | %zu | %.1f | %.1f | %.1f | %.1f | %.5f | %.0f | %.1f |\n", nterms, n,
                Median(times), Percentile(times, 0.95), matches / n, candidates / n,
                fp_rate_sum / n, rows / n, bytes / n / 1024);
  }
  std::filesystem::remove_all(tmp);
  return 0;
}
