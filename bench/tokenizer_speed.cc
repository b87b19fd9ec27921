// Tokenization throughput:
//   build/tokenizer_speed TEXT_FILE
// prints MB/s of each tokenization path over FILE (CPU time, best of three runs).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "bench/bench_util.h"
#include "tokenizer/tokenizer.h"

namespace {

struct Count : bitsift::tokenizer::TokenSink {
  uint64_t tokens = 0, bytes = 0;
  void OnToken(std::string_view t, bitsift::tokenizer::TokenRole) override {
    ++tokens;
    bytes += t.size();
  }
};

template <typename F>
double BestMBps(const std::string& text, F&& run) {
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    // CPU time, not wall time: the machine is shared, and the work is single-threaded.
    std::clock_t start = std::clock();
    run();
    double s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
    best = std::max(best, text.size() / s / 1e6);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (!bitsift::bench::Arguments(argc, 1, "build/tokenizer_speed TEXT_FILE")) return 2;
  const char* file = argv[1];
  const std::string text = bitsift::bench::ReadWholeFile(file);
  bitsift::tokenizer::Tokenizer tok;
  Count whole, streamed;
  double whole_mbps = BestMBps(text, [&] {
    whole = Count{};
    tok.Tokenize(text, whole);
  });
  double stream_mbps = BestMBps(text, [&] {
    streamed = Count{};
    for (size_t i = 0; i < text.size(); i += 1 << 20) {
      tok.Feed(std::string_view(text).substr(i, 1 << 20), streamed);
    }
    tok.Finish(streamed);
  });
  struct CountOffsets : bitsift::tokenizer::OffsetTokenSink {
    uint64_t tokens = 0, bytes = 0;
    bool OnToken(std::string_view t, uint64_t begin, uint64_t end, bool,
                 bitsift::tokenizer::TokenRole) override {
      ++tokens;
      bytes += t.size() + (end - begin);
      return true;
    }
  } offsets;
  double offsets_mbps = BestMBps(text, [&] {
    offsets = CountOffsets{};
    tok.TokenizeWithOffsets(text, offsets);
  });
  // The same with ICU for every byte (no fast paths): what the ASCII and Han paths save.
  bitsift::tokenizer::Tokenizer icu_tok;
  icu_tok.SetFastPathsForTesting(false);
  Count icu_whole;
  double icu_whole_mbps = BestMBps(text, [&] {
    icu_whole = Count{};
    icu_tok.Tokenize(text, icu_whole);
  });
  CountOffsets icu_offsets;
  double icu_offsets_mbps = BestMBps(text, [&] {
    icu_offsets = CountOffsets{};
    icu_tok.TokenizeWithOffsets(text, icu_offsets);
  });
  std::printf(
      "%zu bytes, %llu tokens\n"
      "| path | ASCII and Han lines without ICU | ICU for every byte |\n|---|---|---|\n"
      "| whole text | %.1f MB/s | %.1f MB/s |\n| streamed 1M | %.1f MB/s | |\n"
      "| offsets | %.1f MB/s | %.1f MB/s |\n",
      text.size(), static_cast<unsigned long long>(whole.tokens), whole_mbps, icu_whole_mbps,
      stream_mbps, offsets_mbps, icu_offsets_mbps);
  if (!(whole.tokens == streamed.tokens)) {
    std::fprintf(stderr, "the paths disagree: whole.tokens == streamed.tokens\n");
    return 1;
  }
  if (!(whole.tokens == offsets.tokens)) {
    std::fprintf(stderr, "the paths disagree: whole.tokens == offsets.tokens\n");
    return 1;
  }
  if (!(whole.tokens == icu_whole.tokens)) {
    std::fprintf(stderr, "the paths disagree: whole.tokens == icu_whole.tokens\n");
    return 1;
  }
  if (!(whole.bytes == icu_whole.bytes)) {
    std::fprintf(stderr, "the paths disagree: whole.bytes == icu_whole.bytes\n");
    return 1;
  }
  if (!(offsets.bytes == icu_offsets.bytes)) {
    std::fprintf(stderr, "the paths disagree: offsets.bytes == icu_offsets.bytes\n");
    return 1;
  }
  return 0;
}
