// The token contract (v2), shared by indexing and querying (see README "What is a term").
//
//   1. bytes are decoded as UTF-8; each invalid sequence becomes U+FFFD;
//   2. the text is normalized with ICU's NFKC_Casefold;
//   3. it is segmented with ICU's root-locale word BreakIterator and a segment is kept when its
//      rule status is >= 100 (numbers, letters, kana, ideographs);
//   4. a maximal run of directly adjacent kept kana/ideographic segments (status 300..499) is
//      replaced by its overlapping code-point bigrams (a one-code-point run yields itself);
//   5. every other kept segment is a word: its Latin letters lose their diacritics (NFD, every
//      nonspacing mark whose base character is in the Latin script dropped, NFC; unless the
//      rules keep diacritics), and a word holding a character that is not a letter, mark,
//      digit or connector punctuation (general categories L, M, N, Pc) has parts: each maximal
//      run of such characters ("stdio.h" -> "stdio", "h");
//   6. a document's terms are the set of its words, parts and bigrams; a phrase is matched
//      against the sequence of its positions: parts stand for their word, and a word without
//      parts (or a bigram) is one position.
//
// Long inputs are processed in chunks cut only where the contract cannot see the cut (after a
// newline, space, tab, ideographic space or ideographic full stop/comma, before a character
// that starts a new normalization segment and is not a word-break Extend/Format/ZWJ), so the
// chunked result equals the whole-text result. Only a run of more than kMaxChunkBytes without any
// such place is cut elsewhere (a token spanning that cut is split in two).
#ifndef BITSIFT_TOKENIZER_TOKENIZER_H_
#define BITSIFT_TOKENIZER_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::tokenizer {

// The rules of the contract an index chooses (stored with it: a query must use its index's).
struct TokenRules {
  bool fold_diacritics = true;  // clause 5's folding of Latin diacritics
  // English stems as extra terms (tokenizer/stemmer.h): an index option, read by the indexer
  // (which adds them) and the query parser (an unquoted word is its stem); the tokens
  // themselves do not change.
  bool stem_english = false;
  bool operator==(const TokenRules& o) const {
    return fold_diacritics == o.fold_diacritics && stem_english == o.stem_english;
  }
  bool operator!=(const TokenRules& o) const { return !(*this == o); }
};

// The rules as the index settings that record them ("tokens.keep_diacritics": "true" or
// "false"), added to *settings.
void AddTokenSettings(const TokenRules& rules, std::map<std::string, std::string>* settings);
// The rules the settings record (the defaults for a missing key). Throws Error(kCorrupt) for a
// malformed value or an unknown "tokens." key (settings written by a newer bitsift).
TokenRules TokenRulesFromSettings(const std::map<std::string, std::string>& settings);

// What a token is in its text (clauses 4-6).
enum class TokenRole : uint8_t {
  kWord,   // a word without parts, or a bigram: a term and one phrase position
  kWhole,  // a word with parts: a term, not a position; its parts follow it at once
  kPart,   // a part of the whole before it: a term and one phrase position
};

// Whether a token of this role is a phrase position (every role but kWhole).
inline bool IsPosition(TokenRole role) { return role != TokenRole::kWhole; }

// Receives tokens in text order (a token may repeat). The view is valid only during the call.
// A document's terms are every token it receives, whatever the role.
class TokenSink {
 public:
  virtual ~TokenSink() = default;
  virtual void OnToken(std::string_view token, TokenRole role) = 0;
  // Called before the first token of each run of kana/ideographic segments (its first bigram,
  // or the character of a one-character run); each later bigram of the run shares its first
  // character with the token before it (OffsetTokenSink's `continues_run`).
  virtual void OnRunStart() {}
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
  // token shares its first character with the previous token's last. A part's range is its own
  // characters; its whole's covers the word.
  // Returns true to go on, false to stop: no further token of this text is reported.
  virtual bool OnToken(std::string_view token, uint64_t begin, uint64_t end, bool continues_run,
                       TokenRole role) = 0;
};

// One token of a text and its source range (see OffsetTokenSink).
struct PositionedToken {
  std::string text;
  uint64_t begin = 0, end = 0;
  bool continues_run = false;
  TokenRole role = TokenRole::kWord;
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
  explicit Tokenizer(TokenRules rules = {});
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

  const TokenRules& rules() const;
  // Changes the rules for the next text (not for one being streamed with Feed).
  void SetRules(const TokenRules& rules);

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

// If `text` is one ASCII word the contract turns into exactly one word without ICU's help,
// sets *token to the word (its whole term: a word with '.', '\'', ',' or ';' has parts too,
// which are not given) and returns true: letters, digits and '_', at least one letter or digit,
// and single middle characters where ICU's word break joins across them: '.' and '\'' between
// two letters or two digits, ',' and ';' between two digits ("irq.h", "dev_id.devno", "don't",
// "3.14", "1,000"; not ':', which ICU's root rules take out of UAX #29's MidLetter). NFKC_Casefold
// lowercases ASCII letters and changes nothing else; ICU's word break keeps such a run whole;
// '_'-only runs are left to ICU, which keeps "__" but drops "_". Otherwise returns false: tokenize
// with a Tokenizer. A query of such words (most queries) is parsed without loading ICU's data:
// about 1.1-1.4 ms of a one-shot query process.
bool AsciiWordToken(std::string_view text, std::string* token);

// If `text` is ASCII and each of its words (the runs between ASCII whitespace: space, \t, \n,
// \v, \f, \r) gives AsciiWordToken's one word, appends those words in text order to *tokens
// and returns true: they are the text's tokens, since no word-break rule joins anything across
// ASCII whitespace (WB3d joins only spaces; ASCII has no Extend or Format character to attach
// to it). A text of whitespace alone appends nothing and returns true. Otherwise returns false
// and leaves *tokens as it was. (A query line of plain words, parsed without a Tokenizer: a
// document holds a word's parts whenever it holds the word, so the words alone decide it.)
bool AsciiWordTokens(std::string_view text, std::vector<std::string>* tokens);

// Returns the sorted set of distinct tokens of text, every role (a fresh Tokenizer per call).
std::vector<std::string> TokenSet(std::string_view text, TokenRules rules = {});

// Returns every token of text in order with its source range and role (a fresh Tokenizer per
// call). Its phrase positions are the tokens for which IsPosition(role) holds.
std::vector<PositionedToken> TokenSequence(std::string_view text, TokenRules rules = {});

}  // namespace bitsift::tokenizer

#endif  // BITSIFT_TOKENIZER_TOKENIZER_H_
