// What storing phrase evidence in the index would cost (phrases run over positions, token
// contract v2):
//   build/positions_size DIR
// tokenizes every regular file under DIR (raw bytes, no document stage) and prints the bytes a
// positional index would add (per document and term, the varint-coded gaps between positions,
// plus one varint count) and the distinct adjacent token pairs that pair terms would add to the
// signatures, against the distinct terms the index holds now.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bench/bench_util.h"
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
  uint64_t docs = 0, bytes = 0, tokens = 0, postings = 0, position_bytes = 0, pairs = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::skip_permission_denied)) {
    if (!e.is_regular_file() || e.path().string().find("/.") != std::string::npos) continue;
    const std::string text = bitsift::bench::ReadWholeFile(e.path().string());
    if (text.find('\0') != std::string::npos) continue;
    sink.tokens.clear();
    sink.wholes.clear();
    tok.TokenizeWithOffsets(text, sink);
    std::unordered_map<std::string, std::pair<uint64_t, uint64_t>> last;  // term -> (pos, count)
    std::unordered_set<std::string> adjacent;
    for (uint64_t i = 0; i < sink.tokens.size(); ++i) {
      auto [it, fresh] = last.try_emplace(sink.tokens[i], i, 0);
      position_bytes += VarintBytes(fresh ? i : i - it->second.first);
      it->second = {i, it->second.second + 1};
      if (i > 0) adjacent.insert(sink.tokens[i - 1] + '\x01' + sink.tokens[i]);
    }
    for (const auto& [term, pc] : last) position_bytes += VarintBytes(pc.second);
    for (const std::string& w : sink.wholes) last.try_emplace(w, 0, 0);  // terms, no positions
    ++docs;
    bytes += text.size();
    tokens += sink.tokens.size();
    postings += last.size();
    pairs += adjacent.size();
  }
  std::printf(
      "%llu documents, %.1f MB, %llu tokens, %llu postings (distinct terms per document)\n"
      "positions: %.1f MB (%.2f bytes per token)\n"
      "adjacent pairs: %llu distinct per document summed (%.2fx the postings)\n",
      static_cast<unsigned long long>(docs), bytes / 1e6, static_cast<unsigned long long>(tokens),
      static_cast<unsigned long long>(postings), position_bytes / 1e6,
      tokens ? static_cast<double>(position_bytes) / tokens : 0.0,
      static_cast<unsigned long long>(pairs), postings ? static_cast<double>(pairs) / postings : 0);
  return 0;
}
