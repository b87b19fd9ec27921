#include "format/forward_store.h"

#include <algorithm>
#include <cstring>

#include "util/varint.h"

namespace bitsift::format {
namespace {

void PutU32(uint32_t v, std::string& out) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

struct RecordView {
  uint64_t n = 0;
  uint64_t blocks = 0;
  const uint8_t* skips = nullptr;  // (blocks - 1) x 8 bytes
  const uint8_t* data = nullptr;
  const uint8_t* counts = nullptr;  // data + the id bytes
  const uint8_t* end = nullptr;

  bool Parse(const uint8_t* p, const uint8_t* e) {
    if (!GetVarint(&p, e, &n) || n > (1ULL << 32)) return false;
    uint64_t id_bytes = 0;
    if (n > 0 && !GetVarint(&p, e, &id_bytes)) return false;
    blocks = (n + kForwardBlock - 1) / kForwardBlock;
    uint64_t skip_bytes = blocks > 1 ? (blocks - 1) * 8 : 0;
    if (static_cast<uint64_t>(e - p) < skip_bytes) return false;
    skips = p;
    data = p + skip_bytes;
    if (static_cast<uint64_t>(e - data) < id_bytes) return false;
    counts = data + id_bytes;
    end = e;
    return true;
  }
  uint32_t FirstId(uint64_t b) const { return GetU32(skips + (b - 1) * 8); }
  const uint8_t* BlockStart(uint64_t b) const {
    if (b == 0) return data;
    uint32_t off = GetU32(skips + (b - 1) * 8 + 4);
    return off <= static_cast<uint64_t>(end - data) ? data + off : nullptr;
  }
  uint64_t BlockLength(uint64_t b) const {
    return b + 1 < blocks ? kForwardBlock : n - b * kForwardBlock;
  }
};

// Appends the skip entries and block data of `ids` (not empty) to out.
void EncodeIds(const std::vector<uint32_t>& ids, std::string& out) {
  std::string data;
  std::vector<std::pair<uint32_t, uint32_t>> skips;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i % kForwardBlock == 0) {
      if (i > 0) skips.emplace_back(ids[i], static_cast<uint32_t>(data.size()));
      PutVarint(ids[i], data);
    } else {
      PutVarint(ids[i] - ids[i - 1] - 1, data);
    }
  }
  PutVarint(data.size(), out);
  for (auto [first, offset] : skips) {
    PutU32(first, out);
    PutU32(offset, out);
  }
  out += data;
}

// The counts after the ids, in [q, end): into *counts (if not null) for `n` ids.
bool DecodeCounts(const uint8_t* q, const uint8_t* end, uint64_t n, bool strict,
                  ForwardCounts* counts, std::string* why) {
  uint64_t length = 0, repeated = 0;
  if (!GetVarint(&q, end, &length) || !GetVarint(&q, end, &repeated) || length > UINT32_MAX ||
      repeated > n) {
    *why = "bad counts";
    return false;
  }
  if (counts != nullptr) {
    counts->length = static_cast<uint32_t>(length);
    counts->tf.assign(repeated > 0 ? n : 0, 1);
  }
  for (uint64_t k = 0, at = 0; k < repeated; ++k) {
    uint64_t gap = 0, tf = 0;
    if (!GetVarint(&q, end, &gap) || !GetVarint(&q, end, &tf) || tf > UINT32_MAX - 2 ||
        (k > 0 && gap == 0) || at + gap >= n) {
      *why = "bad term frequencies";
      return false;
    }
    at += gap;
    if (counts != nullptr) counts->tf[at] = static_cast<uint32_t>(tf + 2);
  }
  if (strict && q != end) {
    *why = "bytes after the counts";
    return false;
  }
  return true;
}

}  // namespace

void EncodeForwardRecord(const std::vector<uint32_t>& ids, const ForwardCounts& counts,
                         std::string& out) {
  PutVarint(ids.size(), out);
  if (!ids.empty()) EncodeIds(ids, out);
  PutVarint(counts.length, out);
  uint64_t repeated = 0;
  for (uint32_t tf : counts.tf) repeated += tf > 1;
  PutVarint(repeated, out);
  for (size_t i = 0, last = 0; i < counts.tf.size(); ++i) {
    if (counts.tf[i] <= 1) continue;
    PutVarint(i - last, out);
    PutVarint(counts.tf[i] - 2, out);
    last = i;
  }
}

bool DecodeForwardRecord(const uint8_t* p, const uint8_t* end, std::vector<uint32_t>* out,
                         const StrictForward* strict, ForwardCounts* counts) {
  out->clear();
  auto fail = [&](const std::string& why) {
    if (strict != nullptr && strict->problem != nullptr) *strict->problem = why;
    return false;
  };
  RecordView r;
  if (!r.Parse(p, end)) return fail("bad id count or skip entries cut short");
  if (strict != nullptr && r.n > strict->term_count) return fail("more ids than terms");
  const uint64_t limit = strict != nullptr ? strict->term_count : uint64_t{UINT32_MAX} + 1;
  const uint8_t* q = r.data;
  uint64_t prev = 0;
  for (uint64_t i = 0; i < r.n; ++i) {
    const uint64_t block = i / kForwardBlock;
    const bool first = i % kForwardBlock == 0;
    if (strict != nullptr && first && block > 0 &&
        GetU32(r.skips + (block - 1) * 8 + 4) != static_cast<uint64_t>(q - r.data)) {
      return fail("wrong skip offset");
    }
    uint64_t v;
    if (!GetVarint(&q, end, &v)) return fail("id cut short");
    if (!first && v >= limit) return fail("gap out of range");
    const uint64_t id = first ? v : prev + v + 1;
    if (i > 0 && id <= prev) return fail("ids not ascending");
    if (id >= limit) return fail("term id " + std::to_string(id) + " out of range");
    if (strict != nullptr && first && block > 0 && r.FirstId(block) != id) {
      return fail("wrong skip id");
    }
    out->push_back(static_cast<uint32_t>(id));
    prev = id;
  }
  if (strict == nullptr && counts == nullptr) return true;
  if (q != r.counts) return fail("wrong id byte count");
  std::string why;
  if (!DecodeCounts(q, end, r.n, strict != nullptr, counts, &why)) return fail(why);
  return true;
}

ContainsResult ForwardRecordContainsAll(const uint8_t* p, const uint8_t* end, const uint32_t* ids,
                                        size_t n) {
  RecordView r;
  if (!r.Parse(p, end)) return ContainsResult::kCorrupt;
  if (r.n == 0) return ContainsResult::kNo;
  uint64_t block = 0;
  const uint8_t* q = r.data;
  uint64_t left = r.BlockLength(0);  // ids of the block not yet decoded
  uint64_t cur = 0;
  bool have = false;  // whether `cur` holds a decoded id of the current block
  for (size_t i = 0; i < n; ++i) {
    const uint32_t want = ids[i];
    // Jump to the last block whose first id is <= want, if it is beyond the current one.
    if (block + 1 < r.blocks && r.FirstId(block + 1) <= want) {
      uint64_t lo = block + 1, hi = r.blocks - 1;
      while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (r.FirstId(mid) <= want)
          lo = mid;
        else
          hi = mid - 1;
      }
      block = lo;
      q = r.BlockStart(block);
      if (q == nullptr) return ContainsResult::kCorrupt;
      left = r.BlockLength(block);
      have = false;
    }
    while ((!have || cur < want) && left > 0) {
      uint64_t v;
      if (!GetVarint(&q, end, &v)) return ContainsResult::kCorrupt;
      cur = have ? cur + v + 1 : v;
      have = true;
      --left;
    }
    if (!have || cur != want) return ContainsResult::kNo;
  }
  return ContainsResult::kYes;
}

bool ForwardRecordCounts(const uint8_t* p, const uint8_t* end, const uint32_t* want, size_t n,
                         uint32_t* tf, uint32_t* length) {
  RecordView r;
  if (!r.Parse(p, end)) return false;
  std::fill(tf, tf + n, 0);
  // The positions in the id list of the wanted ids the record holds, ascending.
  std::vector<std::pair<uint64_t, size_t>> held;  // (position, i)
  if (r.n > 0) {
    uint64_t block = 0;
    const uint8_t* q = r.data;
    uint64_t left = r.BlockLength(0);
    uint64_t cur = 0, at = 0;  // the last id decoded, and its position
    bool have = false;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t id = want[i];
      if (block + 1 < r.blocks && r.FirstId(block + 1) <= id) {
        uint64_t lo = block + 1, hi = r.blocks - 1;
        while (lo < hi) {
          const uint64_t mid = lo + (hi - lo + 1) / 2;
          if (r.FirstId(mid) <= id) {
            lo = mid;
          } else {
            hi = mid - 1;
          }
        }
        block = lo;
        q = r.BlockStart(block);
        if (q == nullptr) return false;
        left = r.BlockLength(block);
        have = false;
      }
      while ((!have || cur < id) && left > 0) {
        uint64_t v;
        if (!GetVarint(&q, end, &v)) return false;
        at = have ? at + 1 : block * kForwardBlock;
        cur = have ? cur + v + 1 : v;
        have = true;
        --left;
      }
      if (have && cur == id) held.emplace_back(at, i);
    }
  }
  const uint8_t* q = r.counts;
  uint64_t words = 0, repeated = 0;
  if (!GetVarint(&q, end, &words) || !GetVarint(&q, end, &repeated) || words > UINT32_MAX ||
      repeated > r.n) {
    return false;
  }
  *length = static_cast<uint32_t>(words);
  for (const auto& [position, i] : held) tf[i] = 1;
  size_t next = 0;  // the first of `held` not yet passed
  for (uint64_t k = 0, at = 0; k < repeated && next < held.size(); ++k) {
    uint64_t gap = 0, f = 0;
    if (!GetVarint(&q, end, &gap) || !GetVarint(&q, end, &f) || f > UINT32_MAX - 2) return false;
    at += gap;
    while (next < held.size() && held[next].first < at) ++next;
    if (next < held.size() && held[next].first == at)
      tf[held[next++].second] = static_cast<uint32_t>(f + 2);
  }
  return true;
}

}  // namespace bitsift::format
