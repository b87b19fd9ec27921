#include "format/doc_table.h"

#include <algorithm>

#include "util/varint.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bitsift::format {
namespace {

uint64_t ZigZag(uint64_t difference) {
  const auto v = static_cast<int64_t>(difference);
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

uint64_t UnZigZag(uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

// Reads one record into *d and its path into *path, relative to `base` (see the header).
// Returns false as DecodeDocFacts does.
bool GetRecord(const uint8_t** p, const uint8_t* end, const DocRecord& base, DocRecord* d,
               std::string_view* path) {
  uint64_t v[kDocFactsFields];
  for (uint64_t& field : v) {
    if (!GetVarint(p, end, &field)) return false;
  }
  if (v[0] > UINT32_MAX || v[6] > UINT32_MAX || v[7] > UINT32_MAX) return false;
  if (v[7] > static_cast<uint64_t>(end - *p)) return false;
  d->term_count = static_cast<uint32_t>(v[0]);
  d->file_size = v[1];
  d->size = v[1] + UnZigZag(v[2]);
  d->mtime_ns = static_cast<int64_t>(static_cast<uint64_t>(base.mtime_ns) + UnZigZag(v[3]));
  d->ctime_ns = static_cast<int64_t>(static_cast<uint64_t>(d->mtime_ns) + UnZigZag(v[4]));
  d->inode = base.inode + UnZigZag(v[5]);
  d->encoding = static_cast<uint32_t>(v[6]);
  d->path_length = static_cast<uint32_t>(v[7]);
  if (path != nullptr) *path = std::string_view(reinterpret_cast<const char*>(*p), v[7]);
  *p += v[7];
  return true;
}

// The end of the next n (1..16) varints from p, or nullptr if [p, end) ends first. A record's
// facts are ~12 bytes: one 16-byte load finds their ends, without SkipVarints' popcount (a
// call into libgcc without -mpopcnt: 3% of a query printing 30M results).
const uint8_t* SkipFewVarints(const uint8_t* p, const uint8_t* end, uint32_t n) {
#if defined(__SSE2__)
  if (end - p >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    auto stops = static_cast<uint32_t>(~_mm_movemask_epi8(bytes) & 0xFFFF);
    for (uint32_t k = 1; k < n; ++k) stops &= stops - 1;  // the n-th stop is now the lowest
    if (stops != 0) return p + __builtin_ctz(stops) + 1;
  }
#endif
  for (; p < end; ++p) {
    if (*p < 0x80 && --n == 0) return p + 1;
  }
  return nullptr;
}

// Where the path of the record at p starts (its facts skipped, not decoded), its length in
// *length; nullptr if the block ends first.
const uint8_t* PathOf(const uint8_t* p, const uint8_t* end, uint64_t* length) {
  const uint8_t* q = SkipFewVarints(p, end, kDocFactsFields - 1);
  if (q == nullptr || !GetVarint(&q, end, length) || *length > static_cast<uint64_t>(end - q))
    return nullptr;
  return q;
}

// Moves *p past n records without decoding their facts. Returns false if the block ends first.
bool SkipRecords(const uint8_t** p, const uint8_t* end, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t length;
    const uint8_t* q = PathOf(*p, end, &length);
    if (q == nullptr) return false;
    *p = q + length;
  }
  return true;
}

// The path of the record at p (its facts skipped, not decoded) into *path. Returns false as
// GetRecord does.
bool GetPath(const uint8_t* p, const uint8_t* end, std::string_view* path) {
  uint64_t length;
  const uint8_t* q = PathOf(p, end, &length);
  if (q == nullptr) return false;
  *path = std::string_view(reinterpret_cast<const char*>(q), length);
  return true;
}

// Entry k (1..count-1) of a block's table of record starts; entry 0 is the table's size.
uint64_t TableEntry(const uint8_t* begin, uint32_t count, uint32_t k) {
  if (k == 0) return 2 * uint64_t{count - 1};
  return begin[2 * (k - 1)] | uint64_t{begin[2 * (k - 1) + 1]} << 8;
}

}  // namespace

void DocFactsWriter::Add(const DocRecord& d, std::string_view path) {
  if (count_ % kDocFactsBlock == 0) base_ = DocRecord{};
  starts_.push_back(block_.size());
  PutVarint(d.term_count, block_);
  PutVarint(d.file_size, block_);
  PutVarint(ZigZag(d.size - d.file_size), block_);
  PutVarint(ZigZag(static_cast<uint64_t>(d.mtime_ns) - static_cast<uint64_t>(base_.mtime_ns)),
            block_);
  PutVarint(ZigZag(static_cast<uint64_t>(d.ctime_ns) - static_cast<uint64_t>(d.mtime_ns)), block_);
  PutVarint(ZigZag(d.inode - base_.inode), block_);
  PutVarint(d.encoding, block_);
  PutVarint(path.size(), block_);
  block_ += path;
  if (count_ % kDocFactsBlock == 0) base_ = d;
  ++count_;
  if (count_ % kDocFactsBlock == 0) EndBlock();
}

void DocFactsWriter::EndBlock() {
  if (starts_.empty()) return;
  index_.push_back(written_ + pending_.size());
  const uint64_t table = 2 * (starts_.size() - 1);
  for (size_t k = 1; k < starts_.size(); ++k) {
    const uint64_t at = std::min<uint64_t>(table + starts_[k], kNoRecordStart);
    pending_.push_back(static_cast<char>(at & 0xFF));
    pending_.push_back(static_cast<char>(at >> 8));
  }
  pending_ += block_;
  block_.clear();
  starts_.clear();
}

std::vector<uint64_t> DocFactsWriter::Finish() {
  EndBlock();
  std::vector<uint64_t> index = std::move(index_);
  index.push_back(written_ + pending_.size());
  return index;
}

bool DocFactsCursor::Reset(const uint8_t* begin, const uint8_t* end, uint32_t count) {
  begin_ = begin;
  end_ = end;
  have_base_ = false;
  const bool ok = count >= 1 && count <= kDocFactsBlock &&
                  2 * uint64_t{count - 1} <= static_cast<uint64_t>(end - begin);
  count_ = ok ? count : 0;  // a block refused here refuses every Seek
  return ok;
}

bool DocFactsCursor::Seek(uint32_t j, DocRecord* d, std::string_view* path) {
  if (j >= count_) return false;
  const uint64_t table = TableEntry(begin_, count_, 0);
  if (j > 0 && d != nullptr && !have_base_) {
    const uint8_t* p = begin_ + table;
    if (!GetRecord(&p, end_, DocRecord{}, &base_, nullptr)) return false;
    have_base_ = true;
  }
  // Record j's start, or the last one listed before it (entry 0, the table's size, always is).
  uint32_t k = j;
  uint64_t at = TableEntry(begin_, count_, k);
  while (at == kNoRecordStart) at = TableEntry(begin_, count_, --k);
  if (at < table || at > static_cast<uint64_t>(end_ - begin_)) return false;
  const uint8_t* p = begin_ + at;
  if (!SkipRecords(&p, end_, j - k)) return false;
  if (d == nullptr) return GetPath(p, end_, path);
  return GetRecord(&p, end_, j == 0 ? DocRecord{} : base_, d, path);
}

bool DecodeDocFacts(const uint8_t* begin, const uint8_t* end, uint32_t count, uint32_t j,
                    DocRecord* d, std::string_view* path) {
  DocFactsCursor cursor;
  return cursor.Reset(begin, end, count) && cursor.Seek(j, d, path);
}

bool ValidDocFactsBlock(const uint8_t* begin, const uint8_t* end, uint32_t count) {
  if (count == 0 || count > kDocFactsBlock ||
      2 * uint64_t{count - 1} > static_cast<uint64_t>(end - begin)) {
    return false;
  }
  const uint8_t* p = begin + TableEntry(begin, count, 0);
  DocRecord base{}, d{};
  for (uint32_t j = 0; j < count; ++j) {
    const uint64_t at = static_cast<uint64_t>(p - begin);
    if (TableEntry(begin, count, j) != std::min<uint64_t>(at, j == 0 ? at : kNoRecordStart))
      return false;
    if (!GetRecord(&p, end, j == 0 ? DocRecord{} : base, &d, nullptr)) return false;
    if (j == 0) base = d;
  }
  return p == end;
}

bool SameFileFacts(const DocRecord& d, const struct stat& st) {
  return d.file_size == static_cast<uint64_t>(st.st_size) &&
         d.mtime_ns == static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec &&
         d.ctime_ns == static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec &&
         d.inode == static_cast<uint64_t>(st.st_ino);
}

}  // namespace bitsift::format
