// The token contract, shared by indexing and querying (see README "Token contract").
//
//   1. bytes are decoded as UTF-8; each invalid sequence becomes U+FFFD;
//   2. the text is normalized with ICU's NFKC_Casefold;
//   3. it is segmented with ICU's root-locale word BreakIterator and a segment is kept when its
//      rule status is >= 100 (numbers, letters, kana, ideographs);
//   4. a maximal run of directly adjacent kept kana/ideographic segments (status 300..499) is
//      replaced by its overlapping code-point bigrams (a one-code-point run yields itself);
//   5. a document's terms are the set of its tokens.
//
// Long inputs are processed in chunks cut only where the contract cannot see the cut (after a
// newline, space, tab, ideographic space or ideographic full stop/comma, before a character
// that starts a new normalization segment and is not a word-break Extend/Format/ZWJ), so the
// chunked result equals the whole-text result. Only a run of more than kMaxChunkBytes without any
// such place is cut elsewhere (a token spanning that cut is split in two).
#ifndef BITSIFT_TOKENIZER_TOKENIZER_H_
#define BITSIFT_TOKENIZER_TOKENIZER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::tokenizer {

// Receives tokens in text order (a token may repeat). The view is valid only during the call.
class TokenSink {
 public:
  virtual ~TokenSink() = default;
  virtual void OnToken(std::string_view token) = 0;
};

// Receives tokens in text order with where each came from in the original bytes.
class OffsetTokenSink {
 public:
  virtual ~OffsetTokenSink() = default;
  // `token` is as TokenSink receives it (valid only during the call). [begin, end) is the
  // smallest range of whole source characters that produce it: for a word, its first and last
  // characters as they were before normalization (an invalid UTF-8 sequence counts as the
  // character U+FFFD it became); for a bigram, its two characters. A character that
  // normalization expands into several (U+337B SQUARE ERA NAME HEISEI -> 平成) belongs whole to
  // every token made from its expansion, so ranges of adjacent tokens may overlap.
  // `continues_run` is true for the second and later bigrams of one kana/ideographic run: the
  // token shares its first character with the previous token's last.
  // Returns true to go on, false to stop: no further token of this text is reported.
  virtual bool OnToken(std::string_view token, uint64_t begin, uint64_t end,
                       bool continues_run) = 0;
};

// One token of a text and its source range (see OffsetTokenSink).
struct PositionedToken {
  std::string text;
  uint64_t begin = 0, end = 0;
  bool continues_run = false;
};

// Tokenizes text under the contract above. Not thread-safe: use one Tokenizer per thread
// (construction is cheap; the first text that needs ICU clones its cached break iterator).
//
// Streaming use: (Feed)* Finish. Feed may be called with any byte boundaries (even inside a
// UTF-8 sequence); tokens are emitted as soon as a safe cut allows. Finish flushes the rest and
// resets the tokenizer for the next text.
class Tokenizer {
 public:
  // Chunks are cut near this size when a safe place exists.
  static constexpr size_t kChunkBytes = 1 << 20;
  // Without a safe place, a chunk is cut at this size (a code-point boundary).
  static constexpr size_t kMaxChunkBytes = 8 << 20;

  // Cheap: ICU's normalizer and break iterator are made when a text first needs them (one that
  // is not all ASCII lines); Feed, Finish, Tokenize and TokenizeWithOffsets then throw
  // std::runtime_error if ICU's data cannot be loaded.
  Tokenizer();
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Appends bytes of the current text; emits the tokens of every complete chunk to sink.
  void Feed(std::string_view bytes, TokenSink& sink);
  // Ends the current text: emits its remaining tokens to sink and resets for a new text.
  void Finish(TokenSink& sink);

  // Drops the current text without emitting anything (e.g. a file that failed mid-read).
  void Reset();

  // Whole-text convenience: Feed(text) then Finish.
  void Tokenize(std::string_view text, TokenSink& sink);

  // Tokenizes the whole of `text` as Tokenize does (the same tokens in the same order, the same
  // chunk cuts) and reports each token's source byte range, until the sink asks to stop. Slower
  // than Tokenize (it maps every normalized character back to its source bytes). Independent of a
  // text being streamed with Feed: that text's state is left as it was.
  void TokenizeWithOffsets(std::string_view text, OffsetTokenSink& sink);

  // For tests: overrides the chunk sizes (small sizes exercise the chunk cutting).
  void SetChunkBytesForTesting(size_t chunk, size_t max_chunk);

  // For tests: whether lines of ASCII, and lines of ASCII, Han ideographs, kana and common
  // Chinese/Japanese punctuation, are tokenized without ICU (the default), or every text with
  // ICU's normalizer and break iterator. The tokens are the same.
  void SetFastPathsForTesting(bool on);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// If `text` is one ASCII word the contract turns into exactly one token without ICU's help,
// sets *token to it and returns true: letters, digits and '_', at least one letter or digit,
// and single middle characters where ICU's word break joins across them: '.' and '\'' between
// two letters or two digits, ',' and ';' between two digits ("irq.h", "dev_id.devno", "don't",
// "3.14", "1,000"; not ':', which ICU's root rules take out of UAX #29's MidLetter). NFKC_Casefold
// lowercases ASCII letters and changes nothing else; ICU's word break keeps such a run whole;
// '_'-only runs are left to ICU, which keeps "__" but drops "_". Otherwise returns false: tokenize
// with a Tokenizer. A query of such words (most queries) is parsed without loading ICU's data:
// about 1.1-1.4 ms of a one-shot query process.
bool AsciiWordToken(std::string_view text, std::string* token);

// If `text` is ASCII and each of its words (the runs between ASCII whitespace: space, \t, \n,
// \v, \f, \r) gives AsciiWordToken's one token, appends those tokens in text order to *tokens
// and returns true: they are the text's tokens, since no word-break rule joins anything across
// ASCII whitespace (WB3d joins only spaces; ASCII has no Extend or Format character to attach
// to it). A text of whitespace alone appends nothing and returns true. Otherwise returns false
// and leaves *tokens as it was. (A query line of plain words, parsed without a Tokenizer.)
bool AsciiWordTokens(std::string_view text, std::vector<std::string>* tokens);

// Returns the sorted set of distinct tokens of text (a fresh Tokenizer per call).
std::vector<std::string> TokenSet(std::string_view text);

// Returns every token of text in order with its source range (a fresh Tokenizer per call).
std::vector<PositionedToken> TokenSequence(std::string_view text);

}  // namespace bitsift::tokenizer

#endif  // BITSIFT_TOKENIZER_TOKENIZER_H_
