// What storing phrase evidence in the index would cost (phrases run over positions, token
// contract v2):
//   build/positions_size DIR
// tokenizes every regular file under DIR (raw bytes, no document stage) and prints the bytes a
// positional index would add (per document and term, the varint-coded gaps between positions,
// plus one varint count) and the distinct adjacent token pairs that pair terms would add to the
// signatures, against the distinct terms the index holds now. Then the same for the common terms
// only (document frequency >= 64 and >= N / 32, the terms with rank bounds: format/rank_bounds.h),
// whose phrases have the most candidates: their positions, and the adjacent pairs of two common
// terms or of at least one, as pair terms would hold them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bench/bench_util.h"
#include "format/rank_bounds.h"
#include "tokenizer/tokenizer.h"

namespace {

uint64_t VarintBytes(uint64_t v) {
  uint64_t n = 1;
  while (v >= 128) {
    v >>= 7;
    ++n;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (!bitsift::bench::Arguments(argc, 1, "build/positions_size DIR")) return 2;
  const char* dir = argv[1];
  // The phrase positions (tokenizer::IsPosition), and the wholes of words with parts: terms
  // without a position of their own.
  struct Sink : bitsift::tokenizer::OffsetTokenSink {
    std::vector<std::string> tokens;
    std::unordered_set<std::string> wholes;
    bool OnToken(std::string_view t, uint64_t, uint64_t, bool,
                 bitsift::tokenizer::TokenRole role) override {
      if (bitsift::tokenizer::IsPosition(role)) {
        tokens.emplace_back(t);
      } else {
        wholes.emplace(t);
      }
      return true;
    }
  } sink;
  bitsift::tokenizer::Tokenizer tok;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::skip_permission_denied)) {
    if (!e.is_regular_file() || e.path().string().find("/.") != std::string::npos) continue;
    files.push_back(e.path().string());
  }
  // Pass 1: every file's tokens, and each term's document frequency.
  std::unordered_map<std::string, uint64_t> df;
  auto tokenize = [&](const std::string& path) {
    const std::string text = bitsift::bench::ReadWholeFile(path);
    sink.tokens.clear();
    sink.wholes.clear();
    if (text.find('\0') != std::string::npos) return false;
    tok.TokenizeWithOffsets(text, sink);
    return true;
  };
  uint64_t docs = 0;
  for (const std::string& f : files) {
    if (!tokenize(f)) continue;
    ++docs;
    std::unordered_set<std::string> distinct(sink.tokens.begin(), sink.tokens.end());
    for (const std::string& t : distinct) ++df[t];
  }
  auto common = [&](const std::string& t) {
    auto it = df.find(t);
    return it != df.end() && bitsift::format::IsBoundedTerm(it->second, docs);
  };
  uint64_t common_terms = 0;
  for (const auto& [t, n] : df) common_terms += bitsift::format::IsBoundedTerm(n, docs);
  // Pass 2: the sizes.
  uint64_t bytes = 0, tokens = 0, postings = 0, position_bytes = 0, pairs = 0;
  uint64_t common_tokens = 0, common_position_bytes = 0, both_pairs = 0, either_pairs = 0;
  // Positions of the terms with a document frequency of at least T, for a sweep of T.
  const uint64_t sweep[] = {8, 32, 128, 512, 2048};
  uint64_t sweep_bytes[5] = {}, sweep_tokens[5] = {};
  auto df_of = [&](const std::string& t) {
    auto it = df.find(t);
    return it == df.end() ? uint64_t{0} : it->second;
  };
  // A document's token sequence as indexes into its sorted distinct terms: at a fixed width of
  // ceil(log2 D) bits, and at its empirical entropy (a per-document static code's floor).
  double fixed_bits = 0, entropy_bits = 0;
  std::unordered_set<std::string> both_pair_terms;
  for (const std::string& f : files) {
    if (!tokenize(f)) continue;
    bytes += std::filesystem::file_size(f);
    std::unordered_map<std::string, std::pair<uint64_t, uint64_t>> last;  // term -> (pos, count)
    std::unordered_set<std::string> adjacent, both, either;
    std::vector<char> is_common(sink.tokens.size());
    for (uint64_t i = 0; i < sink.tokens.size(); ++i) is_common[i] = common(sink.tokens[i]);
    for (uint64_t i = 0; i < sink.tokens.size(); ++i) {
      auto [it, fresh] = last.try_emplace(sink.tokens[i], i, 0);
      const uint64_t gap = VarintBytes(fresh ? i : i - it->second.first);
      position_bytes += gap;
      const uint64_t f = df_of(sink.tokens[i]);
      for (int k = 0; k < 5; ++k) {
        if (f >= sweep[k]) sweep_bytes[k] += gap, ++sweep_tokens[k];
      }
      if (is_common[i]) {
        common_position_bytes += gap;
        ++common_tokens;
      }
      it->second = {i, it->second.second + 1};
      if (i > 0) {
        std::string pair = sink.tokens[i - 1] + '\x01' + sink.tokens[i];
        if (is_common[i - 1] && is_common[i]) both.insert(pair);
        if (is_common[i - 1] || is_common[i]) either.insert(pair);
        adjacent.insert(std::move(pair));
      }
    }
    const double n = static_cast<double>(sink.tokens.size());
    fixed_bits += n * std::ceil(std::log2(std::max<double>(2, static_cast<double>(last.size()))));
    for (const auto& [term, pc] : last) {
      entropy_bits += static_cast<double>(pc.second) * std::log2(n / pc.second);
      position_bytes += VarintBytes(pc.second);
      if (common(term)) common_position_bytes += VarintBytes(pc.second);
      const uint64_t f = df_of(term);
      for (int k = 0; k < 5; ++k) {
        if (f >= sweep[k]) sweep_bytes[k] += VarintBytes(pc.second);
      }
    }
    for (const std::string& w : sink.wholes) last.try_emplace(w, 0, 0);  // terms, no positions
    tokens += sink.tokens.size();
    postings += last.size();
    pairs += adjacent.size();
    both_pairs += both.size();
    either_pairs += either.size();
    both_pair_terms.insert(both.begin(), both.end());
  }
  const double p = postings ? static_cast<double>(postings) : 1;
  std::printf(
      "%llu documents, %.1f MB, %llu tokens, %llu postings (distinct terms per document)\n"
      "positions: %.1f MB (%.2f bytes per token)\n"
      "adjacent pairs: %llu distinct per document summed (%.2fx the postings)\n"
      "common terms (df >= 64 and >= N/32): %llu, %.1f%% of the tokens\n"
      "positions of the common terms: %.1f MB\n"
      "pairs of two common terms: %llu per document summed (%.2fx the postings), %llu distinct\n"
      "pairs with a common term: %llu per document summed (%.2fx the postings)\n"
      "token sequences: %.1f MB at ceil(log2 D) bits a token, %.1f MB at their entropy\n",
      static_cast<unsigned long long>(docs), bytes / 1e6, static_cast<unsigned long long>(tokens),
      static_cast<unsigned long long>(postings), position_bytes / 1e6,
      tokens ? static_cast<double>(position_bytes) / tokens : 0.0,
      static_cast<unsigned long long>(pairs), pairs / p,
      static_cast<unsigned long long>(common_terms), tokens ? 100.0 * common_tokens / tokens : 0.0,
      common_position_bytes / 1e6, static_cast<unsigned long long>(both_pairs), both_pairs / p,
      static_cast<unsigned long long>(both_pair_terms.size()),
      static_cast<unsigned long long>(either_pairs), either_pairs / p, fixed_bits / 8e6,
      entropy_bits / 8e6);
  for (int k = 0; k < 5; ++k) {
    std::printf("positions of the terms with df >= %llu: %.1f MB, %.1f%% of the tokens\n",
                static_cast<unsigned long long>(sweep[k]), sweep_bytes[k] / 1e6,
                tokens ? 100.0 * sweep_tokens[k] / tokens : 0.0);
  }
  return 0;
}
