// The token contract at work (README "What is a term"): the terms of a text, and its tokens in
// order with their roles and source bytes.
#ifndef BITSIFT_TOKENIZE_H_
#define BITSIFT_TOKENIZE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bitsift/build.h"
#include "bitsift/status.h"

namespace bitsift {

// Returns in *tokens the sorted distinct terms of `text` under the token contract (README "What
// is a term"): words, their parts and bigrams, with `options.keep_diacritics` as an index built
// with `options` has it. Returns kInternal only if ICU's data cannot be loaded.
Status Tokenize(std::string_view text, std::vector<std::string>* tokens,
                const IndexOptions& options = {});

// What a token is in its text (README "What is a term").
enum class TokenRole {
  kWord,   // a word without parts, or a bigram of a CJK run: a term and one phrase position
  kWhole,  // a word with parts ("stdio.h"): a term, not a phrase position; its parts follow
  kPart,   // a part of the whole before it ("stdio", "h"): a term and one phrase position
};

// One token of a text and the bytes [begin, end) of the text it was made from.
struct TextToken {
  std::string token;   // as the index stores it (normalized)
  uint64_t begin = 0;  // first byte of its source characters
  uint64_t end = 0;    // one past the last byte of its source characters
  TokenRole role = TokenRole::kWord;
};

// Returns in *tokens the tokens of `text` under the token contract in text order, repeats
// included (a document's terms are their set; its phrase positions those whose role is not
// kWhole), each with its role and source byte range (a part's own characters): its source
// characters, whole (a character with its combining marks; an invalid UTF-8 sequence as the
// U+FFFD it becomes). A character that normalization expands belongs whole to every token made
// from it, and the bigrams of a kana/ideographic run overlap by a character, so ranges may
// overlap. `options.keep_diacritics` as for Tokenize. Returns an empty vector for a text without
// tokens; kInternal only if ICU's data cannot be loaded.
Status TokenizeInOrder(std::string_view text, std::vector<TextToken>* tokens,
                       const IndexOptions& options = {});
// The same tokens passed to `on_token` one by one, in order, with memory bounded whatever the
// size of `text` (for large texts).
Status TokenizeInOrder(std::string_view text, const std::function<void(const TextToken&)>& on_token,
                       const IndexOptions& options = {});

}  // namespace bitsift

#endif  // BITSIFT_TOKENIZE_H_
