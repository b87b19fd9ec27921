#include "format/segment_reader.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <utility>

#include "format/doc_table.h"
#include "format/sparse_rows.h"
#include "util/error.h"

namespace bitsift::format {

namespace {
void Check(bool ok, const std::string& path, const std::string& what) {
  if (!ok) CorruptIndex(path, what);
}
}  // namespace

SegmentReader::SegmentReader(const std::string& path, IndexFile::Access access)
    : serial_(NextSerial()),
      file_(path, access),
      prefer_lists_(access == IndexFile::Access::kOneShot) {
  // IndexFile verified META and BANDS. These checks are O(bands): they keep every row inside
  // ROWS and every count consistent with its section's size, even for a file whose checksums
  // were forged. Per-record bounds (ids, paths, offsets) are checked where records are read.
  std::string_view meta = file_.Section(SectionId::kMeta);
  Check(meta.size() >= sizeof(meta_), path, "meta section too short");
  std::memcpy(&meta_, meta.data(), sizeof(meta_));
  root_ = meta.substr(sizeof(meta_));
  Check(meta_.contract_version == kContractVersion, path,
        "built for token contract version " + std::to_string(meta_.contract_version));
  auto expect = [&](SectionId id, uint64_t count, uint64_t width, const char* what) {
    Check(count <= UINT64_MAX / width && file_.Section(id).size() == count * width, path,
          std::string("size of section ") + what);
  };
  const uint64_t docs = meta_.doc_count, terms = meta_.term_count;
  Check(docs <= UINT32_MAX, path, "document count");
  Check(terms <= UINT32_MAX, path, "term count");
  expect(SectionId::kBands, meta_.band_count, sizeof(BandRecord), "bands");
  expect(SectionId::kDocFactsIndex, DocFactsIndexEntries(docs), 8, "document facts index");
  expect(SectionId::kForwardOffsets, ForwardOffsetsBytes(docs), 1, "forward offsets");
  bands_ = file_.SectionAs<BandRecord>(SectionId::kBands);
  forward_bases_ = file_.SectionAs<uint64_t>(SectionId::kForwardOffsets);
  forward_rel_ = reinterpret_cast<const uint32_t*>(forward_bases_ + ForwardOffsetBases(docs));
  forward_ = reinterpret_cast<const uint8_t*>(file_.Section(SectionId::kForwardData).data());

  Check(meta_.exact_terms <= terms, path, "exact term count");
  const uint64_t band_doc_entries = file_.Section(SectionId::kBandDocs).size() / 4;
  const uint64_t row_words = file_.Section(SectionId::kRows).size() / 8;
  uint64_t columns = 0;
  for (uint64_t b = 0; b < meta_.band_count; ++b) {
    const BandRecord& band = bands_[b];
    const uint64_t rows = band.width + meta_.exact_terms;  // no overflow: both checked small
    Check(band.width < (1ULL << 40) && band.rows_offset % 64 == 0 &&
              (band.width > 0) == (band.k > 0) && band.k <= 64 &&
              band.words_per_row * 64 >= band.doc_count && rows <= row_words &&
              band.words_per_row <= row_words / rows &&
              band.rows_offset / 8 <= row_words - rows * band.words_per_row &&
              band.first_column == columns,
          path, "band " + std::to_string(b) + " out of bounds");
    columns += band.doc_count;
  }
  Check(columns == band_doc_entries && file_.Section(SectionId::kBandDocs).size() % 4 == 0, path,
        "band columns");
  Check(meta_.band_count <= kMaxBands, path, "band count");
  expect(SectionId::kDocBands, DocBandsBlocks(docs), DocBandsBlockBytes(meta_.band_count),
         "document bands");
  dict_ = DictionaryView(&file_, terms);
  Check(meta_.exact_terms <= meta_.sparse_first && meta_.sparse_first <= terms, path,
        "sparse term range");
  expect(SectionId::kSparseIndex, ListGroups().Entries(), 8, "sparse index");
  // A few dozen bytes, read by every document() call: verified (Touch) and parsed here.
  const uint64_t encodings_size = file_.Section(SectionId::kEncodings).size();
  const std::string problem = ParseEncodingTable(
      std::string_view(
          reinterpret_cast<const char*>(file_.Touch(SectionId::kEncodings, 0, encodings_size)),
          encodings_size),
      &encodings_);
  Check(problem.empty(), path, "encoding table: " + problem);
}

void SegmentReader::BadBandDoc(uint32_t id) const {
  Check(false, path(), "band document id " + std::to_string(id) + " out of range");
  __builtin_unreachable();
}

void SegmentReader::BadDocId(uint32_t id) const {
  Check(false, path(), "document id " + std::to_string(id) + " out of range");
  __builtin_unreachable();
}

std::pair<uint64_t, uint64_t> SegmentReader::FactsRange(uint64_t b) const {
  uint64_t range[2];
  file_.Read(SectionId::kDocFactsIndex, b * 8, 16, range);
  if (range[0] > range[1]) [[unlikely]]  // (the message is built only then: a call per result)
    Check(false, path(), "document facts index entry " + std::to_string(b));
  return {range[0], range[1] - range[0]};
}

const SegmentReader::KeptDoc& SegmentReader::LocateByCopy(uint32_t id) const {
  {
    std::lock_guard<util::SpinLock> lock(kept_mu_);
    auto it = kept_.find(id);
    if (it != kept_.end()) return it->second;
  }
  const uint64_t b = id / kDocFactsBlock;
  const auto [offset, length] = FactsRange(b);
  thread_local std::vector<uint8_t> buffer;
  // ReadView bounds-checks the end against the section.
  const uint8_t* p = file_.ReadView(SectionId::kDocFacts, offset, length, &buffer);
  DocRecord d{};
  std::string_view path;
  if (!DecodeDocFacts(p, p + length, DocFactsBlockCount(b, meta_.doc_count), id % kDocFactsBlock,
                      &d, &path)) [[unlikely]] {
    BadFacts(id);
  }
  std::lock_guard<util::SpinLock> lock(kept_mu_);
  return kept_.try_emplace(id, KeptDoc{d, std::string(path)}).first->second;
}

void SegmentReader::BadFacts(uint32_t id) const {
  Check(false, path(), "damaged record of document " + std::to_string(id));
  __builtin_unreachable();
}

namespace {

// Every reader's serial number, never reused: the key of its cursors below.
std::atomic<uint64_t> next_serial{1};

// A thread's DOC_FACTS cursors, one per reader it read from last (a query's results interleave
// the segments'): the next document of the same block costs its record only, not the block's
// index entry, its chunks' verification and record 0 again.
struct FactsCursor {
  uint64_t reader = 0;  // 0: none
  uint64_t block = 0;
  DocFactsCursor cursor;
};
thread_local FactsCursor facts_cursors[4];
thread_local uint32_t facts_cursor_next = 0;

}  // namespace

uint64_t SegmentReader::NextSerial() { return next_serial.fetch_add(1, std::memory_order_relaxed); }

void SegmentReader::Locate(uint32_t id, DocRecord* d, std::string_view* path) const {
  if (id >= meta_.doc_count) [[unlikely]]
    BadDocId(id);
  const uint64_t b = id / kDocFactsBlock;
  FactsCursor* c = nullptr;
  for (FactsCursor& f : facts_cursors) {
    if (f.reader == serial_) c = &f;
  }
  if (c == nullptr || c->block != b) {
    const auto [offset, length] = FactsRange(b);  // (may throw: no cursor is changed before)
    const uint8_t* p = file_.Touch(SectionId::kDocFacts, offset, length);
    if (c == nullptr) c = &facts_cursors[facts_cursor_next++ % std::size(facts_cursors)];
    c->reader = serial_;
    c->block = b;
    if (!c->cursor.Reset(p, p + length, DocFactsBlockCount(b, meta_.doc_count))) [[unlikely]]
      BadFacts(id);
  }
  if (!c->cursor.Seek(id % kDocFactsBlock, d, path)) [[unlikely]]
    BadFacts(id);
}

DocRecord SegmentReader::doc(uint32_t id) const {
  DocRecord d{};
  if (file_.copies(SectionId::kDocFacts)) {
    if (id >= meta_.doc_count) [[unlikely]]
      BadDocId(id);
    d = LocateByCopy(id).record;
  } else {
    Locate(id, &d, nullptr);
  }
  d.path_offset = 0;
  d.column = kNoColumn;
  return d;
}

std::string_view SegmentReader::path(uint32_t id) const {
  if (file_.copies(SectionId::kDocFacts)) {
    if (id >= meta_.doc_count) [[unlikely]]
      BadDocId(id);
    return LocateByCopy(id).path;
  }
  std::string_view p;
  Locate(id, nullptr, &p);
  return p;
}

void SegmentReader::BadEncoding(uint32_t index) const {
  Check(false, path(),
        "encoding " + std::to_string(index) + " out of range (the table has " +
            std::to_string(encodings_.size()) + " names)");
  __builtin_unreachable();
}

std::pair<const uint8_t*, const uint8_t*> SegmentReader::Record(uint32_t id) const {
  uint64_t range[2];
  RecordRange(id, range);
  const uint8_t* p = RecordBytes(range[0], range[1] - range[0]);
  return {p, p + (range[1] - range[0])};
}

void SegmentReader::RecordRange(uint32_t id, uint64_t range[2]) const {
  if (id >= meta_.doc_count) [[unlikely]]
    BadDocId(id);
  ReadRecordRange(id, range);
  if (range[0] > range[1]) [[unlikely]] {
    Check(false, path(), "forward store offsets of document " + std::to_string(id));
  }
}

const uint8_t* SegmentReader::RecordBytes(uint64_t offset, uint64_t length) const {
  // ReadView bounds-checks the end against the section.
  thread_local std::vector<uint8_t> buffer;
  return file_.ReadView(SectionId::kForwardData, offset, length, &buffer);
}

void SegmentReader::ReadRecordRange(uint32_t id, uint64_t range[2]) const {
  uint32_t rel[2];
  file_.Read(SectionId::kForwardOffsets, ForwardOffsetBases(meta_.doc_count) * 8 + uint64_t{id} * 4,
             8, rel);
  uint64_t bases[2];
  const uint64_t b = id / kOffsetBlock;
  const bool next_block = (id + 1) % kOffsetBlock == 0;
  file_.Read(SectionId::kForwardOffsets, b * 8, next_block ? 16 : 8, bases);
  range[0] = bases[0] + rel[0];
  range[1] = (next_block ? bases[1] : bases[0]) + rel[1];
}

void SegmentReader::BadColumn(uint32_t id, uint32_t column) const {
  Check(false, file_.path(),
        "document " + std::to_string(id) + " has column " + std::to_string(column) +
            ", outside the bands' columns");
  __builtin_unreachable();
}

bool SegmentReader::HasExactTerm(uint32_t id, uint32_t t) const {
  return HasExactTermInColumn(id, column(id), t);
}

bool SegmentReader::HasExactTermInColumn(uint32_t id, uint32_t column, uint32_t t) const {
  if (t >= meta_.exact_terms) [[unlikely]]
    Check(false, file_.path(), "term " + std::to_string(t) + " has no exact row");
  if (column == kNoColumn) return false;  // a document without terms is in no band
  // The bands cover the columns in order; there are a few of them.
  for (uint64_t b = 0; b < meta_.band_count; ++b) {
    const BandRecord& band = bands_[b];
    if (column < band.first_column || column - band.first_column >= band.doc_count) continue;
    const uint64_t local = column - band.first_column;
    const uint64_t offset = RowOffset(band, ExactRow(band, t)) + local / 64 * 8;
    uint64_t word;
    file_.Read(SectionId::kRows, offset, 8, &word);
    return (word >> (local % 64)) & 1;
  }
  BadColumn(id, column);
}

void SegmentReader::WillNeedRecords(const uint32_t* ids, size_t n) const {
  if (!file_.random_access()) return;
  // As for WillNeedDocs: records of at least one candidate per two chunks are read through the
  // mapping (a phrase's 30,816 candidates among linux-files' 78,255 records: 22,868 preads, 64
  // ms; mapped: 1,727 faults, 28 ms).
  if (file_.copies(SectionId::kForwardData) &&
      2 * n >= ChunkCount(file_.Section(SectionId::kForwardData).size()))
    file_.ReadDensely(SectionId::kForwardData);
  const uint64_t docs = meta_.doc_count;
  const uint64_t rel_at = ForwardOffsetBases(docs) * 8;
  file_.WillNeedPieces(SectionId::kForwardOffsets, n, [&](size_t i) {
    return std::pair<uint64_t, uint64_t>{rel_at + uint64_t{ids[i]} * 4, 8};
  });
  file_.WillNeedPieces(SectionId::kForwardOffsets, n, [&](size_t i) {
    return std::pair<uint64_t, uint64_t>{uint64_t{ids[i]} / kOffsetBlock * 8, 16};
  });
  // The offsets are read unverified: a hint only (WillNeedPieces ignores what is out of range).
  file_.WillNeedPieces(SectionId::kForwardData, n, [&](size_t i) {
    if (ids[i] >= docs) return std::pair<uint64_t, uint64_t>{0, 0};
    uint64_t range[2];
    if (file_.copies(SectionId::kForwardOffsets)) {  // not the mapping: read (verified) by copy
      ReadRecordRange(ids[i], range);
    } else {
      range[0] = RawOffset(ids[i]);
      range[1] = RawOffset(ids[i] + 1);
    }
    return std::pair<uint64_t, uint64_t>{range[0], range[1] > range[0] ? range[1] - range[0] : 0};
  });
}

void SegmentReader::ExpectRecords(size_t n) const {
  if (!file_.copies(SectionId::kDocFacts)) return;
  std::lock_guard<util::SpinLock> lock(kept_mu_);
  kept_.reserve(kept_.size() + n);
}

void SegmentReader::WillNeedDocs(const uint32_t* ids, size_t n) const {
  if (!file_.random_access()) return;
  // Results that will touch a large share of a section's chunks are read through the mapping,
  // whose faults map 16 neighbouring pages each, not a pread per chunk: at one result per two
  // chunks, by the costs measured on a paravirtualized guest (a 4 KiB pread ~3.6 us, a fault
  // ~10-20 us).
  // (linux-paras `else null`, 24k results: 23k preads of DOC_FACTS, 142 ms; mapped: 13k, ...)
  for (SectionId id : {SectionId::kDocFactsIndex, SectionId::kDocFacts}) {
    if (file_.copies(id) && 2 * n >= ChunkCount(file_.Section(id).size())) file_.ReadDensely(id);
  }
  const uint64_t docs = meta_.doc_count;
  // Two rounds of reads: the blocks' index entries, then the blocks, read unverified as hints
  // (WillNeedPieces ignores what is out of range).
  file_.WillNeedPieces(SectionId::kDocFactsIndex, n, [&](size_t i) {
    return std::pair<uint64_t, uint64_t>{uint64_t{ids[i] / kDocFactsBlock} * 8, 16};
  });
  const auto* blocks = file_.SectionAs<uint64_t>(SectionId::kDocFactsIndex);
  file_.WillNeedPieces(SectionId::kDocFacts, n, [&](size_t i) {
    if (ids[i] >= docs) return std::pair<uint64_t, uint64_t>{0, 0};
    const uint64_t b = ids[i] / kDocFactsBlock;
    uint64_t range[2];
    if (file_.copies(SectionId::kDocFactsIndex)) {
      file_.Read(SectionId::kDocFactsIndex, b * 8, 16, range);
    } else {
      range[0] = blocks[b];
      range[1] = blocks[b + 1];
    }
    return std::pair<uint64_t, uint64_t>{range[0], range[1] > range[0] ? range[1] - range[0] : 0};
  });
}

void SegmentReader::WillNeedColumns(const uint32_t* ids, size_t n) const {
  if (!file_.random_access()) return;
  const uint64_t block_bytes = DocBandsBlockBytes(meta_.band_count);
  file_.WillNeedPieces(SectionId::kDocBands, n, [&](size_t i) {
    return std::pair<uint64_t, uint64_t>{ids[i] / kBlock * block_bytes, block_bytes};
  });
}

const uint8_t* SegmentReader::DocBandsBlock(uint64_t b) const {
  const uint64_t block_bytes = DocBandsBlockBytes(meta_.band_count);
  return file_.ScratchView(SectionId::kDocBands, b * block_bytes, block_bytes);
}

uint32_t SegmentReader::ColumnInBlock(uint32_t id, const uint8_t* block) const {
  uint32_t column;
  if (!DocColumnInBlock(block, id % kBlock, bands_, meta_.band_count, &column)) [[unlikely]] {
    Check(false, path(), "damaged band code of document " + std::to_string(id));
  }
  return column;
}

template <typename Piece, typename Fn>
void SegmentReader::ForEachInSpans(SectionId id, size_t n, const Piece& piece, const Fn& fn) const {
  const uint64_t chunk = kChunkBytes;
  for (size_t i = 0; i < n;) {
    // The span: from the first piece's chunk, as far as the next piece ends at most one chunk
    // past the span's end and the span stays within kColumnSpanBytes (a chunk read for nothing
    // costs less than another pread).
    const auto [offset, length] = piece(i);
    const uint64_t begin = offset / chunk * chunk;
    uint64_t end = offset + length;
    size_t j = i + 1;
    for (; j < n; ++j) {
      const auto [next, next_length] = piece(j);
      const uint64_t at = next + next_length;
      const uint64_t span_end = (end + chunk - 1) / chunk * chunk;
      if (at > span_end + chunk || at - begin > kColumnSpanBytes) break;
      end = std::max(end, at);
    }
    // In the thread's scratch: no buffer of its own to touch.
    const uint8_t* span = file_.ScratchView(id, begin, end - begin);
    for (; i < j; ++i) fn(i, span + (piece(i).first - begin));
  }
}

template <typename Entry>
void SegmentReader::ReadEntries(SectionId id, size_t n, const Entry& entry, uint32_t* out) const {
  if (!file_.copies(id)) {
    for (size_t i = 0; i < n; ++i) file_.Read(id, entry(i) * 4, 4, &out[i]);
    return;
  }
  ForEachInSpans(
      id, n,
      [&](size_t i) {
        return std::pair<uint64_t, uint64_t>{entry(i) * 4, 4};
      },
      [&](size_t i, const uint8_t* bytes) { std::memcpy(&out[i], bytes, 4); });
}

void SegmentReader::Columns(const uint32_t* ids, size_t n, uint32_t* out) const {
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] >= meta_.doc_count) [[unlikely]]
      BadDocId(ids[i]);
  }
  const uint64_t block_bytes = DocBandsBlockBytes(meta_.band_count);
  ForEachInSpans(
      SectionId::kDocBands, n,
      [&](size_t i) {
        return std::pair<uint64_t, uint64_t>{ids[i] / kBlock * block_bytes, block_bytes};
      },
      [&](size_t i, const uint8_t* block) { out[i] = ColumnInBlock(ids[i], block); });
}

void SegmentReader::BandDocs(const BandRecord& band, const uint32_t* columns, size_t n,
                             uint32_t* out) const {
  uint32_t lo = UINT32_MAX, hi = 0;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, columns[i]);
    hi = std::max(hi, columns[i]);
  }
  const uint64_t span_bytes = n == 0 ? 0 : (uint64_t{hi} - lo + 1) * 4;
  if (n != 0 && !file_.copies(SectionId::kBandDocs) &&
      span_bytes <= std::max<uint64_t>(kChunkBytes, n * kBandDocsSpanBytesPerEntry)) {
    // Through the mapping, and the columns close together (a query's candidates, a batch of
    // them in a band): their span is verified once, then read in place, instead of an entry's
    // checks (bounds, chunk verified) for each.
    const uint8_t* span =
        file_.Touch(SectionId::kBandDocs, (band.first_column + uint64_t{lo}) * 4, span_bytes);
    for (size_t i = 0; i < n; ++i) std::memcpy(&out[i], span + (columns[i] - lo) * 4, 4);
  } else {
    ReadEntries(
        SectionId::kBandDocs, n, [&](size_t i) { return band.first_column + columns[i]; }, out);
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i] >= meta_.doc_count) [[unlikely]]
      BadBandDoc(out[i]);
  }
}

void SegmentReader::WillNeedExactRow(uint32_t t) const {
  if (!file_.random_access() || t >= meta_.exact_terms) return;
  file_.WillNeedPieces(SectionId::kRows, meta_.band_count, [&](size_t b) {
    const BandRecord& band = bands_[b];
    return std::pair<uint64_t, uint64_t>{RowOffset(band, ExactRow(band, t)), RowBytes(band)};
  });
}

bool SegmentReader::Contains(uint32_t id, const uint32_t* ids, size_t n) const {
  auto [begin, end] = Record(id);
  auto r = ForwardRecordContainsAll(begin, end, ids, n);
  // The message is built only on failure: this runs once per candidate.
  if (r == ContainsResult::kCorrupt) {
    Check(false, file_.path(), "damaged forward record of document " + std::to_string(id));
  }
  return r == ContainsResult::kYes;
}

void SegmentReader::SparseRow(uint32_t id, std::vector<uint32_t>* docs) const {
  if (!HasList(id) || id >= meta_.term_count) [[unlikely]]
    Check(false, path(), "term " + std::to_string(id) + " has no document list");
  const format::ListGroups groups = ListGroups();
  const uint64_t g = groups.Group(id);
  uint64_t range[2];
  file_.Read(SectionId::kSparseIndex, g * 8, 16, range);
  const std::string_view data = file_.Section(SectionId::kSparseData);
  if (range[0] > range[1] || range[1] > data.size()) [[unlikely]]
    Check(false, path(), "sparse index of term " + std::to_string(id));
  // The term's list is decoded in the mapping first, and only the bytes the decoding used (the
  // group's lists up to the term's end) are verified before the list is returned: a group of
  // 16 lists of a few thousand ids is ~100 KB, and the lists after the term's are not read.
  // Bytes that are damaged either lie in the verified prefix (the query fails naming the
  // chunk) or did not take part in the decoding.
  const uint64_t length = range[1] - range[0];
  // A cold file: the group asked for in one request (decoding reads the mapping page by page),
  // and its pages mapped in one (a fault each would cost more than mapping the pages after the
  // term's list too).
  file_.WillNeedPieces(SectionId::kSparseData, 1, [&](size_t) {
    return std::pair<uint64_t, uint64_t>{range[0], length};
  });
  file_.Populate(SectionId::kSparseData, range[0], length);
  const auto* p = reinterpret_cast<const uint8_t*>(data.data()) + range[0];
  const uint8_t* end = p + length;
  const uint8_t* stop = end;
  const uint32_t group_first = groups.GroupFirst(id);
  const bool ok = DecodeSparseRow(p, end, group_first, id, dict_, meta_.doc_count, docs, &stop);
  // A failed decoding verifies the whole group: a damaged chunk is named as such.
  file_.Touch(SectionId::kSparseData, range[0], static_cast<uint64_t>((ok ? stop : end) - p));
  if (!ok) [[unlikely]]
    Check(false, path(), "damaged sparse row of term " + std::to_string(id));
}

std::vector<uint32_t> SegmentReader::DocumentTerms(uint32_t id, ForwardCounts* counts,
                                                   ForwardPositions* positions) const {
  std::vector<uint32_t> out;
  auto [begin, end] = Record(id);
  if (!DecodeForwardRecord(begin, end, &out, nullptr, counts, positions)) {
    Check(false, file_.path(), "damaged forward record of document " + std::to_string(id));
  }
  return out;
}

uint32_t SegmentReader::pair_terms() const {
  uint32_t lo = 0, hi = static_cast<uint32_t>(dict_.term_count());
  while (lo < hi) {  // the first id that is not a pair term
    const uint32_t mid = lo + (hi - lo) / 2;
    if (IsPairTerm(dict_.Df(mid), meta_.doc_count)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

PhraseLists SegmentReader::TermPositions(uint32_t id, const uint32_t* want, size_t n,
                                         std::vector<uint32_t>* at, std::vector<uint32_t>* begin,
                                         const uint64_t* pairs, size_t pairs_n,
                                         const uint16_t* lone, size_t lone_n, bool runs) const {
  uint64_t range[2];
  RecordRange(id, range);
  // By copy, the record's first chunk alone refutes most candidates of a phrase by its pair
  // filter: the rest of a long record is read only for the others (docs/design.md, "Fewer
  // bytes a one-shot candidate").
  const uint64_t head = std::max<uint64_t>(kRecordHeadBytes, kChunkBytes - range[0] % kChunkBytes);
  if (pairs_n > 0 && range[1] - range[0] > head && file_.copies(SectionId::kForwardData)) {
    const uint8_t* p = RecordBytes(range[0], head);
    if (!ForwardRecordMayHavePairs(p, p + head, pairs, pairs_n, lone, lone_n))
      return PhraseLists::kNoPair;
  }
  const uint8_t* first = RecordBytes(range[0], range[1] - range[0]);
  const uint8_t* end = first + (range[1] - range[0]);
  if (pairs_n > 0 && !ForwardRecordMayHavePairs(first, end, pairs, pairs_n, lone, lone_n))
    return PhraseLists::kNoPair;
  const PhraseLists found = ForwardRecordLists(first, end, want, n, at, begin, runs);
  if (found == PhraseLists::kCorrupt) {
    Check(false, file_.path(), "damaged forward record of document " + std::to_string(id));
  }
  return found;
}

void SegmentReader::TermCounts(uint32_t id, const uint32_t* want, size_t n, uint32_t* tf,
                               uint32_t* length) const {
  auto [begin, end] = Record(id);
  if (!ForwardRecordCounts(begin, end, want, n, tf, length)) {
    Check(false, file_.path(), "damaged forward record of document " + std::to_string(id));
  }
}

const RankBoundsView& SegmentReader::RankBounds() const {
  std::call_once(rank_bounds_once_, [&] {
    const uint64_t size = file_.Section(SectionId::kRankBounds).size();
    static const uint8_t kNone = 0;
    const uint8_t* bytes = size > 0 ? file_.Touch(SectionId::kRankBounds, 0, size) : &kNone;
    const std::string problem = rank_bounds_.Parse(bytes, size, meta_.doc_count, meta_.term_count);
    Check(problem.empty(), path(), "rank bounds: " + problem);
  });
  return rank_bounds_;
}

}  // namespace bitsift::format
