// Read access to an index file: the mapped sections, verified as they are first read.
#ifndef BITSIFT_FORMAT_SEGMENT_READER_H_
#define BITSIFT_FORMAT_SEGMENT_READER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/dictionary.h"
#include "format/doc_bands.h"
#include "format/forward_store.h"
#include "format/index_format.h"
#include "format/rank_bounds.h"
#include "format/sparse_rows.h"
#include "util/spin_lock.h"

namespace bitsift::format {

// An open index. Immutable after construction (but for the record of verified chunks) and safe
// to share between threads.
//
// Opening costs O(bands), not O(index): it verifies what IndexFile verifies at open
// (header, table, META, BANDS, CHUNK_SUMS, small sections), the counts against the section
// sizes, every band's rows against ROWS, and it parses the ENCODINGS table. Everything else
// is checked where it is read: each accessor below verifies the chunks it reads
// (IndexFile::Touch) and bounds-checks what it follows (an id, an offset), throwing
// Error(kCorrupt) naming the path instead of answering from damaged or inconsistent bytes.
// Check (query/index_check.h) verifies everything at once.
class SegmentReader {
 public:
  // Opens path and verifies what opening verifies (above). Throws Error(kNotFound) or
  // Error(kCorrupt) with a message naming the path and the problem. A query's reader opens
  // with Access::kRandom (IndexFile::Access); a one-shot query's, Access::kOneShot,
  // prefers lists (PreferLists).
  explicit SegmentReader(const std::string& path,
                         IndexFile::Access access = IndexFile::Access::kScan);
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  const MetaRecord& meta() const { return meta_; }
  std::string_view root() const { return root_; }
  uint64_t doc_count() const { return meta_.doc_count; }
  uint64_t band_count() const { return meta_.band_count; }
  // Band b < band_count() (verified at open).
  const BandRecord& band(uint64_t b) const { return bands_[b]; }
  // Terms with ids below this have an exact row in every band instead of Bloom bits.
  uint32_t exact_terms() const { return meta_.exact_terms; }
  // Row r of a band: band.words_per_row words, all verified. Rows [0, width) are Bloom rows;
  // row width + t is the exact row of term t < exact_terms(). Throws Error(kCorrupt) if a chunk
  // of the row is damaged. Call it once per row and query: it is not meant for an inner loop.
  const uint64_t* Row(const BandRecord& band, uint64_t r) const {
    return reinterpret_cast<const uint64_t*>(
        file_.Touch(SectionId::kRows, RowOffset(band, r), RowBytes(band)));
  }
  // Row r of a band as Row gives it but NOT verified: read its words only after VerifyRowWords
  // covered them (the row AND verifies a row's chunks as it reaches them).
  const uint64_t* UnverifiedRow(const BandRecord& band, uint64_t r) const {
    return file_.SectionAs<uint64_t>(SectionId::kRows) + RowOffset(band, r) / 8;
  }
  // Verifies the chunks holding words [begin, end) (end <= band.words_per_row) of row r of a
  // band; returns the word up to which the row is verified (the end of the last chunk, at most
  // words_per_row). Throws Error(kCorrupt) if one is damaged.
  uint64_t VerifyRowWords(const BandRecord& band, uint64_t r, uint64_t begin, uint64_t end) const {
    const uint64_t base = RowOffset(band, r);
    file_.Touch(SectionId::kRows, base + begin * 8, (end - begin) * 8);
    const uint64_t chunk_end = (((base + end * 8 - 1) >> kChunkShift) + 1) << kChunkShift;
    return std::min<uint64_t>(band.words_per_row, (chunk_end - base) / 8);
  }
  // The document id of a band's column (< band.doc_count). Throws Error(kCorrupt) if the
  // entry's chunk is damaged or the id is not below doc_count().
  uint32_t BandDoc(const BandRecord& band, uint64_t column) const {
    uint32_t id;
    file_.Read(SectionId::kBandDocs, (band.first_column + column) * 4, 4, &id);
    if (id >= meta_.doc_count) [[unlikely]]
      BadBandDoc(id);
    return id;
  }
  // The column of document id (DocRecord::column: its place among the bands' columns, or
  // kNoColumn), from its DOC_BANDS block (format/doc_bands.h). Throws Error(kCorrupt) if id >=
  // doc_count(), the block's chunks are damaged or the block is inconsistent.
  uint32_t column(uint32_t id) const {
    if (id >= meta_.doc_count) [[unlikely]]
      BadDocId(id);
    return ColumnInBlock(id, DocBandsBlock(id / kBlock));
  }
  // The columns of documents ids[0..n) (ascending, each < doc_count()) into out[0..n), as
  // column(id) gives them. Read by copy, the blocks are read in spans of up to kColumnSpanBytes
  // (neighbouring candidates' chunks in one pread, a chunk between them read rather than
  // skipped): thousands of candidates cost a few reads instead of one a chunk. Throws as
  // column(id).
  void Columns(const uint32_t* ids, size_t n, uint32_t* out) const;
  static constexpr uint64_t kColumnSpanBytes = uint64_t{64} << 10;
  // The document ids of band columns columns[0..n) (ascending, each < band.doc_count) into
  // out[0..n), as BandDoc gives them, read in spans as Columns reads. Throws as BandDoc.
  // Through the mapping, a batch whose span is at most a chunk or this many bytes an entry is
  // verified as one range and read in place.
  void BandDocs(const BandRecord& band, const uint32_t* columns, size_t n, uint32_t* out) const;
  static constexpr uint64_t kBandDocsSpanBytesPerEntry = 64;
  // The record of document id from its DOC_FACTS block: every field but path_offset (0) and
  // column (kNoColumn; column(id) reads it). Reads the block's DOC_FACTS_INDEX entry and its
  // bytes, as path(id) does: one read for both. Throws Error(kCorrupt) if id >= doc_count() or
  // the block's chunks or bytes are damaged.
  DocRecord doc(uint32_t id) const;
  // The path of document id, relative to root(): a view valid as long as the reader. Reads and
  // throws as doc(id).
  std::string_view path(uint32_t id) const;
  // The name of the encoding document record `d` was read in ("UTF-8", "GB18030", ...). Throws
  // Error(kCorrupt) if its index is not below encodings().size().
  const std::string& encoding(const DocRecord& d) const {
    if (d.encoding >= encodings_.size()) [[unlikely]]
      BadEncoding(d.encoding);
    return encodings_[d.encoding];
  }
  // The segment's encoding names (ENCODINGS, verified and parsed at open), by index.
  const std::vector<std::string>& encodings() const { return encodings_; }
  // The dictionary; its accessors verify what they read.
  const DictionaryView& dictionary() const { return dict_; }
  // How many of its terms are pair terms (format::IsPairTerm by its df and doc_count): ids go
  // by decreasing df, so they are the ids below this.
  uint32_t pair_terms() const;
  // Whether term id (< term count) has a sparse row (format/sparse_rows.h): no Bloom bits,
  // its exact document list instead.
  bool IsSparse(uint32_t id) const { return id >= meta_.sparse_first; }
  // Whether term id has a document list (SparseRow): the sparse terms and, since format 10,
  // the Bloom terms (ListFirst).
  bool HasList(uint32_t id) const { return id >= ListFirst(meta_); }
  // Whether a query takes term id's list rather than its rows: for a sparse term (it has no
  // Bloom bits), and for a Bloom term when this reader prefers lists (PreferLists). A Bloom
  // term's list is its exact documents, some KB to some tens of KB; its rows are k of N bits in
  // every band (~1 MB for a million documents) and leave candidates to verify by their forward
  // records. docs/design.md, "Signatures and rows".
  bool UsesList(uint32_t id) const { return IsSparse(id) || (prefer_lists_ && HasList(id)); }
  // Makes queries take a Bloom term's list (UsesList): for a reader whose pages are not in
  // the process yet (a one-shot query), where every byte of a row costs a read or a fault.
  // A reader that answers many queries from mapped, warm rows keeps them (ANDing mapped rows
  // costs a warm query less than decoding lists of thousands of ids). Call it before the
  // reader is shared between threads. Results do not change.
  void PreferLists(bool prefer) { prefer_lists_ = prefer; }
  bool prefers_lists() const { return prefer_lists_; }
  // How SPARSE_INDEX groups the lists (ListGroups).
  format::ListGroups ListGroups() const {
    return {ListFirst(meta_), meta_.sparse_first, meta_.term_count};
  }
  // The documents of term id (HasList), ascending, into *docs. Throws Error(kCorrupt) if the
  // list's bytes or chunks are damaged or inconsistent.
  void SparseRow(uint32_t id, std::vector<uint32_t>* docs) const;
  // Hints the CPU to start loading document id's forward record: its cache lines in the first
  // `bytes` of it (at least its first line). No effect on results: the offsets read here are
  // not verified, and a prefetch of any address is harmless.
  void PrefetchRecord(uint32_t id, uint64_t bytes = 1) const {
    // (By copy the mapping is not read: the offset's load would fault its page in.)
    if (id >= meta_.doc_count || file_.copies(SectionId::kForwardOffsets)) return;
    const uint8_t* p = forward_ + RawOffset(id);
    __builtin_prefetch(p);
    const uint64_t end = std::min<uint64_t>(RawOffset(id + uint64_t{1}) - RawOffset(id), bytes);
    for (uint64_t at = 64 - reinterpret_cast<uintptr_t>(p) % 64; at < end; at += 64)
      __builtin_prefetch(p + at);
  }
  // For a reader of scattered pages (a query's): IndexFile::AdviseRandomAccess. Call
  // it before the reader is shared between threads.
  void AdviseRandomAccess() { file_.AdviseRandomAccess(); }
  // Read-ahead hints for a batch (IndexFile::WillNeedPieces: nothing is verified or returned,
  // results do not change; cheap when the file is warm). ids best ascending; ids out of range
  // are ignored. WillNeedRecords: the forward records Contains will read (their offsets first).
  // WillNeedDocs: the DOC_FACTS blocks doc() and path() will read (their DOC_FACTS_INDEX
  // entries first). WillNeedColumns: the DOC_BANDS blocks column() will read.
  // WillNeedExactRow: exact term t's row in every band (HasExactTerm's words).
  void WillNeedRecords(const uint32_t* ids, size_t n) const;
  void WillNeedDocs(const uint32_t* ids, size_t n) const;
  // Makes room for n more records read by copy (doc(), path()) without rehashing the kept
  // records as they come: a batch that reads them on two threads (Index::SetAsideStaleFiles)
  // would otherwise grow the table under its lock while the other thread waits.
  void ExpectRecords(size_t n) const;
  void WillNeedColumns(const uint32_t* ids, size_t n) const;
  void WillNeedExactRow(uint32_t t) const;
  // Whether document id contains every term id of ids (ascending). Throws Error(kCorrupt) for
  // a bad id, a damaged or inconsistent record or a damaged chunk.
  bool Contains(uint32_t id, const uint32_t* ids, size_t n) const;
  // Whether document id contains exact term t (< exact_terms()), read from one word of the
  // term's exact row at the document's column (DocRecord::column) instead of from its forward
  // record. Throws Error(kCorrupt) for a bad id, a column outside the bands or a damaged chunk.
  bool HasExactTerm(uint32_t id, uint32_t t) const;
  // HasExactTerm for document id whose column (column(id) or Columns) the caller has read:
  // a batch of candidates reads its DOC_BANDS blocks once (Columns), not a chunk each.
  bool HasExactTermInColumn(uint32_t id, uint32_t column, uint32_t t) const;
  // All term ids of a document, ascending, and (if `counts` is not null) its length and term
  // frequencies, and (if `positions` is not null) its phrase positions. Throws
  // Error(kCorrupt) as Contains does.
  std::vector<uint32_t> DocumentTerms(uint32_t id, ForwardCounts* counts = nullptr,
                                      ForwardPositions* positions = nullptr) const;
  // The positions of the term ids `want` (strictly ascending) in document id
  // (ForwardRecordLists), or kNoPair if the record's pair filter refutes a phrase of the
  // pairs `pairs` and terms `lone` (ForwardRecordMayHavePairs; not asked if pairs_n is 0);
  // with `runs`, the run starts follow as list n. Throws Error(kCorrupt) as Contains does.
  PhraseLists TermPositions(uint32_t id, const uint32_t* want, size_t n, std::vector<uint32_t>* at,
                            std::vector<uint32_t>* begin, const uint64_t* pairs = nullptr,
                            size_t pairs_n = 0, const uint16_t* lone = nullptr, size_t lone_n = 0,
                            bool runs = false) const;
  // The frequencies of the term ids `want` (strictly ascending; none for the length alone) in
  // document id, 0 for those it lacks, and its length (ForwardRecordCounts: not the whole record).
  // Throws Error(kCorrupt) as Contains does.
  void TermCounts(uint32_t id, const uint32_t* want, size_t n, uint32_t* tf,
                  uint32_t* length) const;
  // The segment's RANK_BOUNDS (format/rank_bounds.h), read and parsed on the first call.
  // Thread-safe. Throws Error(kCorrupt) if the section is damaged.
  const RankBoundsView& RankBounds() const;
  uint64_t SectionBytes(SectionId id) const { return file_.Section(id).size(); }
  // The raw bytes of a section, verified only after file().VerifyAll() (for the check).
  std::string_view Section(SectionId id) const { return file_.Section(id); }
  // The mapped file (VerifyAll, Touch, the chunk counters).
  const IndexFile& file() const { return file_; }
  uint64_t file_size() const { return file_.file_size(); }
  const std::string& path() const { return file_.path(); }

 private:
  // The range of DOC_FACTS block b (< DocFactsIndexEntries(doc_count()) - 1), from its
  // DOC_FACTS_INDEX entries. Throws Error(kCorrupt) if they are damaged or reversed.
  std::pair<uint64_t, uint64_t> FactsRange(uint64_t b) const;
  // Document id's record and path read by copy (IndexFile::copies): the block is read
  // into a buffer of the thread's (no fresh page of memory for each block: a one-shot query's
  // 24k scattered results would otherwise touch ~4,000 new pages, each a trap), and a path is
  // kept, by id: a result's path is read when the segments' results are merged in path order
  // and again when it is printed, and between those passes the chunk cache (16 chunks) has let
  // go of all of a query's hundreds of results' chunks. The record is kept beside the path:
  // the stale-hit check asks for it after the path (doc(id)), and reading the block again cost
  // a pread a result.
  struct KeptDoc {
    DocRecord record;
    std::string path;
  };
  const KeptDoc& LocateByCopy(uint32_t id) const;
  mutable std::once_flag rank_bounds_once_;
  mutable RankBoundsView rank_bounds_;
  mutable util::SpinLock kept_mu_;
  mutable std::unordered_map<uint32_t, KeptDoc> kept_;  // (references stay valid as it grows)
  [[noreturn]] void BadFacts(uint32_t id) const;
  // Decodes document id's record into *d and, if path is not null, its path into *path (with
  // d null, the path only), through this thread's cursor of this reader
  // (DocFactsCursor). Throws as doc(id).
  void Locate(uint32_t id, DocRecord* d, std::string_view* path) const;
  static uint64_t NextSerial();
  const uint64_t serial_;  // this reader's key among a thread's cursors

  // Verifies the offsets of document id's forward record and returns the record's bytes
  // (valid until the calling thread's next Record: by copy they are in a buffer of its own).
  std::pair<const uint8_t*, const uint8_t*> Record(uint32_t id) const;
  // Record's two steps: the verified offsets [range[0], range[1]) of document id's record in
  // FORWARD_DATA, and `length` bytes of FORWARD_DATA from `offset` (valid until the calling
  // thread's next RecordBytes or Record).
  void RecordRange(uint32_t id, uint64_t range[2]) const;
  const uint8_t* RecordBytes(uint64_t offset, uint64_t length) const;
  // The least of a record's first bytes TermPositions reads alone for its pair filter (the rest
  // of the chunk it starts in, if more).
  static constexpr uint64_t kRecordHeadBytes = 512;
  [[noreturn]] void BadBandDoc(uint32_t id) const;
  // out[i] = the 4-byte entry entry(i) of section `id`, for i < n (entries ascending, inside
  // the section), by copy in spans of up to kColumnSpanBytes, else one by one.
  // Pieces 0..n-1 of section `id` (piece(i) = {offset, length}, ascending) read in spans of
  // up to kColumnSpanBytes through ScratchView; fn(i, bytes) with each piece's bytes.
  template <typename Piece, typename Fn>
  void ForEachInSpans(SectionId id, size_t n, const Piece& piece, const Fn& fn) const;
  template <typename Entry>
  void ReadEntries(SectionId id, size_t n, const Entry& entry, uint32_t* out) const;
  [[noreturn]] void BadColumn(uint32_t id, uint32_t column) const;
  // DOC_BANDS: block b (verified; valid until the thread's next scratch read, ScratchView),
  // and the column of document id in the block that holds it.
  static constexpr uint64_t kBlock = kDocBandsBlock;
  const uint8_t* DocBandsBlock(uint64_t b) const;
  uint32_t ColumnInBlock(uint32_t id, const uint8_t* block) const;
  [[noreturn]] void BadDocId(uint32_t id) const;
  [[noreturn]] void BadEncoding(uint32_t index) const;

  IndexFile file_;
  MetaRecord meta_{};
  bool prefer_lists_ = false;  // see PreferLists
  std::string_view root_;
  const BandRecord* bands_ = nullptr;
  // Offset i of FORWARD_OFFSETS read through the mapping, unverified: for hints only.
  uint64_t RawOffset(uint64_t i) const {
    return forward_bases_[i / kOffsetBlock] + forward_rel_[i];
  }
  // Offsets id and id + 1 of FORWARD_OFFSETS, verified (Read).
  void ReadRecordRange(uint32_t id, uint64_t range[2]) const;
  const uint64_t* forward_bases_ = nullptr;  // raw: for hints only
  const uint32_t* forward_rel_ = nullptr;    // raw: for hints only
  const uint8_t* forward_ = nullptr;         // raw: for PrefetchRecord only
  DictionaryView dict_;
  std::vector<std::string> encodings_;
};

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_SEGMENT_READER_H_
