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

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "storage/file_writers.h"
#include "storage/verified_file.h"

namespace bitsift::format {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the index format is little-endian");

inline constexpr char kMagic[8] = {'B', 'I', 'T', 'S', 'I', 'F', 'T', '\x1a'};
// 17: a forward record with positions may hold a pair filter (format/forward_store.h).
// 13: RANK_BOUNDS (format/rank_bounds.h); a forward record names its id bytes, so its counts
// are found without decoding its ids. 12: a forward record ends with the document's length and its
// terms' frequencies (ranking). 11: token contract 2. 10: the living index. 9: DOC_BANDS
// (format/doc_bands.h) replaces DOC_COLUMNS: a document's band in a few bits and per-block counts,
// its column following from them (columns follow ids within a band), ~0.55 instead of 4 bytes a
// document. 8: a document's path is in its DOC_FACTS record (one read per result for its path and
// facts, not three: DOCS, PATHS, DOC_FACTS); DOCS and PATHS are retired, DOC_COLUMNS holds the
// columns. 7: DOCS holds 16-byte DocEntry records (path, column); the other fields moved to
// DOC_FACTS, varint-coded (81 -> ~30 bytes a document on linux-paras' 1.2M paragraphs). A term's
// Bloom positions come from SplitMix64 instead of double hashing (format/bloom.h). TERM_FILTER. 6:
// DocRecord::column. 5: sparse rows (SPARSE_DATA, SPARSE_INDEX) for the rarest terms, MetaRecord of
// 96 bytes, DICT_TOP, CHUNK_SUMS_INDEX. 4: the front-coded dictionary (DICT_INDEX, DICT_BLOCKS,
// DF_RUNS). 3: the ENCODINGS section (DocRecord::encoding indexes it) and 4 KiB chunks. 2: segments
// (0.2).
inline constexpr uint32_t kFormatVersion = 18;
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
  kDocBands = 26,    // every document's band, whence its column (format/doc_bands.h)
  kRankBounds = 27,  // length codes and common terms' block maxima (format/rank_bounds.h)
};
// Sections in a file, and the largest id (spans are indexed by id - 1).
inline constexpr uint32_t kSectionCount = 20;
inline constexpr uint32_t kMaxSectionId = 27;
// The order of the sections in the file and in the section table: CHUNK_SUMS, which covers
// all the others, and CHUNK_SUMS_INDEX, which covers CHUNK_SUMS, come last (the writer's
// Finish writes them).
// The dictionary comes first, so that a merge can stream it into the file while it gives the
// terms their new ids (which the rows and forward records after it need).
inline constexpr SectionId kSectionOrder[kSectionCount] = {
    SectionId::kDictBlocks,     SectionId::kDictIndex,     SectionId::kDictTop,
    SectionId::kDfRuns,         SectionId::kTermFilter,    SectionId::kMeta,
    SectionId::kBands,          SectionId::kBandDocs,      SectionId::kRows,
    SectionId::kDocBands,       SectionId::kDocFacts,      SectionId::kDocFactsIndex,
    SectionId::kForwardOffsets, SectionId::kForwardData,   SectionId::kSparseData,
    SectionId::kSparseIndex,    SectionId::kEncodings,     SectionId::kRankBounds,
    SectionId::kChunkSums,      SectionId::kChunkSumsIndex};

// Sections are checksummed in chunks of kChunkBytes (4 KiB), aligned to the section's start (the
// last chunk of a section is shorter): storage's chunks. A section of L bytes has ChunkCount(L)
// chunks. Checksum (XXH3-64) is every checksum of the file.
using storage::Checksum;
using storage::ChunkCount;
using storage::kChunkBytes;
using storage::kChunkShift;

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
  // The sum of its documents' lengths (ForwardCounts::length), deleted ones included: with the
  // lengths of those deleted, the collection statistics of BM25 without reading every record.
  uint64_t total_length;
  // The bytes of FORWARD_DATA that are positions and pair filters (format::ForwardPositions):
  // the rest, ids and counts, is what a merge's memory follows.
  uint64_t position_bytes;
};
static_assert(sizeof(MetaRecord) == 104);

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

  storage::AtomicFileWriter out_;
  std::vector<SectionEntry> entries_;
  std::vector<uint64_t> chunk_sums_;
  std::unique_ptr<Streaming> open_;  // the section being written
};

// A mapped index file, read through storage::VerifiedFile (storage/verified_file.h: how its
// bytes are read, verified and let go). Opening verifies the header, the section table (order,
// alignment, bounds), and the checksums of META, BANDS, CHUNK_SUMS_INDEX and every section of at
// most one chunk; the chunks of the other sections are verified on first access through Touch,
// and VerifyAll verifies everything. Read-only and safe to share between threads (Touch
// included). The reading members below are storage::VerifiedFile's, by SectionId.
class IndexFile {
 public:
  using Access = storage::Access;

  // Maps `path` and verifies what opening verifies (above). Throws Error(kNotFound) if it does
  // not exist and Error(kCorrupt) naming the path and the problem if it is not an index of this
  // version or a part verified at open is damaged.
  explicit IndexFile(const std::string& path, Access access = Access::kScan);
  ~IndexFile();
  IndexFile(const IndexFile&) = delete;
  IndexFile& operator=(const IndexFile&) = delete;

  // The bytes of a section, NOT verified unless the section is one that opening verifies, or
  // VerifyAll has run: read a lazily verified section through Touch.
  std::string_view Section(SectionId id) const { return file_.Section(Id(id)); }
  // Section(id) as an array of T (sections are 64-byte aligned). Same caveat as Section.
  template <typename T>
  const T* SectionAs(SectionId id) const {
    return file_.SectionAs<T>(Id(id));
  }
  // storage::VerifiedFile::Touch: the bytes [offset, offset + length) of section `id`, after
  // verifying every chunk they cover that is not verified yet. Throws Error(kCorrupt) naming
  // the path, the chunk, the section and the repair if a chunk's checksum does not match, or if
  // the range is not inside the section.
  const uint8_t* Touch(SectionId id, uint64_t offset, uint64_t length) const {
    return file_.Touch(Id(id), offset, length);
  }
  // storage::VerifiedFile::Read: Touch's bytes copied to dst.
  void Read(SectionId id, uint64_t offset, uint64_t length, void* dst) const {
    file_.Read(Id(id), offset, length, dst);
  }
  // storage::VerifiedFile::ReadView: Touch's bytes, valid until *buffer is next used.
  const uint8_t* ReadView(SectionId id, uint64_t offset, uint64_t length,
                          std::vector<uint8_t>* buffer) const {
    return file_.ReadView(Id(id), offset, length, buffer);
  }
  // storage::VerifiedFile::ScratchView: Touch's bytes, valid until this thread's next read of a
  // copied section through Read, ReadView or ScratchView.
  const uint8_t* ScratchView(SectionId id, uint64_t offset, uint64_t length) const {
    return file_.ScratchView(Id(id), offset, length);
  }
  // storage::VerifiedFile::copy_reads: whether reads go through pread instead of the mapping.
  bool copy_reads() const { return file_.copy_reads(); }
  // storage::VerifiedFile::copies: whether section `id` is read by copy now. Only the sections
  // read per candidate or per result are copied (kCopiedSections: ROWS, BAND_DOCS, the forward
  // store, DOC_BANDS, the documents' records): the dictionary's few pages cost less through the
  // mapping, whose faults map their neighbours too (a copy touches a new page of the reader's
  // memory for each chunk it reads first).
  bool copies(SectionId id) const { return file_.copies(Id(id)); }
  // storage::VerifiedFile::ReadDensely: section `id` read through the mapping from now on.
  void ReadDensely(SectionId id) const { file_.ReadDensely(Id(id)); }
  static constexpr uint64_t kCopiedSections =
      uint64_t{1} << static_cast<uint32_t>(SectionId::kRows) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kBandDocs) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kForwardOffsets) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kForwardData) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kDocBands) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kDocFacts) |
      uint64_t{1} << static_cast<uint32_t>(SectionId::kDocFactsIndex);
  // Verifies the whole file: every section checksum, every chunk checksum, and that the padding
  // between sections is zero. Throws Error(kCorrupt) naming the path and the first problem.
  void VerifyAll() const;
  // storage::VerifiedFile::AdviseRandomAccess: for readers that touch scattered pages
  // (queries). Call it before the file is shared between threads.
  void AdviseRandomAccess() { file_.AdviseRandomAccess(); }
  bool random_access() const { return file_.random_access(); }
  // storage::VerifiedFile::Warm: whether read-ahead requests for section `id` have stopped.
  bool Warm(SectionId id) const { return file_.Warm(Id(id)); }
  // storage::VerifiedFile::WillNeedPieces: read-ahead for pieces piece(0..n-1) of section `id`.
  template <typename PieceFn>
  void WillNeedPieces(SectionId id, size_t n, PieceFn piece) const {
    file_.WillNeedPieces(Id(id), n, piece);
  }
  // storage::VerifiedFile::Populate: for a one-shot reader, the pages of [offset, offset +
  // length) of section `id` mapped in one request.
  void Populate(SectionId id, uint64_t offset, uint64_t length) const {
    file_.Populate(Id(id), offset, length);
  }
  // Whether chunk `chunk` (< ChunkCount(Section(id).size())) of section `id` has been verified.
  bool ChunkVerified(SectionId id, uint64_t chunk) const {
    return file_.ChunkVerified(Id(id), chunk);
  }
  // The number of chunks of the sections but CHUNK_SUMS verified so far (those verified at
  // open included).
  uint64_t verified_chunks() const { return file_.verified_chunks(); }
  // The number of chunks of the sections but CHUNK_SUMS (it holds one checksum for each).
  uint64_t chunk_count() const { return file_.chunk_count(); }
  size_t file_size() const { return file_.file_size(); }
  const std::string& path() const { return file_.path(); }
  // storage::VerifiedFile::ReleasePages: verified chunks stay verified (segment files are
  // immutable).
  void ReleasePages() const { file_.ReleasePages(); }
  // storage::VerifiedFile::PopulateResident over the file's bytes [offset, offset + length).
  size_t PopulateResident(uint64_t offset, uint64_t length) const {
    return file_.PopulateResident(offset, length);
  }

 private:
  static constexpr uint32_t Id(SectionId id) { return static_cast<uint32_t>(id); }
  // The opening's phases. ReadHeader: the header, checked (Corrupt if its magic, checksum,
  // version, size or section count is wrong). PlaceSections: the section table, checked (in
  // kSectionOrder, 64-byte aligned, inside the file), into entries_ and the VerifiedFile.
  // VerifySectionsAtOpen: the sections VerifiedAtOpen checked whole and marked verified.
  // CheckChunkSums: CHUNK_SUMS and its index sized for the chunks.
  FileHeader ReadHeader() const;
  void PlaceSections(const FileHeader& h);
  void VerifySectionsAtOpen();
  void CheckChunkSums() const;
  // With random access: maps the pages of the sections opening verifies (storage::
  // VerifiedFile::Prefault) before they are read, a request for each group of them, instead of
  // a fault for each page.
  void PopulateVerifiedAtOpen() const;

  storage::VerifiedFile file_;
  std::vector<SectionEntry> entries_;
  uint64_t table_offset_ = 0;
};

// The format_version in the header of the file at `path` if it starts with kMagic (nothing
// else is verified: this only tells a segment of another bitsift apart), 0 if it does not or
// cannot be read.
uint32_t PeekFormatVersion(const std::string& path);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_INDEX_FORMAT_H_
