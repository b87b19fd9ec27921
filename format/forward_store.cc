#include "format/forward_store.h"

#include <algorithm>
#include <cstring>

#include "util/error.h"
#include "util/varint.h"

namespace bitsift::format {
namespace {

void PutU32(uint32_t v, std::string& out) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

uint64_t VarintLength(uint64_t v) {
  uint64_t n = 1;
  for (; v >= 128; v >>= 7) ++n;
  return n;
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

// The frequencies as one Elias-gamma code per id, least significant bit first: for tf with
// z = floor(log2 tf), z zero bits, a one bit, then tf's z low bits (least significant first).
// A frequency of 1 is a single bit.
class GammaWriter {
 public:
  explicit GammaWriter(std::string& out) : out_(out) {}
  void Put(uint32_t tf) {
    const int z = 31 - __builtin_clz(tf);
    Bits(uint64_t{1} << z, z + 1);
    if (z > 0) Bits(tf & ((uint64_t{1} << z) - 1), z);
  }
  void Finish() {
    if (have_ > 0) out_.push_back(static_cast<char>(window_));
  }

 private:
  void Bits(uint64_t v, int n) {
    window_ |= v << have_;
    have_ += n;
    while (have_ >= 8) {
      out_.push_back(static_cast<char>(window_ & 0xff));
      window_ >>= 8;
      have_ -= 8;
    }
  }
  std::string& out_;
  uint64_t window_ = 0;
  int have_ = 0;
};

// Bits of a gamma stream: the codes in order, reading no byte at or past `end`.
class GammaReader {
 public:
  GammaReader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  // The next frequency; false if the stream ends inside a code or a code is too long.
  bool Next(uint32_t* tf) {
    Refill();
    if (have_ == 0) return false;
    if (window_ & 1) {  // a frequency of 1
      window_ >>= 1;
      --have_;
      *tf = 1;
      return true;
    }
    if (window_ == 0) return false;  // more than 56 zeros in a row: no code is that long
    const int z = __builtin_ctzll(window_);
    if (z > 31 || z + 1 > have_) return false;
    window_ >>= z + 1;
    have_ -= z + 1;
    Refill();
    if (z > have_) return false;
    *tf = static_cast<uint32_t>((uint64_t{1} << z) | (window_ & ((uint64_t{1} << z) - 1)));
    window_ >>= z;
    have_ -= z;
    return true;
  }
  // Skips up to `n` frequencies of 1 in a row at once; returns how many it skipped.
  uint64_t SkipOnes(uint64_t n) {
    Refill();
    const uint64_t ones = have_ == 64 && ~window_ == 0 ? 64 : __builtin_ctzll(~window_);
    const uint64_t k = std::min<uint64_t>({ones, n, static_cast<uint64_t>(have_)});
    window_ = k == 64 ? 0 : window_ >> k;
    have_ -= static_cast<int>(k);
    return k;
  }
  // Where the bytes read so far end (after the last byte a code used), and whether the bits
  // left in the window's last byte are zero.
  const uint8_t* ByteEnd() const { return p_ - have_ / 8; }
  bool RestIsZero() const { return (window_ & ((uint64_t{1} << (have_ % 8)) - 1)) == 0; }

 private:
  void Refill() {
    while (have_ <= 56 && p_ < end_) {
      window_ |= static_cast<uint64_t>(*p_++) << have_;
      have_ += 8;
    }
  }
  const uint8_t* p_;
  const uint8_t* end_;
  uint64_t window_ = 0;
  int have_ = 0;
};

// The counts after the ids, in [q, end): into *counts (if not null) for `n` ids.
bool DecodeCounts(const uint8_t* q, const uint8_t* end, uint64_t n, bool strict,
                  ForwardCounts* counts, std::string* why) {
  uint64_t length = 0, form = 0;
  if (!GetVarint(&q, end, &length) || !GetVarint(&q, end, &form) || length > UINT32_MAX ||
      (form & 1 ? form != 1 || n == 0 : (form >> 1) > n)) {
    *why = "bad counts";
    return false;
  }
  if (counts != nullptr) counts->length = static_cast<uint32_t>(length);
  if (form == 1) {
    GammaReader bits(q, end);
    if (counts != nullptr) counts->tf.assign(n, 1);
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t tf = 0;
      if (!bits.Next(&tf)) {
        *why = "bad term frequencies";
        return false;
      }
      if (counts != nullptr) counts->tf[i] = tf;
    }
    if (strict && (bits.ByteEnd() != end || !bits.RestIsZero())) {
      *why = "bytes after the counts";
      return false;
    }
    return true;
  }
  const uint64_t repeated = form >> 1;
  if (counts != nullptr) counts->tf.assign(repeated > 0 ? n : 0, 1);
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

std::string EncodeForwardOffsets(const std::vector<uint64_t>& offsets) {
  const uint64_t docs = offsets.size() - 1;
  std::string out;
  out.reserve(ForwardOffsetsBytes(docs));
  for (uint64_t b = 0; b < ForwardOffsetBases(docs); ++b) {
    const uint64_t base = offsets[b * kOffsetBlock];
    out.append(reinterpret_cast<const char*>(&base), 8);
  }
  for (uint64_t i = 0; i < offsets.size(); ++i) {
    const uint64_t rel = offsets[i] - offsets[i / kOffsetBlock * kOffsetBlock];
    Ensure(rel <= UINT32_MAX, ErrorKind::kInvalidArgument,
           "64 documents whose term records take 4 GiB or more");
    PutU32(static_cast<uint32_t>(rel), out);
  }
  return out;
}

bool DecodeForwardOffsets(std::string_view section, uint64_t doc_count,
                          std::vector<uint64_t>* offsets) {
  if (section.size() != ForwardOffsetsBytes(doc_count)) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(section.data());
  const uint8_t* rel = p + ForwardOffsetBases(doc_count) * 8;
  offsets->resize(doc_count + 1);
  for (uint64_t i = 0; i <= doc_count; ++i) {
    uint64_t base;
    std::memcpy(&base, p + i / kOffsetBlock * 8, 8);
    const uint32_t r = GetU32(rel + 4 * i);
    if (i % kOffsetBlock == 0 && r != 0) return false;
    (*offsets)[i] = base + r;
  }
  return true;
}

void EncodeForwardRecord(const std::vector<uint32_t>& ids, const ForwardCounts& counts,
                         std::string& out) {
  PutVarint(ids.size(), out);
  if (!ids.empty()) EncodeIds(ids, out);
  PutVarint(counts.length, out);
  // The smaller of two forms: (index gap, tf - 2) for each id that repeats, or a gamma code
  // for every id (documents where many ids repeat).
  uint64_t repeated = 0, pair_bytes = 0, gamma_bits = 0;
  for (size_t i = 0, last = 0; i < counts.tf.size(); ++i) {
    gamma_bits += 2 * static_cast<uint64_t>(31 - __builtin_clz(counts.tf[i])) + 1;
    if (counts.tf[i] <= 1) continue;
    ++repeated;
    pair_bytes += VarintLength(i - last) + VarintLength(counts.tf[i] - 2);
    last = i;
  }
  if (repeated > 0 && (gamma_bits + 7) / 8 + 1 < VarintLength(repeated << 1) + pair_bytes) {
    PutVarint(1, out);
    GammaWriter bits(out);
    for (uint32_t tf : counts.tf) bits.Put(tf);
    bits.Finish();
    return;
  }
  PutVarint(repeated << 1, out);
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
  uint64_t words = 0, form = 0;
  if (!GetVarint(&q, end, &words) || !GetVarint(&q, end, &form) || words > UINT32_MAX ||
      (form & 1 ? form != 1 : (form >> 1) > r.n)) {
    return false;
  }
  *length = static_cast<uint32_t>(words);
  for (const auto& [position, i] : held) tf[i] = 1;
  if (form == 1) {
    // Walk the codes to each held position, runs of 1s a window at a time.
    GammaReader bits(q, end);
    uint64_t at = 0;
    for (const auto& [position, i] : held) {
      while (at < position) {
        const uint64_t skipped = bits.SkipOnes(position - at);
        at += skipped;
        if (at == position) break;
        uint32_t f = 0;
        if (!bits.Next(&f)) return false;
        ++at;
      }
      if (!bits.Next(&tf[i])) return false;
      ++at;
    }
    return true;
  }
  const uint64_t repeated = form >> 1;
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
