// The on-disk index: one file, memory-mapped by readers. Full description: docs/index_format.md.
//
//   [Header 64 B][sections in kSectionOrder, CHUNK_SUMS and CHUNK_SUMS_INDEX last][table]
//
// Sections are laid out in kSectionOrder. Every section starts at a 64-byte aligned offset and
// is covered by an XXH3-64 checksum in the section table; the table and the header have
// checksums of their own. Section CHUNK_SUMS holds an XXH3-64 of every 4 KiB chunk of the other
// sections, so that a reader can verify a large section chunk by chunk as it first reads it
// (IndexFile::Touch) instead of all of it on open; CHUNK_SUMS_INDEX holds an XXH3-64 of every
// 4 KiB piece of CHUNK_SUMS, so that CHUNK_SUMS too is verified piece by piece (a one-shot
// query on a 7-segment index read ~80 pages of CHUNK_SUMS at open). Integers are
// little-endian. Section ids and struct layouts are stored on disk: never renumber or reorder.
#ifndef BITSIFT_FORMAT_INDEX_FORMAT_H_
#define BITSIFT_FORMAT_INDEX_FORMAT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "util/files.h"

namespace bitsift::format {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the index format is little-endian");

inline constexpr char kMagic[8] = {'B', 'I', 'T', 'S', 'I', 'F', 'T', '\x1a'};
// 9: DOC_BANDS (format/doc_bands.h) replaces DOC_COLUMNS: a document's band in a few bits and
// per-block counts, its column following from them (columns follow ids within a band), ~0.55
// instead of 4 bytes a document. 8: a document's path is in its DOC_FACTS record (one read per
// result for its path and facts, not three: DOCS, PATHS, DOC_FACTS); DOCS and PATHS are retired,
// DOC_COLUMNS holds the columns. 7: DOCS holds 16-byte DocEntry records (path, column); the other
// fields moved to DOC_FACTS, varint-coded (81 -> ~30 bytes a document on linux-paras' 1.2M
// paragraphs). A term's Bloom positions come from SplitMix64 instead of double hashing
// (format/bloom.h). TERM_FILTER. 6: DocRecord::column. 5: sparse rows (SPARSE_DATA, SPARSE_INDEX)
// for the rarest terms, MetaRecord of 96 bytes, DICT_TOP, CHUNK_SUMS_INDEX. 4: the front-coded
// dictionary (DICT_INDEX, DICT_BLOCKS, DF_RUNS). 3: the ENCODINGS section (DocRecord::encoding
// indexes it) and 4 KiB chunks. 2: segments (0.2).
inline constexpr uint32_t kFormatVersion = 11;
// Throws the error of a segment file that cannot be used: Error(kCorrupt) with "PATH: not a
// usable bitsift index: WHAT" (the API adds the command that rebuilds it). Every layer that finds
// a segment damaged, of another version or inconsistent reports it through this.
[[noreturn]] void CorruptIndex(const std::string& path, const std::string& what);

// Version of the token contract (README); an index is only valid for the same contract.
inline constexpr uint32_t kContractVersion = 2;

// Documents per 64-byte row block: rows are ANDed and skipped block by block. A band's rows
// are ceil(doc_count / 64) words long (a band of fewer than 512 documents, the largest ones,
// ends in a partial block).
inline constexpr uint64_t kDocsPerBlock = 512;

// A document with more Bloom-hashed terms than this gets no Bloom bits: it is placed in the
// segment's last band, of width 0 and k 0, whose documents are candidates for every Bloom term
// and are decided by verification. Bit-slicing such a document would cost at least
// 64 columns x ~9.6 bits x its terms (a 700k-term word list: 54 MB of rows).
inline constexpr uint64_t kMaxSignatureTerms = 1 << 17;

// Section ids: stored on disk, never renumber or reuse.
enum class SectionId : uint32_t {
  kMeta = 1,      // MetaRecord, then the indexed root directory (UTF-8 bytes)
  kBands = 2,     // BandRecord x band_count
  kBandDocs = 3,  // u32 document id for every column of every band
  kRows = 4,      // the bit-sliced rows of all bands, each 64-byte aligned
  // 5 and 6 held format 7's DocEntry records and paths (DOCS, PATHS): retired.
  // 7 to 10 held format 3's dictionary (term offsets, bytes, df, hash table): retired.
  kForwardOffsets = 11,  // u64 x (doc_count + 1) into kForwardData
  kForwardData = 12,     // forward records (format/forward_store.h)
  kChunkSums = 13,       // u64 XXH3-64 of every chunk of the other sections, in file order
  kEncodings = 14,       // the names DocRecord::encoding refers to (EncodeEncodingTable)
  kDictIndex = 15,       // DictBlockRecord per dictionary block (format/dictionary.h)
  kDictBlocks = 16,      // front-coded terms in byte order, kDictBlockTerms a block
  kDfRuns = 17,          // DfRun per run of equal document frequency
  kSparseData = 18,      // the document lists of the sparse terms (format/sparse_rows.h)
  kSparseIndex = 19,     // u64 offset into kSparseData per group of kSparseGroupTerms terms
  kDictTop = 20,         // u64 DICT_INDEX key of every kDictTopStride-th block
  kChunkSumsIndex = 21,  // u64 XXH3-64 of every kChunkBytes piece of kChunkSums
  kDocFacts = 22,        // the documents' records, paths included (format/doc_table.h)
  kDocFactsIndex = 23,   // u64 offset into kDocFacts per kDocFactsBlock documents, and the end
  kTermFilter = 24,      // split-block Bloom filter of the dictionary's terms (term_filter.h)
  // 25 held format 8's DOC_COLUMNS (a u32 column per document): retired.
  kDocBands = 26,  // every document's band, whence its column (format/doc_bands.h)
};
// Sections in a file, and the largest id (spans are indexed by id - 1).
inline constexpr uint32_t kSectionCount = 19;
inline constexpr uint32_t kMaxSectionId = 26;
// The order of the sections in the file and in the section table: CHUNK_SUMS, which covers
// all the others, and CHUNK_SUMS_INDEX, which covers CHUNK_SUMS, come last (the writer's
// Finish writes them).
// The dictionary comes first, so that a merge can stream it into the file while it gives the
// terms their new ids (which the rows and forward records after it need).
inline constexpr SectionId kSectionOrder[kSectionCount] = {
    SectionId::kDictBlocks,     SectionId::kDictIndex,   SectionId::kDictTop,
    SectionId::kDfRuns,         SectionId::kTermFilter,  SectionId::kMeta,
    SectionId::kBands,          SectionId::kBandDocs,    SectionId::kRows,
    SectionId::kDocBands,       SectionId::kDocFacts,    SectionId::kDocFactsIndex,
    SectionId::kForwardOffsets, SectionId::kForwardData, SectionId::kSparseData,
    SectionId::kSparseIndex,    SectionId::kEncodings,   SectionId::kChunkSums,
    SectionId::kChunkSumsIndex};

// Sections are checksummed in chunks of kChunkBytes, aligned to the section's start (the last
// chunk of a section is shorter). A section of L bytes has ChunkCount(L) chunks.
inline constexpr uint32_t kChunkShift = 12;
inline constexpr uint64_t kChunkBytes = uint64_t{1} << kChunkShift;  // 4 KiB
constexpr uint64_t ChunkCount(uint64_t length) { return (length + kChunkBytes - 1) >> kChunkShift; }

// The name of a section in messages ("ROWS"), or "UNKNOWN".
const char* SectionName(SectionId id);

struct FileHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t section_count;
  uint64_t file_size;
  uint64_t section_table_offset;
  uint64_t section_table_checksum;
  uint8_t reserved[16];
  uint64_t header_checksum;  // XXH3-64 of the 56 bytes before it
};
static_assert(sizeof(FileHeader) == 64);

struct SectionEntry {
  uint32_t id;
  uint32_t reserved;
  uint64_t offset;
  uint64_t length;
  uint64_t checksum;  // XXH3-64 of the section's bytes
};
static_assert(sizeof(SectionEntry) == 32);

struct MetaRecord {
  uint64_t doc_count;
  uint64_t term_count;
  uint64_t band_count;
  uint64_t term_fingerprint;  // TermFingerprint of the dictionary (format 3: hash table slots)
  double fp_rate;
  uint64_t input_bytes;
  int64_t build_time_unix;
  uint32_t contract_version;
  uint32_t exact_terms;  // terms 0..exact_terms-1 have an exact row per band (frequent terms)
  char icu_version[16];  // the ICU that tokenized the documents, NUL-padded
  // Terms sparse_first..term_count-1 (those in at most sparse_max_df documents, but never an
  // exact term) have a sparse row, their exact document list, instead of Bloom bits. The
  // segment's own threshold: SegmentSparseMaxDf of the index setting and its documents.
  uint32_t sparse_max_df;
  uint32_t sparse_first;
  uint64_t reserved;  // 0
};
static_assert(sizeof(MetaRecord) == 96);

// The first term with a document list in SPARSE_DATA (format 10): every term but the exact
// ones. The Bloom terms, [exact_terms, sparse_first), have their Bloom bits and a list, and a
// query takes whichever costs it less to read (format::SegmentReader::UsesList); the sparse
// terms, [sparse_first, term_count), only the list. Before format 10 lists began at
// sparse_first. docs/design.md, "Signatures and rows".
inline uint32_t ListFirst(const MetaRecord& m) { return m.exact_terms; }

// A band has `width` Bloom rows followed by MetaRecord::exact_terms exact rows, each
// words_per_row = ceil(doc_count / 64) words; the band's rows start 64-byte aligned (zero
// words pad the previous band). A band of width 0 and k 0 holds documents with more than
// kMaxSignatureTerms Bloom-hashed terms: only exact rows; verification decides the rest.
struct BandRecord {
  uint64_t rows_offset;    // byte offset of row 0 within kRows (64-byte aligned)
  uint64_t width;          // m: Bloom rows in the band
  uint64_t words_per_row;  // 64-bit words per row (a multiple of 8)
  uint64_t first_column;   // index of the band's column 0 in kBandDocs
  uint64_t max_terms;      // Bloom-hashed (non-exact) terms of the band's largest document
  uint32_t k;              // bit positions per term
  uint32_t doc_count;      // columns in use
};

// The bytes of one row of `band`.
constexpr uint64_t RowBytes(const BandRecord& band) { return band.words_per_row * 8; }
// Where row r of `band` starts within kRows, in bytes: rows [0, width) are its Bloom rows, row
// width + t the exact row of term t. The one place a row's address is computed.
constexpr uint64_t RowOffset(const BandRecord& band, uint64_t r) {
  return band.rows_offset + r * RowBytes(band);
}
// The exact row of term t (< MetaRecord::exact_terms) of `band`.
constexpr uint64_t ExactRow(const BandRecord& band, uint32_t t) { return band.width + t; }
static_assert(sizeof(BandRecord) == 48);

// One document of a segment, whole (in memory). On disk its path and facts are its DOC_FACTS
// record (format/doc_table.h) and its column follows from DOC_BANDS (format/doc_bands.h). The file
// facts (file_size, mtime_ns, ctime_ns, inode) are what an update compares with a fresh stat to
// decide that a file is unchanged and need not be read.
struct DocRecord {
  uint64_t path_offset;  // the builder's: into its buffer of paths (not stored)
  uint32_t path_length;
  uint32_t term_count;
  uint64_t size;       // bytes of text indexed (after decoding)
  uint64_t file_size;  // st_size when indexed (the text size for in-memory documents)
  int64_t mtime_ns;    // modification time, nanoseconds since the epoch
  int64_t ctime_ns;    // status change time (0 for in-memory documents)
  uint64_t inode;      // st_ino (0 for in-memory documents)
  uint32_t encoding;   // the encoding its text was read in: an index into ENCODINGS (0 = UTF-8)
  uint32_t column;     // its column among all bands' (BAND_DOCS[column] is this document), or
                       // kNoColumn for a document with no term (it is in no band)
};
inline constexpr uint32_t kNoColumn = UINT32_MAX;

// The ENCODINGS section: u32 count, then count x { u8 length, that many bytes of the name }.
// Name 0 is always "UTF-8" (in-memory documents, and DocRecords of files read as UTF-8); a
// name is 1..255 printable ASCII bytes ("GB18030", "UTF-16LE", "windows-1251"), no two alike.
inline constexpr char kUtf8EncodingName[] = "UTF-8";
// The section's bytes for `names`. Precondition: names satisfy the rules above.
std::string EncodeEncodingTable(const std::vector<std::string>& names);
// Reads an ENCODINGS section into *names. Returns "" on success, otherwise the problem (a count
// or length past the section's end, bytes after the last name, an empty, non-ASCII or repeated
// name, name 0 not "UTF-8"); *names is then unspecified.
std::string ParseEncodingTable(std::string_view bytes, std::vector<std::string>* names);

// Writes sections in kSectionOrder to an AtomicFileWriter, then CHUNK_SUMS, the table and the
// header. Usage: (AddSection | BeginSection Append* EndSection)* Finish. Throws Error(kIo).
class IndexFileWriter {
 public:
  // Starts writing a new version of `path` (beside it, renamed over it by Finish).
  explicit IndexFileWriter(const std::string& path);
  ~IndexFileWriter();
  // Appends section `id` (every one but kChunkSums, in kSectionOrder) and records its
  // checksum and chunk checksums. Throws Error(kInvalidArgument) for kChunkSums, which Finish
  // writes, or for a section out of order.
  void AddSection(SectionId id, const void* data, size_t length);
  // The same for a section that is an array of trivially copyable records, or bytes.
  template <typename T>
  void AddSection(SectionId id, const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    AddSection(id, v.data(), v.size() * sizeof(T));
  }
  void AddSection(SectionId id, const std::string& bytes) {
    AddSection(id, bytes.data(), bytes.size());
  }
  // The same for a section written in pieces (a merge streams its rows band by band): the
  // section is the concatenation of the Appends between BeginSection and EndSection.
  void BeginSection(SectionId id);
  void Append(const void* data, size_t length);
  void EndSection();
  // Writes CHUNK_SUMS, the section table and the header, then commits the file atomically.
  // Returns the total file size.
  uint64_t Finish();

 private:
  struct Streaming;

  AtomicFileWriter out_;
  std::vector<SectionEntry> entries_;
  std::vector<uint64_t> chunk_sums_;
  std::unique_ptr<Streaming> open_;  // the section being written
};

// A mapped index file. Opening verifies the header, the section table (order, alignment,
// bounds), and the checksums of META, BANDS, CHUNK_SUMS and every section of at most one chunk;
// the chunks of the other sections are verified on first access through Touch, and VerifyAll
// verifies everything. Read-only and safe to share between threads (Touch included).
class IndexFile {
 public:
  // How the file's reader will read it. kScan: in order (merges, check), with the kernel's
  // read-around on page faults. kRandom: scattered pages (queries), as AdviseRandomAccess
  // describes, from the very first byte opening reads: a fault there would otherwise read up
  // to read_ahead_kb around its page (at 8 MiB, ~7 ms of a cold open).
  // kOneShot: kRandom for a process that answers a query and exits; once chunks verified
  // (first read) through the mapping have touched OneShotReleaseWindows() fault-around windows
  // (64 KiB), the mapping's pages are dropped from the process's resident set
  // (MappedFile::ReleasePages; the page cache keeps them, a later read faults them in again).
  // A fault maps up to 16 neighbouring pages the page cache holds (fault-around, which
  // MADV_RANDOM does not turn off), so a query reading thousands of scattered records counted
  // 100-140 MB of them as resident (docs/design.md, "One-shot queries").
  //
  // A one-shot reader copies instead of mapping (copy_reads(); OneShotCopyReads decides): a
  // first touch of a mapped page costs 7-15 us where it traps to the hypervisor (a
  // paravirtualized guest) and ~2 us with fault-around on KVM, a 4 KiB pread ~2 us into a
  // buffer reused; by copy was faster on both (docs/design.md, "One-shot queries").
  enum class Access { kScan, kRandom, kOneShot };

  // Maps `path` and verifies what opening verifies (above). Throws Error(kNotFound) if it does
  // not exist and Error(kCorrupt) naming the path and the problem if it is not an index of this
  // version or a part verified at open is damaged.
  explicit IndexFile(const std::string& path, Access access = Access::kScan);
  ~IndexFile();
  IndexFile(const IndexFile&) = delete;
  IndexFile& operator=(const IndexFile&) = delete;

  // The bytes of a section, NOT verified unless the section is one that opening verifies, or
  // VerifyAll has run: read a lazily verified section through Touch.
  std::string_view Section(SectionId id) const {
    const Span& s = span(id);
    return std::string_view(reinterpret_cast<const char*>(s.data), s.length);
  }
  // Section(id) as an array of T (sections are 64-byte aligned). Same caveat as Section.
  template <typename T>
  const T* SectionAs(SectionId id) const {
    return reinterpret_cast<const T*>(span(id).data);
  }
  // The bytes [offset, offset + length) of section `id`, after verifying every chunk they
  // cover that is not verified yet. Throws Error(kCorrupt) naming the path, the chunk, the
  // section and the repair if a chunk's checksum does not match, or if the range is not
  // inside the section. A chunk already verified costs one relaxed atomic load and a bit test.
  //
  // With copy_reads(), the bytes are read with pread into memory the file owns until it is
  // closed (each call copies again: for what a one-shot query reads a few times, such as paths
  // and dictionary blocks; what it reads per candidate goes through Read or ReadView).
  const uint8_t* Touch(SectionId id, uint64_t offset, uint64_t length) const {
    const Span& s = span(id);
    if (copies(id)) [[unlikely]]
      return CopyOut(id, s, offset, length);
    Verify(id, s, offset, length);
    return s.data + offset;
  }
  // Touch's bytes copied to dst (length bytes): with copy_reads() read with pread straight
  // into dst. Same checks and errors as Touch.
  void Read(SectionId id, uint64_t offset, uint64_t length, void* dst) const {
    const Span& s = span(id);
    if (copies(id)) [[unlikely]] {
      CopyRange(id, s, offset, length, dst);
      return;
    }
    Verify(id, s, offset, length);
    if (length != 0) std::memcpy(dst, s.data + offset, length);
  }
  // Touch's bytes, valid until *buffer is next used: the mapping itself (no copy) unless
  // copy_reads(), then read into *buffer (grown as needed and reused: a reader of many
  // records passes the same buffer, so no new memory is touched for each).
  const uint8_t* ReadView(SectionId id, uint64_t offset, uint64_t length,
                          std::vector<uint8_t>* buffer) const {
    const Span& s = span(id);
    if (!copies(id)) {
      Verify(id, s, offset, length);
      return s.data + offset;
    }
    if (buffer->size() < length) buffer->resize(length);
    CopyRange(id, s, offset, length, buffer->data());
    return buffer->data();
  }
  // Touch's bytes, valid until this thread's next read of a copied section through Read,
  // ReadView or ScratchView: the mapping itself unless copies(id), then the chunks around them
  // read with one pread into the thread's scratch, the one buffer of all such reads (no copy
  // out of it, no chunk cache: a scan of long pieces, as a row's AND or a span of entries,
  // touches no memory but the scratch, whose pages are fresh only the first time).
  const uint8_t* ScratchView(SectionId id, uint64_t offset, uint64_t length) const {
    const Span& s = span(id);
    if (!copies(id)) {
      Verify(id, s, offset, length);
      return s.data + offset;
    }
    return ReadToScratch(id, s, offset, length);
  }
  // Whether reads go through pread instead of the mapping (Access::kOneShot, unless
  // OneShotCopyReads says otherwise). The mapping is then only used for read-ahead hints, the
  // parts opening verifies and the sections copies() leaves mapped. Decided when first asked.
  bool copy_reads() const {
    const int state = copy_state_.load(std::memory_order_relaxed);
    return (state == kUndecided ? DecideCopyReads() : state) == kCopy;
  }
  // Whether section `id` is read by copy now: copy_reads(), until the section turns out to be
  // read densely (a query with many results reads most of DOC_FACTS: kDenseHits cache hits
  // a chunk read, after kDenseMinMisses chunks), where the mapping's faults, each mapping 16
  // neighbouring pages, cost less than a copy per record. From then on it is read through the
  // mapping, as without copy_reads().
  // Only the sections read per candidate or per result are copied (ROWS, BAND_DOCS, the
  // forward store, DOC_BANDS, the documents' records): the dictionary's few pages cost less
  // through the mapping, whose faults map their neighbours too (a copy touches a new page of the
  // reader's memory for each chunk it reads first).
  bool copies(SectionId id) const {
    return copy_state_.load(std::memory_order_relaxed) != kMap &&  // (a query's reader: no)
           ((kCopiedSections >> static_cast<uint32_t>(id)) & 1) &&
           !dense_[static_cast<uint32_t>(id) - 1].load(std::memory_order_relaxed) && copy_reads();
  }
  // Makes section `id` read through the mapping from now on, as if it had turned out to be
  // read densely: for a reader that knows it will read a large share of its chunks (a query's
  // many results). No effect on what reads return.
  void ReadDensely(SectionId id) const {
    dense_[static_cast<uint32_t>(id) - 1].store(true, std::memory_order_relaxed);
  }
  static constexpr uint64_t kCopiedSections =
      uint64_t{1} << static_cast<uint32_t>(SectionId::kRows) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kBandDocs) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kForwardOffsets) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kForwardData) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kDocBands) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kDocFacts) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kDocFactsIndex);
  static constexpr uint64_t kDenseMinMisses = 256, kDenseHits = 8;
  // Verifies the whole file: every section checksum, every chunk checksum, and that the padding
  // between sections is zero. Throws Error(kCorrupt) naming the path and the first problem.
  void VerifyAll() const;
  // For readers that touch scattered pages (queries): no read-around on page faults
  // (MappedFile::AdviseRandom); instead each chunk is asked for whole (one request) before it
  // is verified, and WillNeedPieces asks for a batch's chunks at once. Call it before the file
  // is shared between threads. Scans (merges, check) leave the kernel's read-around on.
  void AdviseRandomAccess() {
    file_.AdviseRandom();
    random_ = true;
  }
  bool random_access() const { return random_; }
  // Access::kOneShot's period, in fault-around windows (64 KiB) first touched by chunks
  // verified through the mapping since the last drop: kOneShotReleaseWindows by default, ~32
  // MiB of mapped pages between drops whether the reads are scattered (a window a chunk) or
  // dense (16 chunks a window). Counted in chunks (512), a dense read of DOC_FACTS would drop
  // its pages every 2 MiB and the listing that read the records again faulted them all back in
  // (`printk`, 13k results: 1,234 page faults, 863 with a period 8 times longer).
  // SetOneShotReleaseWindows changes it for the files opened after it (tests).
  static constexpr uint64_t kOneShotReleaseWindows = 512;
  static constexpr uint32_t kFaultAroundShift = 16;
  static uint64_t OneShotReleaseWindows();
  static void SetOneShotReleaseWindows(uint64_t windows);
  // Whether files opened with Access::kOneShot read by copy (copy_reads()). kAuto: yes,
  // unless the environment variable BITSIFT_ONESHOT_READS is "map" ("copy": yes).
  // SetOneShotReads changes it for the files opened after it (tests, benchmarks). kAuto copies
  // even where page faults are cheap: where a fault costs ~2 us, copying took
  // `bench/oneshot-ab` p50 2.63 -> 2.44 ms, `timer.h` 9.05 -> 7.18, `void not struct i` 20.6 ->
  // 12.4 (docs/design.md, "One-shot queries").
  enum class OneShotReads { kAuto, kCopy, kMap };
  static bool OneShotCopyReads();
  static void SetOneShotReads(OneShotReads reads);
  // Whether read-ahead requests for section `id` have stopped: kWarmAfter of its chunks in a
  // row were found in the page cache (mincore) when they were about to be asked for. A warm
  // file stays warm, and then each request would be a wasted system call.
  bool Warm(SectionId id) const {
    return warm_[static_cast<uint32_t>(id) - 1].load(std::memory_order_relaxed);
  }
  // With AdviseRandomAccess: asks for the not yet verified chunks covering pieces
  // piece(0..n-1) (each a {offset, length} in section `id`, best in ascending order) to be read
  // ahead, each run of consecutive chunks (and the CHUNK_SUMS they need) in one request, so
  // that a cold batch waits for one round of parallel reads instead of a read per chunk in
  // turn. Pieces outside the section are ignored (a hint: it verifies and returns nothing).
  // Does nothing when the first such chunk is in the page cache already (a warm file) or
  // without AdviseRandomAccess.
  template <typename PieceFn>
  void WillNeedPieces(SectionId id, size_t n, PieceFn piece) const {
    if (!random_ || n == 0 || Warm(id)) return;
    const Span& s = span(id);
    uint64_t first = 0, last = 0;  // the run of chunks being collected, if `run`
    bool run = false;
    for (size_t i = 0; i < n; ++i) {
      const auto [offset, length] = piece(i);
      if (length == 0 || offset > s.length || length > s.length - offset) continue;
      const uint64_t c0 = s.first_chunk + (offset >> kChunkShift);
      const uint64_t c1 = s.first_chunk + ((offset + length - 1) >> kChunkShift);
      for (uint64_t c = c0; c <= c1; ++c) {
        if (IsVerified(c)) {  // read before, so most likely cached still: counts as Cold's would
          if (NoteResident(id)) return;
          continue;
        }
        if (IsRequested(c) || (run && c >= first && c <= last)) continue;
        if (run && c == last + 1) {
          last = c;
          continue;
        }
        if (run && ColdRun(id, first, last)) WillNeedChunks(s, first, last);
        if (Warm(id)) return;
        first = last = c;
        run = true;
      }
    }
    if (run && ColdRun(id, first, last)) WillNeedChunks(s, first, last);
  }
  // For a one-shot reader (Access::kOneShot): maps the pages of [offset, offset + length) of
  // section `id` into the process in one request (MappedFile::Populate), for a reader about to
  // walk them in the mapping before it knows where it stops (a sparse list's group). A hint: it
  // verifies and returns nothing; a range outside the section is ignored.
  void Populate(SectionId id, uint64_t offset, uint64_t length) const {
    const Span& s = span(id);
    if (!populate_ || offset > s.length || length > s.length - offset) return;
    file_.Populate(FileOffset(s, offset), length);
  }
  // Whether chunk `chunk` (< ChunkCount(Section(id).size())) of section `id` has been verified.
  bool ChunkVerified(SectionId id, uint64_t chunk) const {
    return IsVerified(span(id).first_chunk + chunk);
  }
  // The number of chunks of the sections but CHUNK_SUMS verified so far (those verified at
  // open included).
  uint64_t verified_chunks() const;
  // The number of chunks of the sections but CHUNK_SUMS (it holds one checksum for each).
  uint64_t chunk_count() const { return chunk_count_; }
  size_t file_size() const { return file_.size(); }
  const std::string& path() const { return path_; }
  // MappedFile::ReleasePages: verified chunks stay verified (segment files are immutable).
  void ReleasePages() const { file_.ReleasePages(); }
  // MappedFile::PopulateResident over the file's bytes [offset, offset + length): maps what
  // the page cache holds, reads nothing, verifies nothing (Touch still verifies a chunk on
  // its first read). Returns the bytes asked to be mapped.
  size_t PopulateResident(uint64_t offset, uint64_t length) const {
    return file_.PopulateResident(offset, length);
  }

 private:
  struct Span {
    const uint8_t* data = nullptr;
    uint64_t length = 0;
    uint64_t first_chunk = 0;  // number of the section's chunk 0 among all chunks
  };
  const Span& span(SectionId id) const { return spans_[static_cast<uint32_t>(id) - 1]; }
  size_t FileOffset(const Span& s, uint64_t offset) const {
    return static_cast<size_t>(s.data - file_.data()) + offset;
  }
  // Throws OutOfBounds unless [offset, offset + length) lies in span s of section id, then
  // verifies the chunks it covers that are not verified yet.
  void Verify(SectionId id, const Span& s, uint64_t offset, uint64_t length) const {
    if (offset > s.length || length > s.length - offset) [[unlikely]] {
      OutOfBounds(id, offset, length);
    }
    if (length != 0) {
      const uint64_t first = s.first_chunk + (offset >> kChunkShift);
      const uint64_t last = s.first_chunk + ((offset + length - 1) >> kChunkShift);
      for (uint64_t c = first; c <= last; ++c) {
        if (!IsVerified(c)) [[unlikely]] {
          VerifyChunks(id, c, last);
          break;
        }
      }
    }
  }
  // copy_reads(): [offset, offset + length) of span s (section id) copied to dst, chunk by
  // chunk from the process's chunk cache (CopyFromChunk), after the bounds check.
  void CopyRange(SectionId id, const Span& s, uint64_t offset, uint64_t length, void* dst) const;
  // copy_reads(): [offset, offset + length) of span s (section id), after the bounds check,
  // with the chunks around it read in one pread into the thread's scratch and verified there
  // (those not yet); returns where the range starts in the scratch.
  const uint8_t* ReadToScratch(SectionId id, const Span& s, uint64_t offset, uint64_t length) const;
  // copy_reads(): CopyRange into the arena.
  const uint8_t* CopyOut(SectionId id, const Span& s, uint64_t offset, uint64_t length) const;
  // copy_reads(): n bytes from byte `from` of chunk `chunk` (a number among all chunks) of
  // span s copied to dst, from the process's cache of recently read chunks (on a miss the
  // chunk is read with pread, verified if it is not yet, and kept).
  void CopyFromChunk(SectionId id, const Span& s, uint64_t chunk, uint64_t from, uint64_t n,
                     uint8_t* dst) const;
  // The file offset of chunk `chunk` (a number among all chunks) of section span `s`.
  size_t ChunkFileOffset(const Span& s, uint64_t chunk) const {
    return static_cast<size_t>(s.data - file_.data()) + ((chunk - s.first_chunk) << kChunkShift);
  }
  // Whether to ask for chunk `chunk` of section `id` (and what follows it): not if the
  // section is known warm (Warm), nor if the chunk is in the page cache (mincore). A section
  // becomes warm after kWarmAfter such chunks in a row: one resident chunk proves little (the
  // chunks opening read, a neighbour of one asked for), and taking a cold section for warm
  // costs a fault per page, while the opposite costs a system call per request.
  static constexpr uint32_t kWarmAfter = 8;
  bool Cold(SectionId id, uint64_t chunk) const;
  // Counts one more chunk of section `id` found resident (or verified, so read before) in a
  // row; returns whether the section is warm now. A long-lived reader whose requests meet only
  // verified chunks (a small dictionary read whole by earlier queries) so stops asking, as it
  // does once mincore finds chunks resident: each query's requests would be work for nothing.
  bool NoteResident(SectionId id) const;
  // Whether to ask for the run of chunks [first, last]: Cold at its first chunk or, for a
  // longer run, at its last. A run's first page is often resident alone (opening read a small
  // section that shares it, or a neighbouring request brought it): judging by it alone skipped
  // whole spans, and then each of their pages faulted in turn (linux-paras: 958 faults, 60 ms).
  bool ColdRun(SectionId id, uint64_t first, uint64_t last) const {
    return Cold(id, first) || (last > first && Cold(id, last));
  }
  // Asks for chunks [first, last] of span `s` and the CHUNK_SUMS pieces they need.
  void WillNeedChunks(const Span& s, uint64_t first, uint64_t last) const;
  bool IsVerified(uint64_t chunk) const {
    return (verified_[chunk >> 6].load(std::memory_order_relaxed) >> (chunk & 63)) & 1;
  }
  // Verifies the not yet verified chunks in [from, last] (numbers among all chunks) of `id`.
  void VerifyChunks(SectionId id, uint64_t from, uint64_t last) const;
  // Throws ChunkDamaged unless `bytes` (chunk `chunk`, a number among all chunks, of section
  // `id`, wherever they were read to) match its checksum in CHUNK_SUMS (whose piece holding it
  // is verified first: Corrupt if that piece is damaged); then records the chunk as verified.
  // The one place a chunk becomes trusted, whether read through the mapping or by copy.
  void VerifyChunk(SectionId id, uint64_t chunk, const uint8_t* bytes, uint64_t length) const;
  // VerifyChunk over the chunk's bytes in the mapping (sections read in place, also in
  // copy_reads() mode: the reader touches those pages next anyway, so verifying them by pread
  // would read each chunk twice).
  void VerifyMappedChunk(SectionId id, const Span& s, uint64_t chunk) const;
  // The constructor's phases. SetUpOneShot: a one-shot open's read mode, arena and windows.
  // ReadHeader: the header, checked (Corrupt if its magic, checksum, version, size or section
  // count is wrong). PlaceSections: the section table, checked (in kSectionOrder, 64-byte
  // aligned, inside the file), into entries_ and spans_; returns the chunks of all sections.
  // VerifySectionsAtOpen: the chunk bitmaps for `chunks` chunks, and the small sections
  // (VerifiedAtOpen) checked whole and marked verified. CheckChunkSums: CHUNK_SUMS and its
  // index sized for the chunks.
  void SetUpOneShot();
  FileHeader ReadHeader() const;
  uint64_t PlaceSections(const FileHeader& h);
  void VerifySectionsAtOpen(uint64_t chunks);
  void CheckChunkSums();
  // With random access: maps the pages of the sections opening verifies (MappedFile::Populate)
  // before they are read, a request for each group of them, instead of a fault for each page.
  void PopulateVerifiedAtOpen() const;
  // The checksum of chunk `chunk` from CHUNK_SUMS, after verifying the piece that holds it.
  uint64_t ChunkSum(uint64_t chunk) const;
  // Throws Error(kCorrupt) unless the bytes of piece `piece` of CHUNK_SUMS match
  // CHUNK_SUMS_INDEX; records the piece as verified.
  void PieceMatches(uint64_t piece, const uint8_t* bytes, uint64_t length) const;
  [[noreturn]] void ChunkDamaged(SectionId id, uint64_t chunk) const;
  [[noreturn]] void OutOfBounds(SectionId id, uint64_t offset, uint64_t length) const;

  std::string path_;
  MappedFile file_;
  std::vector<SectionEntry> entries_;
  uint64_t table_offset_ = 0;
  Span spans_[kMaxSectionId];
  uint64_t chunk_count_ = 0;
  // One bit per chunk: set once the chunk's checksum matched. Two threads may verify the same
  // chunk at once; both then set the same bit.
  std::unique_ptr<std::atomic<uint64_t>[]> verified_;
  // One bit per kChunkBytes piece of CHUNK_SUMS, set once it matched CHUNK_SUMS_INDEX.
  std::unique_ptr<std::atomic<uint64_t>[]> sums_verified_;
  // One bit per chunk: set once a read-ahead request covered it (WillNeedChunks). Such a chunk
  // is not asked for again, and finding it in the page cache says nothing about the file being
  // warm: the request put it there.
  std::unique_ptr<std::atomic<uint64_t>[]> requested_;
  bool IsRequested(uint64_t chunk) const {
    return (requested_[chunk >> 6].load(std::memory_order_relaxed) >> (chunk & 63)) & 1;
  }
  bool random_ = false;  // AdviseRandomAccess was called
  // Access::kOneShot where page faults are dear (PageFaultsAreDear): pages are mapped
  // (MappedFile::Populate) before they are touched. A reader of many queries keeps the faults,
  // whose fault-around maps the neighbours its later queries read, instead of a request for
  // only what each verification covers. Where faults are cheap, a one-shot reader keeps them
  // too: where a fault costs ~2 us the requests cost more than the faults they replaced for queries
  // that read most of DOC_FACTS (`then`, 26,928 results: 45.0 -> 40.6 ms) and saved nothing on
  // light queries (bench/oneshot-ab p50 1.99 against 1.97 ms).
  bool populate_ = false;
  // Access::kOneShot: drop the mapped pages once this many fault-around windows were first
  // touched by chunks verified through the mapping (0: never); the windows touched since the
  // last drop, a bit each, and their count.
  uint64_t release_every_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> touched_windows_;
  size_t touched_window_words_ = 0;
  mutable std::atomic<uint64_t> windows_since_release_{0};
  // copy_reads(): what Touch copied, kept until the file is closed (8-byte aligned pieces of
  // blocks of 64 KiB; a piece over 16 KiB gets a block of its own).
  enum : int { kUndecided = 0, kCopy = 1, kMap = 2 };
  mutable std::atomic<int> copy_state_{kMap};  // Access::kOneShot: kUndecided at open
  int DecideCopyReads() const;
  // Whether copy_reads() was decided true already (verification then reads CHUNK_SUMS by
  // copy too; it does not decide).
  bool copying() const { return copy_state_.load(std::memory_order_relaxed) == kCopy; }
  uint64_t uid_ = 0;  // this file among the process's open files: the chunk caches' key
  mutable std::atomic<bool> dense_[kMaxSectionId] = {};  // see copies()
  struct Arena;
  std::unique_ptr<Arena> arena_;
  mutable std::atomic<bool> warm_[kMaxSectionId] = {};                   // see Warm
  mutable std::atomic<uint32_t> resident_in_a_row_[kMaxSectionId] = {};  // see Cold
};

// The format_version in the header of the file at `path` if it starts with kMagic (nothing
// else is verified: this only tells a segment of another bitsift apart), 0 if it does not or
// cannot be read.
uint32_t PeekFormatVersion(const std::string& path);

// XXH3-64 of bytes.
uint64_t Checksum(const void* data, size_t length);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_INDEX_FORMAT_H_
