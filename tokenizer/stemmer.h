// English stems as extra terms (an index option): Snowball's "english" stemmer (Porter2, through
// libstemmer) applied to a term, the result marked with a leading '~' so that it never equals a
// word (a term never starts with '~': tokens are runs of letters, marks, digits and connector
// punctuation). A document holding "models" also holds "~model"; an unquoted query word of a
// stemmed index is its stem term, so `model` finds `models` while `"model"` stays exact.
#ifndef BITSIFT_TOKENIZER_STEMMER_H_
#define BITSIFT_TOKENIZER_STEMMER_H_

#include <string>
#include <string_view>

namespace bitsift::tokenizer {

inline constexpr char kStemMark = '~';

// Whether `term` is given a stem: it starts with an ASCII letter (Latin words once folded;
// Snowball's english stemmer leaves other scripts as they are, and Xapian stems no term that
// starts with a digit).
inline bool Stemmable(std::string_view term) {
  return !term.empty() && term[0] >= 'a' && term[0] <= 'z';
}

// The stem term of `term` (precondition: Stemmable(term)): kStemMark, then its Snowball english
// stem. Thread-safe (a stemmer per thread). Throws std::bad_alloc if the stemmer cannot be made.
std::string StemTerm(std::string_view term);

// Whether `term` is a stem term.
inline bool IsStemTerm(std::string_view term) { return !term.empty() && term[0] == kStemMark; }

}  // namespace bitsift::tokenizer

#endif  // BITSIFT_TOKENIZER_STEMMER_H_
