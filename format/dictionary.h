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

#include "format/index_format.h"

namespace bitsift::format {

// Builds the on-disk hash table: `hashes[id]` is the hash of term id. Returns slots (a power of
// two at least twice the term count); slot value 0 = empty, else id + 1.
std::vector<uint32_t> BuildTermTable(const std::vector<uint64_t>& hashes);

// Read side: the dictionary sections of an open index. Every access goes through
// IndexFile::Touch, so it reads only verified chunks and stays inside its section.
struct DictionaryView {
  const IndexFile* file = nullptr;
  uint64_t slots = 0;  // TERM_TABLE entries: a power of two (or 0 for an empty dictionary)
  uint64_t term_count = 0;

  // The bytes of term `id` (< term_count). Throws Error(kCorrupt) if its offsets are out of
  // order or out of bounds, or if a chunk it reads is damaged.
  std::string_view Term(uint32_t id) const;
  // The document frequency of term `id` (< term_count). Throws Error(kCorrupt) for a damaged
  // chunk.
  uint32_t Df(uint32_t id) const;
  // Returns the id of term (whose HashTerm is `hash`), or nullopt if no document contains it.
  // Throws Error(kCorrupt) for a damaged chunk or term.
  std::optional<uint32_t> Find(std::string_view term, uint64_t hash) const;
};

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_DICTIONARY_H_
