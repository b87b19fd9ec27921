// The term dictionary: exact term strings <-> dense term ids (docs/index_format.md).
//
// Ids are given by decreasing document frequency, ties by term bytes (frequent terms get small
// ids, which keeps forward-store gaps small and puts the exact-row terms first;
// indexer/term_interner.h assigns provisional ids while documents are tokenized).
//
// DESIGN NOTE: the dictionary was 77% of a linux-files index in format 3 (offsets, bytes, df
// and a hash table by id: 52 bytes a term). Format 4 stores the terms once, in byte order,
// front-coded in blocks of kDictBlockTerms:
//   DICT_INDEX   one DictBlockRecord per block: an 8-byte key of its first term for the binary
//                search, its offset, and how many terms of document frequency 1 come before it
//   DICT_BLOCKS  per term: varint shared prefix length with the previous term of the block
//                (absent for the first), varint suffix length, the suffix bytes, varint code
//   DF_RUNS      {first id, df} for every run of equal document frequency (df decreasing)
// A term of df 1 (about two thirds of all terms) has code 0: its id is implied, because the
// ids of df-1 terms are consecutive and in byte order (the tie rule), so its id is
// singles_first + the df-1 terms before it. Any other term has code id + 1. Document frequency
// is a step function of the id, so DF_RUNS holds a few thousand pairs for millions of terms.
// Lookups binary-search DICT_INDEX (keys first, the first term on a key tie) and decode one
// block; prefix expansion reads one range of blocks; merges read both in byte order.
// Format 5 adds DICT_TOP, the key of every kDictTopStride-th block (one DICT_INDEX page): a
// lookup narrows to one page of DICT_INDEX there first. A one-shot process pays a page fault
// for every page it touches; a binary search over all of DICT_INDEX touched ~14 pages of a
// 1M-term segment, now 1 of DICT_TOP and 1-2 of DICT_INDEX (docs/design.md).
#ifndef BITSIFT_FORMAT_DICTIONARY_H_
#define BITSIFT_FORMAT_DICTIONARY_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/bloom.h"
#include "format/index_format.h"
#include "format/term_filter.h"

namespace bitsift::format {

inline constexpr uint32_t kDictBlockTerms = 16;
// DICT_TOP holds the key of blocks 0, kDictTopStride, 2 * kDictTopStride, ...
inline constexpr uint64_t kDictTopStride = 256;

struct DictBlockRecord {
  uint64_t key;             // DictKey of the block's first term
  uint32_t offset;          // of the block in DICT_BLOCKS (the section is below 4 GiB)
  uint32_t singles_before;  // terms of document frequency 1 in the blocks before this one
};
static_assert(sizeof(DictBlockRecord) == 16);

struct DfRun {
  uint32_t first_id;  // the run's first term id; the run ends where the next one starts
  uint32_t df;        // document frequency of its terms (strictly decreasing run to run)
};
static_assert(sizeof(DfRun) == 8);

// The first 8 bytes of term, big-endian and zero-padded: keys order as the terms' bytes do
// (a tie says only that the first 8 bytes are equal).
uint64_t DictKey(std::string_view term);

// The fingerprint of a dictionary that `check` recomputes from its terms (MetaRecord): the XOR
// over ids of a mix of the id and HashTerm(term). The dictionary has no other redundancy: a
// term changed behind valid checksums is found by it.
uint64_t TermFingerprint(const std::vector<uint64_t>& hashes_by_id);
// The part of TermFingerprint that term `id` of hash `hash` contributes (XORed): for a writer
// that does not hold every hash at once (a merge).
uint64_t TermFingerprintPart(uint64_t hash, uint64_t id);

// The DICT_TOP of a dictionary whose DICT_INDEX is `index`.
std::vector<uint64_t> DictTopKeys(const std::vector<DictBlockRecord>& index);

// The DF_RUNS of a dictionary whose document frequencies by id are `df` (non-increasing, > 0).
std::vector<DfRun> EncodeDfRuns(const std::vector<uint32_t>& df);

// Encodes the dictionary blocks. Usage: Add every term in strictly ascending byte order with
// its id; then blocks() and index() are the DICT_BLOCKS and DICT_INDEX sections.
class DictionaryWriter {
 public:
  // singles_first: the smallest id of a term of document frequency 1 (the term count if none);
  // term_count: how many terms will be added (sizes TERM_FILTER; an upper bound will do).
  DictionaryWriter(uint32_t singles_first, uint64_t term_count)
      : singles_first_(singles_first), filter_(term_count) {}

  // Adds `term` (non-empty, after the previous one in byte order) with id `id`. An id of
  // singles_first or more must be the next df-1 id in order. Throws Error(kInvalidArgument)
  // if the order or the id breaks these rules, or if the section would reach 4 GiB.
  void Add(std::string_view term, uint32_t id);

  uint64_t term_count() const { return terms_; }
  const std::vector<DictBlockRecord>& index() const { return index_; }
  // The DICT_BLOCKS bytes added since the last call (all of them the first time): a caller
  // may write the section in pieces as it adds terms.
  std::string TakeBlocks() {
    flushed_ += blocks_.size();
    return std::exchange(blocks_, {});
  }
  // Bytes added since the last TakeBlocks.
  uint64_t pending_bytes() const { return blocks_.size(); }
  // The TERM_FILTER section (format/term_filter.h) of the terms added.
  const std::vector<uint32_t>& filter() const { return filter_.words(); }

 private:
  uint32_t singles_first_;
  uint32_t singles_ = 0;
  uint64_t terms_ = 0;
  std::string prev_;
  std::string blocks_;
  uint64_t flushed_ = 0;  // bytes taken by TakeBlocks
  std::vector<DictBlockRecord> index_;
  TermFilterWriter filter_;
};

// Read side: the dictionary sections of an open index. Every access goes through
// IndexFile::Touch, so it reads only verified chunks and stays inside its section; a damaged
// record throws Error(kCorrupt).
class DictionaryView {
 public:
  DictionaryView() = default;
  // Reads DF_RUNS (a few KiB) and checks the sections' sizes against term_count. Throws
  // Error(kCorrupt).
  DictionaryView(const IndexFile* file, uint64_t term_count);

  uint64_t term_count() const { return term_count_; }

  // The document frequency of term `id` (< term_count).
  uint32_t Df(uint32_t id) const;
  // The sum of Df over the ids [begin, end) (begin <= end <= term count).
  uint64_t DfTotal(uint32_t begin, uint32_t end) const;

  // False if TERM_FILTER rules `term` out (it is certainly not in the dictionary); true if it
  // may be (about 1% of absent terms pass). One 32-byte block read. Throws Error(kCorrupt) if
  // the block's chunk is damaged.
  bool MayContain(std::string_view term) const { return MayContainHash(HashTerm(term)); }
  // MayContain for a term whose HashTerm is `hash`.
  bool MayContainHash(uint64_t hash) const;
  // The whole TERM_FILTER, every chunk of it verified now (format/term_filter.h: `blocks`
  // blocks of kTermFilterBlockWords words; TermFilterBlock and TermFilterMayContain test a
  // hash as MayContainHash does). For a long-lived reader that tests many terms against several
  // segments at once and wants no per-probe checks; a one-shot reader keeps MayContainHash
  // (lazy verification: it reads a block or two). Throws Error(kCorrupt) for a damaged chunk.
  struct Filter {
    const uint32_t* words = nullptr;
    uint64_t blocks = 0;
    // The block a term of hash h sets, and whether that term may be in the dictionary.
    const uint32_t* Block(uint64_t h) const {
      return words + TermFilterBlock(h, blocks) * kTermFilterBlockWords;
    }
    bool MayContain(uint64_t h) const { return TermFilterMayContain(Block(h), h); }
  };
  Filter VerifiedFilter() const;
  // Returns the id of term, or nullopt if no document of the segment contains it.
  std::optional<uint32_t> Find(std::string_view term) const { return Find(term, HashTerm(term)); }
  // Find for a term whose HashTerm is `hash` (a caller that has it already).
  std::optional<uint32_t> Find(std::string_view term, uint64_t hash) const;
  // Looks up n terms (terms[i] of HashTerm hashes[i]) as Find does each, with their cache
  // misses overlapped: every lookup takes a step (a filter block, a probe of DICT_TOP or of
  // DICT_INDEX, a block) and asks for the memory of its next one before any takes its next
  // step, so the misses of a query's terms cost about one lookup's chain instead of n (a
  // cold lookup is ~10 dependent misses, ~1 us a term on a large dictionary). Returns true
  // with ids[i] the id of terms[i] if every term is in the dictionary; false as soon as one
  // is known absent (the others' ids are then unspecified), filters first.
  bool FindEvery(const std::string_view* terms, const uint64_t* hashes, size_t n,
                 uint32_t* ids) const;
  // Read-ahead for the lookups of several terms in a cold file (IndexFile::WillNeedPieces:
  // nothing is returned or changed). A lookup reads a TERM_FILTER block, then a DICT_INDEX
  // page, then a DICT_BLOCKS block, each only once the one before has arrived; asking for
  // every term's at once makes a query wait for one round of reads per step instead of one per
  // step and term. Stage 1 asks for the filter blocks and DICT_INDEX pages (it reads DICT_TOP
  // only); stage 2, called after stage 1 of every dictionary the query will search, reads
  // those (waiting for them) and asks for the blocks. Both do nothing when the file is warm
  // or not opened for random access.
  void WillNeedLookups(const std::vector<std::string>& terms, const std::vector<uint64_t>& hashes,
                       int stage) const;

  // Reads the terms in byte order one at a time, as a merge walks several dictionaries at once.
  // Usage: for (Cursor c(dict); c.Next();) use(c.term(), c.id());
  class Cursor {
   public:
    explicit Cursor(const DictionaryView& dict) : dict_(dict) {}
    // Moves to the next term (the first on the first call); false past the last.
    bool Next();
    std::string_view term() const { return block_.term; }
    uint32_t id() const { return block_.id; }

   private:
    friend class DictionaryView;
    struct Block {
      const uint8_t* p = nullptr;
      const uint8_t* limit = nullptr;
      uint64_t number = 0;  // block number
      uint64_t count = 0;   // terms in the block
      uint64_t next = 0;    // terms decoded
      uint64_t singles = 0;
      std::string term;
      uint32_t id = 0;
    };
    const DictionaryView& dict_;
    uint64_t block_number_ = 0;
    Block block_;
  };

  // Calls f(term, id) for every term starting with `prefix` ("" = every term), in byte order;
  // `term` is valid only during the call; f returns false to stop early. Returns the bytes of
  // DICT_BLOCKS decoded (statistics).
  uint64_t ForEachWithPrefix(std::string_view prefix,
                             const std::function<bool(std::string_view, uint32_t)>& f) const;

 private:
  // Decodes block b, calling f(term, id) for each term until f returns false; returns false if
  // f did.
  template <typename F>
  bool ScanBlock(uint64_t b, F&& f) const;
  // Positions *r before the first term of block b.
  void OpenBlock(uint64_t b, Cursor::Block* r) const;
  // A term of a block as stored: the first `shared` bytes of the previous term, then the
  // suffix (pointing into the block).
  struct RawTerm {
    uint64_t shared = 0;
    const uint8_t* suffix = nullptr;
    uint64_t suffix_length = 0;
  };
  // Decodes the next term of *r (r->next < r->count), whose previous term is previous_length
  // bytes long, into *t and r->id; at the last one, checks the block's end.
  void DecodeTerm(Cursor::Block* r, uint64_t previous_length, RawTerm* t) const;
  // DecodeTerm, then rebuilds the term in r->term.
  void NextTerm(Cursor::Block* r) const;
  // The id of term if block b holds it (one pass over the block, no term rebuilt).
  std::optional<uint32_t> FindInBlock(uint64_t b, std::string_view term) const;
  const DictBlockRecord& Block(uint64_t b) const;
  // The DF_RUNS entry of term `id` (< term count): the last run starting at or before it.
  const DfRun* RunOf(uint32_t id) const;
  // Where block b ends in DICT_BLOCKS: where the next one starts, or the section's end.
  uint64_t BlockEnd(uint64_t b) const;
  // The number of blocks whose first term is <= term (a binary search over the block keys).
  uint64_t BlocksStartingAtOrBefore(std::string_view term) const;
  // The blocks [lo, hi) DICT_TOP leaves to bisect for a term whose DictKey is `key`: those
  // below lo start <= the term, those from hi on start after it.
  std::pair<uint64_t, uint64_t> TopRange(uint64_t key) const;
  // DICT_TOP's entries: count, and key(t) for t < count.
  struct TopKeys {
    const uint8_t* p = nullptr;
    uint64_t count = 0;
    uint64_t key(uint64_t t) const {
      uint64_t k;
      std::memcpy(&k, p + t * sizeof(k), sizeof(k));
      return k;
    }
  };
  TopKeys Tops() const;
  // TopRange's answer for a term whose DictKey is `key`, given `below`, the number of DICT_TOP
  // entries whose key is less than it.
  std::pair<uint64_t, uint64_t> TopBlocks(const TopKeys& top, uint64_t below, uint64_t key) const;
  // Whether the first term of block b is <= term (b < blocks_).
  bool BlockStartsAtOrBefore(uint64_t b, std::string_view term, uint64_t key) const;
  [[noreturn]] void Bad(const std::string& what) const;

  const IndexFile* file_ = nullptr;
  uint64_t term_count_ = 0;
  uint64_t blocks_ = 0;
  uint64_t filter_blocks_ = 0;  // TERM_FILTER's 32-byte blocks
  uint64_t block_bytes_ = 0;
  uint32_t singles_first_ = 0;
  // DF_RUNS where the file holds it (verified by the constructor's Touch): read in place, not
  // copied, since a copy is fresh memory and every page of it a fault in a one-shot process.
  const DfRun* runs_ = nullptr;
  const DfRun* runs_end_ = nullptr;
};

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_DICTIONARY_H_
