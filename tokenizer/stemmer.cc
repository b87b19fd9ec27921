#include "tokenizer/stemmer.h"

#include <libstemmer.h>

#include <new>

namespace bitsift::tokenizer {
namespace {

// One stemmer per thread: Snowball's are re-entrant but not thread-safe, and costly to make.
struct ThreadStemmer {
  sb_stemmer* stemmer = sb_stemmer_new("english", nullptr);
  ~ThreadStemmer() { sb_stemmer_delete(stemmer); }
};

}  // namespace

std::string StemTerm(std::string_view term) {
  thread_local ThreadStemmer local;
  if (local.stemmer == nullptr) throw std::bad_alloc();
  const sb_symbol* stem =
      sb_stemmer_stem(local.stemmer, reinterpret_cast<const sb_symbol*>(term.data()),
                      static_cast<int>(term.size()));
  if (stem == nullptr) throw std::bad_alloc();
  std::string out(1, kStemMark);
  out.append(reinterpret_cast<const char*>(stem),
             static_cast<size_t>(sb_stemmer_length(local.stemmer)));
  return out;
}

}  // namespace bitsift::tokenizer
