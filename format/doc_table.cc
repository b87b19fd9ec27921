#include "format/doc_table.h"

#include "util/varint.h"

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

// Moves *p past n records without decoding their facts. Returns false if the block ends first.
bool SkipRecords(const uint8_t** p, const uint8_t* end, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t* q = SkipVarints(*p, end, kDocFactsFields - 1);
    uint64_t length;
    if (q == nullptr || !GetVarint(&q, end, &length) || length > static_cast<uint64_t>(end - q))
      return false;
    *p = q + length;
  }
  return true;
}

}  // namespace

void DocFactsWriter::Add(const DocRecord& d, std::string_view path) {
  if (count_ % kDocFactsBlock == 0) {
    index_.push_back(written_ + pending_.size());
    base_ = DocRecord{};
  }
  PutVarint(d.term_count, pending_);
  PutVarint(d.file_size, pending_);
  PutVarint(ZigZag(d.size - d.file_size), pending_);
  PutVarint(ZigZag(static_cast<uint64_t>(d.mtime_ns) - static_cast<uint64_t>(base_.mtime_ns)),
            pending_);
  PutVarint(ZigZag(static_cast<uint64_t>(d.ctime_ns) - static_cast<uint64_t>(d.mtime_ns)),
            pending_);
  PutVarint(ZigZag(d.inode - base_.inode), pending_);
  PutVarint(d.encoding, pending_);
  PutVarint(path.size(), pending_);
  pending_ += path;
  if (count_ % kDocFactsBlock == 0) base_ = d;
  ++count_;
}

std::vector<uint64_t> DocFactsWriter::Finish() {
  std::vector<uint64_t> index = std::move(index_);
  index.push_back(written_ + pending_.size());
  return index;
}

bool DecodeDocFacts(const uint8_t* begin, const uint8_t* end, uint32_t j, DocRecord* d,
                    std::string_view* path) {
  if (j == 0) return GetRecord(&begin, end, DocRecord{}, d, path);
  const uint8_t* p = begin;
  DocRecord base{};
  if (!GetRecord(&p, end, DocRecord{}, &base, nullptr)) return false;
  if (!SkipRecords(&p, end, j - 1)) return false;
  return GetRecord(&p, end, base, d, path);
}

bool ValidDocFactsBlock(const uint8_t* begin, const uint8_t* end, uint32_t count) {
  const uint8_t* p = begin;
  DocRecord base{}, d{};
  for (uint32_t j = 0; j < count; ++j) {
    if (!GetRecord(&p, end, j == 0 ? DocRecord{} : base, &d, nullptr)) return false;
    if (j == 0) base = d;
  }
  return p == end;
}

}  // namespace bitsift::format
