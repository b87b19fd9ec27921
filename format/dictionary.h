// The term dictionary: exact term strings <-> dense term ids.
//
// Final ids are given by decreasing document frequency (frequent terms get small ids, which
// keeps forward-store gaps small; indexer/term_interner.h assigns provisional ids while
// documents are tokenized). On disk the dictionary is three arrays by term id (offsets,
// bytes, document frequency) plus an open-addressing table keyed by the term's 64-bit hash.
#ifndef BITSIFT_FORMAT_DICTIONARY_H_
#define BITSIFT_FORMAT_DICTIONARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::format {

// Builds the on-disk hash table: `hashes[id]` is the hash of term id. Returns slots (a power of
// two at least twice the term count); slot value 0 = empty, else id + 1.
std::vector<uint32_t> BuildTermTable(const std::vector<uint64_t>& hashes);

// Read side: the dictionary sections of an open index.
struct DictionaryView {
  const uint64_t* offsets = nullptr;  // term_count + 1
  const char* bytes = nullptr;
  uint64_t bytes_length = 0;
  const uint32_t* df = nullptr;
  const uint32_t* table = nullptr;
  uint64_t slots = 0;  // power of two
  uint64_t term_count = 0;

  std::string_view Term(uint32_t id) const {
    return std::string_view(bytes + offsets[id], offsets[id + 1] - offsets[id]);
  }
  // Returns the id of term, or nullopt if no document contains it.
  std::optional<uint32_t> Find(std::string_view term, uint64_t hash) const;
};

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_DICTIONARY_H_
