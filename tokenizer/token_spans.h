// Where the tokens of a text come from in its bytes: for showing tokens to a person
// (`bitsift tokenize`). Indexing and querying never need it.
#ifndef BITSIFT_TOKENIZER_TOKEN_SPANS_H_
#define BITSIFT_TOKENIZER_TOKEN_SPANS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::tokenizer {

// One token and the bytes [begin, end) of the text it was made from.
struct TokenSpan {
  std::string token;
  uint64_t begin = 0, end = 0;
};

// Returns the tokens of `text` exactly as Tokenizer::Tokenize emits them (same tokens, same
// order, repeats included), each with its source range: the smallest run of whole
// normalization segments of `text` (a character with its combining marks; an invalid UTF-8
// sequence counts as the U+FFFD it becomes) whose NFKC_Casefold form holds the token. A
// character that normalization expands into several (U+FB01 "ﬁ" -> "fi") belongs whole to every
// token made from its expansion, so neighbouring ranges may overlap, as the bigrams of one
// kana/ideographic run do. A token that cannot be placed (only possible past a forced chunk cut,
// in a run of more than Tokenizer::kMaxChunkBytes without a space) gets an empty range at the
// end of the previous one. Throws std::runtime_error if ICU's data cannot be loaded.
//
// DESIGN NOTE: the tokenizer itself is left untouched. Every token is a substring of the
// normalized text (a word segment, or two adjacent characters of a run), and tokens come in
// text order, so each is found by searching the normalized text from the end of the previous
// token (from one character after the previous token's start for the next bigram of a run).
// Normalizing segment by segment gives the same text as normalizing it whole (a segment starts
// where Normalizer2::hasBoundaryBefore holds) and maps every normalized byte to its segment.
std::vector<TokenSpan> TokenSpans(std::string_view text);

// The size from which ForEachTokenSpan looks for a place to cut the text.
inline constexpr size_t kSpanPieceBytes = 1 << 20;

// The same spans, passed to `sink` one by one in order: memory stays bounded by pieces of about
// `piece_bytes` (the text is cut after a newline followed by an ASCII character, a place where
// the contract cannot see a cut, so the tokens are those of the whole text).
void ForEachTokenSpan(std::string_view text, const std::function<void(const TokenSpan&)>& sink,
                      size_t piece_bytes = kSpanPieceBytes);

}  // namespace bitsift::tokenizer

#endif  // BITSIFT_TOKENIZER_TOKEN_SPANS_H_
