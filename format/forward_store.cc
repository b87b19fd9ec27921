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
  // The pair filter, if any: its encoding [raw, raw_end); its bit array, filter_bytes long (0:
  // none); its lone fingerprints, lone_n u16s.
  const uint8_t* raw = nullptr;
  const uint8_t* raw_end = nullptr;
  const uint8_t* filter = nullptr;
  uint64_t filter_bytes = 0;
  const uint8_t* lone = nullptr;
  uint64_t lone_n = 0;
  const uint8_t* skips = nullptr;  // (blocks - 1) x 8 bytes
  const uint8_t* data = nullptr;
  const uint8_t* counts = nullptr;  // data + the id bytes
  const uint8_t* end = nullptr;

  // The id count and the pair filter, which may be all [p, e) holds of the record: where
  // they end, or null if they are cut short or damaged. *id_bytes: the id bytes with the
  // filter flag.
  const uint8_t* ParseHead(const uint8_t* p, const uint8_t* e, uint64_t* id_bytes) {
    if (!GetVarint(&p, e, &n) || n > (1ULL << 32)) return nullptr;
    *id_bytes = 0;
    if (n > 0 && !GetVarint(&p, e, id_bytes)) return nullptr;
    if (*id_bytes & 1) {
      raw = p;
      uint64_t head = 0;
      if (!GetVarint(&p, e, &head) || head < 2 || (head >> 1) > static_cast<uint64_t>(e - p))
        return nullptr;
      filter_bytes = head >> 1;
      filter = p;
      p += filter_bytes;
      if (head & 1) {
        if (!GetVarint(&p, e, &lone_n) || lone_n == 0 || lone_n > static_cast<uint64_t>(e - p) / 2)
          return nullptr;
        lone = p;
        p += lone_n * 2;
      }
      raw_end = p;
    }
    return p;
  }

  bool Parse(const uint8_t* p, const uint8_t* e) {
    uint64_t id_bytes = 0;
    p = ParseHead(p, e, &id_bytes);
    if (p == nullptr) return false;
    id_bytes >>= 1;
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
  // The pair filter's lone fingerprints into positions->unlisted (if it has positions).
  void ReadUnlisted(ForwardPositions* positions) const {
    positions->unlisted.resize(positions->empty() ? 0 : lone_n);
    if (!positions->unlisted.empty())
      std::memcpy(positions->unlisted.data(), lone, 2 * positions->unlisted.size());
  }
  const uint8_t* BlockStart(uint64_t b) const {
    if (b == 0) return data;
    uint32_t off = GetU32(skips + (b - 1) * 8 + 4);
    return off <= static_cast<uint64_t>(end - data) ? data + off : nullptr;
  }
  uint64_t BlockLength(uint64_t b) const {
    return b + 1 < blocks ? kForwardBlock : n - b * kForwardBlock;
  }
};

// Appends the skip entries and block data of `ids` (not empty) to out, after the id bytes and
// the pair filter (if not empty: PairFilter's encoding).
void EncodeIds(const std::vector<uint32_t>& ids, const std::string& filter, std::string& out) {
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
  PutVarint(data.size() << 1 | (filter.empty() ? 0 : 1), out);
  out += filter;
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
  // v: 1 .. 2^33 - 1.
  void Put(uint64_t v) {
    const int z = 63 - __builtin_clzll(v);
    Bits(uint64_t{1} << z, z + 1);
    if (z > 0) Bits(v & ((uint64_t{1} << z) - 1), z);
  }
  // v zero bits, then a one bit.
  void PutUnary(uint64_t v) {
    for (; v > 32; v -= 32) Bits(0, 32);
    Bits(uint64_t{1} << v, static_cast<int>(v) + 1);
  }
  // v's n low bits (n <= 56).
  void PutBits(uint64_t v, int n) { Bits(v, n); }
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

// Whether positions may follow the counts: not after plain gamma codes (form 1), always after
// counted ones (form 3), and after pairs if the record has them.
enum class Follow { kNever, kMay, kAlways };

// The counts after a record's n ids: the length, the form, and for gamma codes (forms 1 and 3)
// where the codes are and, for more than kForwardBlock ids, the table of where each block's
// codes start.
struct CountsView {
  uint64_t length = 0, form = 0;
  const uint8_t* table = nullptr;  // entries x width bits (blocks 1.. of the ids)
  uint64_t entries = 0, table_bytes = 0;
  int width = 0;
  const uint8_t* codes = nullptr;  // the gamma codes, or the pairs (even forms)
  const uint8_t* codes_end = nullptr;

  bool Parse(const uint8_t* q, const uint8_t* end, uint64_t n) {
    if (!GetVarint(&q, end, &length) || !GetVarint(&q, end, &form) || length > UINT32_MAX ||
        (form & 1 ? (form != 1 && form != 3) || n == 0 : (form >> 1) > n)) {
      return false;
    }
    codes = q;
    codes_end = end;
    if (!(form & 1)) return true;
    if (form == 3) {
      uint64_t bytes = 0;
      if (!GetVarint(&q, end, &bytes) || bytes > static_cast<uint64_t>(end - q)) return false;
      codes_end = q + bytes;
    }
    entries = (n - 1) / kForwardBlock;
    if (entries > 0) {
      if (q == codes_end) return false;
      width = *q++;
      table_bytes = (entries * static_cast<uint64_t>(width) + 7) / 8;
      if (width < 1 || width > 56 || table_bytes > static_cast<uint64_t>(codes_end - q))
        return false;
      table = q;
      q += table_bytes;
    }
    codes = q;
    return true;
  }
  // Where the codes of block e + 1 start, in bits after the first code.
  uint64_t Entry(uint64_t e) const {
    const uint64_t bit = e * static_cast<uint64_t>(width);
    const uint64_t byte = bit / 8;
    uint64_t v = 0;
    std::memcpy(&v, table + byte, std::min<uint64_t>(8, table_bytes - byte));
    return (v >> (bit % 8)) & ((uint64_t{1} << width) - 1);
  }
  // Whether the table's bits after its last entry are zero.
  bool TablePaddedWithZeros() const {
    const uint64_t used = entries * static_cast<uint64_t>(width);
    return used % 8 == 0 || (table[table_bytes - 1] >> (used % 8)) == 0;
  }
  // Where the codes end: the positions begin (form 3).
  Follow follow() const {
    return form == 1 ? Follow::kNever : form == 3 ? Follow::kAlways : Follow::kMay;
  }
};

// The counts after the ids, in [q, end): into *counts (if not null) for `n` ids; *after is
// where they end (the positions begin).
bool DecodeCounts(const uint8_t* q, const uint8_t* end, uint64_t n, ForwardCounts* counts,
                  const uint8_t** after, Follow* follow, std::string* why) {
  CountsView v;
  if (!v.Parse(q, end, n)) {
    *why = "bad counts";
    return false;
  }
  if (counts != nullptr) counts->length = static_cast<uint32_t>(v.length);
  *follow = v.follow();
  if (v.form & 1) {
    if (v.entries > 0 && !v.TablePaddedWithZeros()) {
      *why = "bits after the counts' block table";
      return false;
    }
    GammaReader bits(v.codes, v.codes_end);
    if (counts != nullptr) counts->tf.assign(n, 1);
    uint64_t bit = 0;  // where the next code starts
    for (uint64_t i = 0; i < n; ++i) {
      if (i > 0 && i % kForwardBlock == 0 && v.Entry(i / kForwardBlock - 1) != bit) {
        *why = "wrong counts' block table";
        return false;
      }
      uint32_t tf = 0;
      if (!bits.Next(&tf)) {
        *why = "bad term frequencies";
        return false;
      }
      bit += 2 * static_cast<uint64_t>(31 - __builtin_clz(tf)) + 1;
      if (counts != nullptr) counts->tf[i] = tf;
    }
    if (!bits.RestIsZero() || (v.form == 3 && bits.ByteEnd() != v.codes_end)) {
      *why = "bits after the term frequencies";
      return false;
    }
    *after = bits.ByteEnd();
    return true;
  }
  q = v.codes;
  const uint64_t repeated = v.form >> 1;
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
  *after = q;
  return true;
}

// Bits of [p, end) read at any bit offset, least significant bit first; never past end.
class BitCursor {
 public:
  BitCursor(const uint8_t* p, const uint8_t* end)
      : p_(p), bytes_(static_cast<uint64_t>(end - p)), bits_(bytes_ * 8) {}

  // v's next n bits (n <= 56).
  bool Bits(int n, uint64_t* v) {
    if (bit_ + static_cast<uint64_t>(n) > bits_) return false;
    *v = n == 0 ? 0 : Peek() & ((uint64_t{1} << n) - 1);
    bit_ += static_cast<uint64_t>(n);
    return true;
  }
  // The zeros before the next one bit (consumed with it), at most `limit` of them.
  bool Unary(uint64_t limit, uint64_t* zeros) {
    uint64_t z = 0;
    for (;;) {
      const int valid = Valid();
      if (valid == 0) return false;
      const uint64_t w = Peek() & Mask(valid);
      if (w == 0) {
        z += static_cast<uint64_t>(valid);
        bit_ += static_cast<uint64_t>(valid);
        if (z > limit) return false;
        continue;
      }
      const int t = __builtin_ctzll(w);
      z += static_cast<uint64_t>(t);
      bit_ += static_cast<uint64_t>(t) + 1;
      *zeros = z;
      return z <= limit;
    }
  }
  // A gamma code of a value up to 2^33 - 1.
  bool Gamma(uint64_t* v) {
    // The code within the bits one Peek holds (all but the longest codes).
    const int valid = Valid();
    const uint64_t w = Peek() & Mask(valid);
    if (w != 0) {
      const int z = __builtin_ctzll(w);
      if (z <= 28 && 2 * z + 1 <= valid) {
        *v = (uint64_t{1} << z) | ((w >> (z + 1)) & Mask(z));
        bit_ += static_cast<uint64_t>(2 * z + 1);
        return true;
      }
    }
    uint64_t z = 0, low = 0;
    if (!Unary(32, &z) || !Bits(static_cast<int>(z), &low)) return false;
    *v = (uint64_t{1} << z) | low;
    return true;
  }
  bool Skip(uint64_t n) {
    if (n > bits_ - bit_) return false;
    bit_ += n;
    return true;
  }
  // Passes k gamma codes: those within one Peek at a time (runs of 1s at once), a longer one
  // by Gamma.
  bool SkipGammas(uint64_t k) {
    while (k > 0) {
      const int valid = Valid();
      if (valid == 0) return false;
      const uint64_t w = Peek() & Mask(valid);
      int used = 0;
      while (k > 0 && used < valid) {
        const uint64_t rest = w >> used;
        if (rest & 1) {  // a run of frequencies of 1 (~rest's bits from `valid - used` on are 1)
          const int t = static_cast<int>(std::min<uint64_t>(__builtin_ctzll(~rest), k));
          used += t;
          k -= static_cast<uint64_t>(t);
          continue;
        }
        if (rest == 0) break;
        const int z = __builtin_ctzll(rest);
        if (2 * z + 1 > valid - used) break;
        used += 2 * z + 1;
        --k;
      }
      if (used > 0) {
        bit_ += static_cast<uint64_t>(used);
        continue;
      }
      uint64_t v = 0;
      if (!Gamma(&v)) return false;
      --k;
    }
    return true;
  }
  // Whether n more bits are there.
  bool Has(uint64_t n) const { return n <= bits_ - bit_; }
  // The (at most 57) bits from `offset` bits after the cursor on, zeros past the end.
  uint64_t PeekAt(uint64_t offset) const {
    const uint64_t b = bit_ + offset;
    const uint64_t byte = b / 8;
    if (byte >= bytes_) return 0;
    uint64_t v = 0;
    std::memcpy(&v, p_ + byte, std::min<uint64_t>(8, bytes_ - byte));
    return (v >> (b % 8)) & ((uint64_t{1} << 57) - 1);
  }
  // The bits read so far, and a move to bit `b` (false past the end).
  uint64_t bit() const { return bit_; }
  bool Seek(uint64_t b) {
    if (b > bits_) return false;
    bit_ = b;
    return true;
  }
  // Whether the stream ends within this byte and its bits left are zero.
  bool AtPaddedEnd() const {
    if ((bit_ + 7) / 8 != bytes_) return false;
    return bit_ % 8 == 0 || (p_[bit_ / 8] >> (bit_ % 8)) == 0;
  }

 private:
  static uint64_t Mask(int n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }
  // Bits that Peek holds from bit_ on (at most 57).
  int Valid() const { return static_cast<int>(std::min<uint64_t>(57, bits_ - bit_)); }
  uint64_t Peek() const {
    const uint64_t byte = bit_ / 8;
    uint64_t v = 0;
    if (bytes_ - byte >= 8) {
      std::memcpy(&v, p_ + byte, 8);
    } else {
      std::memcpy(&v, p_ + byte, bytes_ - byte);
    }
    return v >> (bit_ % 8);
  }
  const uint8_t* p_;
  uint64_t bytes_, bits_, bit_ = 0;
};

// The low bits of a list of c positions among count (Elias-Fano): floor(log2(count / c)), 0
// below 2.
int LowBits(uint64_t count, uint64_t c) {
  const uint64_t r = count / c;
  return r < 2 ? 0 : 63 - __builtin_clzll(r);
}

// The bits of a list's body: its c low parts, then its high parts' bit vector, whose length
// follows from count and c alone (so a reader passes a list in O(1)).
uint64_t BodyBits(uint64_t count, uint64_t c) {
  const int k = LowBits(count, c);
  return c * static_cast<uint64_t>(k) + c + ((count - 1) >> k) + 1;
}

// Lists per skip entry of a record's positions.
constexpr uint64_t kListBlock = 32;

// Bits of a gamma code of v.
uint64_t GammaBits(uint64_t v) { return 2 * static_cast<uint64_t>(63 - __builtin_clzll(v)) + 1; }

// Writes the body of a list of c positions (ascending, below count): Elias-Fano, BodyBits long.
void PutBody(GammaWriter& bits, uint64_t count, const uint32_t* list, size_t c) {
  const int k = LowBits(count, c);
  if (k > 0) {
    for (size_t i = 0; i < c; ++i) bits.PutBits(list[i] & ((uint64_t{1} << k) - 1), k);
  }
  // High parts: for each position, the zeros since the previous one's high part, a one; then
  // zeros up to the vector's length.
  uint64_t high = 0, used = 0;
  for (size_t i = 0; i < c; ++i) {
    const uint64_t h = list[i] >> k;
    bits.PutUnary(h - high);
    used += h - high + 1;
    high = h;
  }
  for (uint64_t rest = BodyBits(count, c) - c * static_cast<uint64_t>(k) - used; rest > 0;) {
    const int n = static_cast<int>(std::min<uint64_t>(rest, 32));
    bits.PutBits(0, n);
    rest -= static_cast<uint64_t>(n);
  }
}

void EncodePositions(const ForwardPositions& p, std::string& out) {
  // Skip entries for each block of kListBlock lists after the first: where its headers and
  // bodies start and the index before it, as gaps from the previous entry's (+ 1). The headers'
  // bits and the entries' bits come first, so that a reader reads only the entries it needs and
  // finds the bodies without reading every header.
  std::vector<uint64_t> skips;
  uint64_t header_bits = 0, body_bits = 0, last_index = 0, last_header = 0, last_body = 0;
  for (size_t j = 0; j < p.which.size(); ++j) {
    const uint64_t gap = j == 0 ? uint64_t{p.which[0]} + 1 : p.which[j] - p.which[j - 1];
    const uint64_t c = p.begin[j + 1] - p.begin[j];
    if (j > 0 && j % kListBlock == 0) {
      const uint64_t index = p.which[j - 1] + uint64_t{1};
      skips.insert(skips.end(), {index - last_index + 1, header_bits - last_header + 1,
                                 body_bits - last_body + 1});
      last_index = index;
      last_header = header_bits;
      last_body = body_bits;
    }
    header_bits += GammaBits(gap) + GammaBits(c);
    body_bits += BodyBits(p.count, c);
  }
  uint64_t skip_bits = 0;
  for (uint64_t v : skips) skip_bits += GammaBits(v);
  GammaWriter bits(out);
  const bool runs = !p.run_starts.empty();
  bits.Put(p.count);
  bits.Put(p.which.size() * 2 + runs);
  bits.Put(header_bits);
  bits.Put(skip_bits + 1);
  if (runs) {
    bits.Put(p.run_starts.size());
    PutBody(bits, p.count, p.run_starts.data(), p.run_starts.size());
  }
  for (uint64_t v : skips) bits.Put(v);
  for (size_t j = 0; j < p.which.size(); ++j) {
    bits.Put(j == 0 ? uint64_t{p.which[0]} + 1 : p.which[j] - p.which[j - 1]);
    bits.Put(p.begin[j + 1] - p.begin[j]);
  }
  for (size_t j = 0; j < p.which.size(); ++j) {
    size_t c = 0;
    const uint32_t* list = p.List(j, &c);
    PutBody(bits, p.count, list, c);
  }
  bits.Finish();
}

// A skip entry of a record's positions: before list b * kListBlock, the running index (the
// previous list's index + 1) and where its header and body start (bits after the first ones).
struct ListSkip {
  uint64_t index = 0, header = 0, body = 0;
};

// The skip entries of `lists` lists, read as far as they are asked for from a cursor at the
// first of them, into `read` (cleared).
class ListSkips {
 public:
  ListSkips(const BitCursor& bits, uint64_t lists, std::vector<ListSkip>& read)
      : bits_(bits), count_(lists == 0 ? 0 : (lists - 1) / kListBlock), read_(read) {
    read_.clear();
  }
  // The entries there are (those of lists kListBlock, 2 * kListBlock, ...).
  uint64_t size() const { return count_; }
  // Entry b (of list (b + 1) * kListBlock), or nullptr if damaged.
  const ListSkip* At(uint64_t b) {
    while (read_.size() <= b) {
      uint64_t di = 0, dh = 0, db = 0;
      if (!bits_.Gamma(&di) || !bits_.Gamma(&dh) || !bits_.Gamma(&db)) return nullptr;
      ListSkip e = read_.empty() ? ListSkip{} : read_.back();
      e.index += di - 1;
      e.header += dh - 1;
      e.body += db - 1;
      read_.push_back(e);
    }
    return &read_[b];
  }
  // The bits read so far (all of them once every entry is read).
  uint64_t bit() const { return bits_.bit(); }

 private:
  BitCursor bits_;
  uint64_t count_;
  std::vector<ListSkip>& read_;
};

// The head of a record's positions at the cursor: count, lists, the headers' bits and where
// the skip entries, the headers and the bodies start; false if damaged.
struct PositionsHead {
  uint64_t count = 0, lists = 0, header_bits = 0, skip_bits = 0;
  uint64_t run_starts = 0;                      // 0: none
  uint64_t runs = 0;                            // bit offset of their body
  uint64_t skips = 0, headers = 0, bodies = 0;  // bit offsets

  bool Read(BitCursor& bits, uint64_t n) {
    uint64_t lists_runs = 0;
    if (!bits.Gamma(&count) || count > UINT32_MAX || !bits.Gamma(&lists_runs) ||
        (lists = lists_runs >> 1) > n || !bits.Gamma(&header_bits) || !bits.Gamma(&skip_bits))
      return false;
    --skip_bits;
    if (lists_runs & 1) {
      if (!bits.Gamma(&run_starts) || run_starts == 0 || run_starts > count) return false;
      runs = bits.bit();
      if (!bits.Skip(BodyBits(count, run_starts))) return false;
    }
    skips = bits.bit();
    headers = skips + skip_bits;
    bodies = headers + header_bits;
    return bits.Has(skip_bits + header_bits) && (lists > kListBlock) == (skip_bits > 0);
  }
};

// The body of a list of c positions below count at the cursor (BodyBits long), appended to *at
// ascending; false if damaged (a position not above the previous one, or beyond count).
bool DecodeList(BitCursor& bits, uint64_t count, uint64_t c, std::vector<uint32_t>* at) {
  const int k = LowBits(count, c);
  if (!bits.Has(BodyBits(count, c))) return false;  // (before c entries are made room for)
  const size_t first = at->size();
  at->resize(first + c);
  uint32_t* out = at->data() + first;
  for (uint64_t i = 0; i < c; ++i) {
    uint64_t low = 0;
    if (!bits.Bits(k, &low)) return false;
    out[i] = static_cast<uint32_t>(low);
  }
  // The high parts: the i-th one bit of the vector, at v, holds high part v - i. The vector is
  // read 57 bits at a time.
  const uint64_t vector_bits = c + ((count - 1) >> k) + 1;
  if (!bits.Has(vector_bits)) return false;
  uint64_t i = 0;
  int64_t previous = -1;
  for (uint64_t v = 0; i < c; v += 57) {
    if (v >= vector_bits) return false;
    uint64_t w = bits.PeekAt(v);
    if (vector_bits - v < 57) w &= (uint64_t{1} << (vector_bits - v)) - 1;
    for (; w != 0 && i < c; w &= w - 1, ++i) {
      const uint64_t position = ((v + __builtin_ctzll(w) - i) << k) | out[i];
      if (position >= count || static_cast<int64_t>(position) <= previous) return false;
      out[i] = static_cast<uint32_t>(position);
      previous = static_cast<int64_t>(position);
    }
  }
  return bits.Skip(vector_bits);
}

// The positions in [q, end) of a record of n ids (q == end: none, unless its counts are gamma
// codes, form 3, which only records with positions have). With tf (the record's frequencies),
// a list longer than its id's frequency is refused.
bool DecodePositions(const uint8_t* q, const uint8_t* end, uint64_t n, Follow follow,
                     const ForwardCounts* tf, ForwardPositions* out, std::string* why) {
  out->clear();
  if (follow == Follow::kNever || q == end) {
    *why = "bytes after the counts";
    return q == end && follow != Follow::kAlways;
  }
  BitCursor bits(q, end);
  *why = "bad positions";
  PositionsHead head;
  if (!head.Read(bits, n)) return false;
  const uint64_t count = head.count, lists = head.lists;
  if (head.run_starts > 0) {
    BitCursor runs = bits;
    if (!runs.Seek(head.runs) || !DecodeList(runs, count, head.run_starts, &out->run_starts))
      return false;
  }
  std::vector<ListSkip> read;
  ListSkips skips(bits, lists, read);
  for (uint64_t b = 0; b < skips.size(); ++b) {
    if (skips.At(b) == nullptr) return false;
  }
  if (skips.bit() != head.headers || !bits.Seek(head.headers)) return false;
  out->count = static_cast<uint32_t>(count);
  out->begin.push_back(0);
  std::vector<uint64_t> sizes;
  uint64_t index = 0, total = 0, body = 0;
  for (uint64_t j = 0; j < lists; ++j) {
    if (j > 0 && j % kListBlock == 0) {
      const ListSkip& e = *skips.At(j / kListBlock - 1);
      if (e.index != index || e.header != bits.bit() - head.headers || e.body != body) return false;
    }
    uint64_t gap = 0, c = 0;
    if (!bits.Gamma(&gap) || (index += gap) > n || !bits.Gamma(&c) || (total += c) > count ||
        (tf != nullptr && c > tf->TfAt(index - 1))) {
      return false;
    }
    out->which.push_back(static_cast<uint32_t>(index - 1));
    sizes.push_back(c);
    body += BodyBits(count, c);
  }
  if (bits.bit() != head.bodies) return false;
  for (uint64_t c : sizes) {
    if (!DecodeList(bits, count, c, &out->at)) return false;
    out->begin.push_back(static_cast<uint32_t>(out->at.size()));
  }
  if (lists == 0 || !bits.AtPaddedEnd()) {
    *why = "bytes after the positions";
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

namespace {

// With `positions_follow`, gamma codes are preceded by their byte count (form 3, not 1), so
// that the positions are found without decoding them.
void EncodeIdsAndCounts(const std::vector<uint32_t>& ids, const ForwardCounts& counts,
                        bool positions_follow, const std::string& filter, std::string& out) {
  PutVarint(ids.size(), out);
  if (!ids.empty()) EncodeIds(ids, filter, out);
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
  // The gamma form's table: where the codes of each block of ids after the first start.
  std::vector<uint64_t> starts;
  for (size_t i = 0, bit = 0; i < counts.tf.size(); ++i) {
    if (i > 0 && i % kForwardBlock == 0) starts.push_back(bit);
    bit += 2 * static_cast<uint64_t>(31 - __builtin_clz(counts.tf[i])) + 1;
  }
  const int width = starts.empty() ? 0 : 64 - __builtin_clzll(starts.back());
  const uint64_t table_bytes = starts.empty() ? 0 : 1 + (starts.size() * width + 7) / 8;
  if (repeated > 0 &&
      table_bytes + (gamma_bits + 7) / 8 + 1 < VarintLength(repeated << 1) + pair_bytes) {
    std::string gamma;
    if (!starts.empty()) gamma.push_back(static_cast<char>(width));
    GammaWriter bits(gamma);
    for (uint64_t start : starts) bits.PutBits(start, width);
    bits.Finish();
    GammaWriter codes(gamma);
    for (uint32_t tf : counts.tf) codes.Put(tf);
    codes.Finish();
    PutVarint(positions_follow ? 3 : 1, out);
    if (positions_follow) PutVarint(gamma.size(), out);
    out += gamma;
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

}  // namespace

uint64_t PairKey(uint64_t a_hash, uint64_t b_hash) {
  // SplitMix64's finalizer over an order-dependent mix of the two hashes.
  uint64_t x = a_hash + 0x9e3779b97f4a7c15ULL * (b_hash ^ (b_hash >> 29));
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint16_t LoneFingerprint(uint64_t hash) {
  return static_cast<uint16_t>(PairKey(hash, ~hash) >> 48);
}

std::string PairFilter(const ForwardPositions& p) {
  if (p.empty()) return {};
  // The pair term standing at each position (list index + 1), or 0.
  std::vector<uint32_t> at(p.count, 0);
  bool any = !p.unlisted.empty();
  for (size_t k = 0; k < p.pair_hash.size(); ++k) {
    if (p.pair_hash[k] == 0) continue;
    any = true;
    size_t n = 0;
    const uint32_t* list = p.List(k, &n);
    for (size_t i = 0; i < n; ++i) at[list[i]] = static_cast<uint32_t>(k + 1);
  }
  if (!any) return {};
  std::vector<uint64_t> keys;
  for (size_t i = 0; i + 1 < at.size(); ++i) {
    if (at[i] != 0 && at[i + 1] != 0)
      keys.push_back(PairKey(p.pair_hash[at[i] - 1], p.pair_hash[at[i + 1] - 1]));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const uint64_t bytes = std::max<uint64_t>(1, (keys.size() * kPairFilterBits + 7) / 8);
  std::string bits(bytes, '\0');
  for (uint64_t key : keys) {
    const uint64_t bit = PairBit(key, bytes * 8);
    bits[bit / 8] = static_cast<char>(bits[bit / 8] | (1 << (bit % 8)));
  }
  std::vector<uint16_t> lone = p.unlisted;
  std::sort(lone.begin(), lone.end());
  lone.erase(std::unique(lone.begin(), lone.end()), lone.end());
  std::string out;
  PutVarint(bytes << 1 | (lone.empty() ? 0 : 1), out);
  out += bits;
  if (!lone.empty()) {
    PutVarint(lone.size(), out);
    for (uint16_t f : lone) out.append(reinterpret_cast<const char*>(&f), 2);
  }
  return out;
}

uint64_t EncodeForwardRecord(const std::vector<uint32_t>& ids, const ForwardCounts& counts,
                             std::string& out, const ForwardPositions* positions) {
  const bool with_positions = positions != nullptr && !positions->empty();
  const std::string filter = with_positions ? PairFilter(*positions) : std::string();
  EncodeIdsAndCounts(ids, counts, with_positions, filter, out);
  if (!with_positions) return 0;
  const size_t before = out.size();
  EncodePositions(*positions, out);
  return out.size() - before + filter.size();
}

bool ForwardRecordMayHavePairs(const uint8_t* p, const uint8_t* end, const uint64_t* pairs,
                               size_t pairs_n, const uint16_t* lone, size_t lone_n) {
  RecordView r;
  uint64_t id_bytes = 0;
  if (r.ParseHead(p, end, &id_bytes) == nullptr || r.filter_bytes == 0) return true;
  const uint64_t bits = r.filter_bytes * 8;
  auto has = [&](uint64_t key) {
    const uint64_t bit = PairBit(key, bits);
    return (r.filter[bit / 8] >> (bit % 8) & 1) != 0;
  };
  if (std::all_of(pairs, pairs + pairs_n, has)) return true;
  for (uint64_t i = 0; i < r.lone_n; ++i) {
    uint16_t f;
    std::memcpy(&f, r.lone + 2 * i, 2);
    if (std::find(lone, lone + lone_n, f) != lone + lone_n) return true;
  }
  return false;
}

bool DecodeForwardRecord(const uint8_t* p, const uint8_t* end, std::vector<uint32_t>* out,
                         const StrictForward* strict, ForwardCounts* counts,
                         ForwardPositions* positions) {
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
  if (strict == nullptr && counts == nullptr && positions == nullptr) return true;
  if (q != r.counts) return fail("wrong id byte count");
  std::string why;
  ForwardCounts scratch;
  ForwardCounts* c = counts != nullptr ? counts : (strict != nullptr ? &scratch : nullptr);
  const uint8_t* after = nullptr;
  Follow follow = Follow::kNever;
  if (!DecodeCounts(q, end, r.n, c, &after, &follow, &why)) return fail(why);
  ForwardPositions none;
  ForwardPositions* pos = positions != nullptr ? positions : &none;
  if (!DecodePositions(after, end, r.n, follow, c, pos, &why)) return fail(why);
  r.ReadUnlisted(pos);
  if (strict != nullptr && strict->pair_hash != nullptr) {
    const std::vector<uint64_t>& hash = *strict->pair_hash;
    auto hash_of = [&](uint32_t id) { return id < hash.size() ? hash[id] : 0; };
    pos->pair_hash.clear();
    std::vector<uint16_t> may_stand;  // of the pair terms it holds without a list
    for (size_t k = 0, j = 0; k < out->size(); ++k) {
      if (j < pos->which.size() && pos->which[j] == k) {
        pos->pair_hash.push_back(hash_of((*out)[k]));
        ++j;
      } else if (hash_of((*out)[k]) != 0) {
        may_stand.push_back(LoneFingerprint(hash_of((*out)[k])));
      }
    }
    for (uint16_t f : pos->unlisted) {
      if (std::find(may_stand.begin(), may_stand.end(), f) == may_stand.end())
        return fail("pair filter names a term the record does not hold without positions");
    }
    const std::string filter = PairFilter(*pos);
    if (filter.size() != static_cast<uint64_t>(r.raw_end - r.raw) ||
        (!filter.empty() && std::memcmp(filter.data(), r.raw, filter.size()) != 0))
      return fail("pair filter not that of the positions");
  } else if (pos->empty() && r.filter_bytes > 0) {
    return fail("pair filter without positions");
  }
  return true;
}

bool ForwardRecordPositions(const uint8_t* p, const uint8_t* end, ForwardPositions* positions) {
  RecordView r;
  if (!r.Parse(p, end)) return false;
  const uint8_t* after = nullptr;
  Follow follow = Follow::kNever;
  std::string why;
  if (!DecodeCounts(r.counts, end, r.n, nullptr, &after, &follow, &why) ||
      !DecodePositions(after, end, r.n, follow, nullptr, positions, &why))
    return false;
  r.ReadUnlisted(positions);
  return true;
}

void SortRecord(std::vector<uint32_t>* ids, ForwardCounts* counts, ForwardPositions* positions) {
  if (std::is_sorted(ids->begin(), ids->end())) return;
  const bool tf = !counts->tf.empty();
  const bool moved = positions != nullptr && !positions->empty();
  if (!tf && !moved) {
    std::sort(ids->begin(), ids->end());
    return;
  }
  std::vector<uint32_t> order(ids->size());  // order[r]: the index of the r-th smallest id
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return (*ids)[a] < (*ids)[b]; });
  std::vector<uint32_t> sorted(ids->size());
  for (size_t r = 0; r < order.size(); ++r) sorted[r] = (*ids)[order[r]];
  ids->swap(sorted);
  if (tf) {
    for (size_t r = 0; r < order.size(); ++r) sorted[r] = counts->tf[order[r]];
    counts->tf.swap(sorted);
  }
  if (moved) {
    std::vector<uint32_t> rank(order.size());
    for (uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
    std::vector<uint32_t> lists(positions->which.size());
    for (uint32_t k = 0; k < lists.size(); ++k) lists[k] = k;
    std::sort(lists.begin(), lists.end(), [&](uint32_t a, uint32_t b) {
      return rank[positions->which[a]] < rank[positions->which[b]];
    });
    ForwardPositions out;
    out.count = positions->count;
    out.begin.push_back(0);
    for (uint32_t k : lists) {
      size_t n = 0;
      const uint32_t* list = positions->List(k, &n);
      if (!positions->pair_hash.empty()) out.pair_hash.push_back(positions->pair_hash[k]);
      out.which.push_back(rank[positions->which[k]]);
      out.at.insert(out.at.end(), list, list + n);
      out.begin.push_back(static_cast<uint32_t>(out.at.size()));
    }
    out.unlisted = std::move(positions->unlisted);
    out.run_starts = std::move(positions->run_starts);
    *positions = std::move(out);
  }
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

namespace {

// The indexes in the record's id list of the ids `want` (strictly ascending) it holds, each
// with its i in want, ascending; false if the ids read are damaged.
bool HeldIndexes(const RecordView& r, const uint8_t* end, const uint32_t* want, size_t n,
                 std::vector<std::pair<uint64_t, size_t>>* out) {
  std::vector<std::pair<uint64_t, size_t>>& held = *out;
  held.clear();
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
  return true;
}

}  // namespace

bool ForwardRecordCounts(const uint8_t* p, const uint8_t* end, const uint32_t* want, size_t n,
                         uint32_t* tf, uint32_t* length) {
  RecordView r;
  if (!r.Parse(p, end)) return false;
  std::fill(tf, tf + n, 0);
  // The positions in the id list of the wanted ids the record holds, ascending.
  thread_local std::vector<std::pair<uint64_t, size_t>> held;  // (position, i)
  if (!HeldIndexes(r, end, want, n, &held)) return false;
  CountsView v;
  if (!v.Parse(r.counts, end, r.n)) return false;
  *length = static_cast<uint32_t>(v.length);
  for (const auto& [position, i] : held) tf[i] = 1;
  if (v.form & 1) {
    // From the start of each held id's block's codes, or from the code after the previous
    // held id's if that is nearer.
    BitCursor bits(v.codes, v.codes_end);
    uint64_t at = 0;
    for (const auto& [position, i] : held) {
      const uint64_t block = position / kForwardBlock;
      if (block > 0 && block * kForwardBlock > at) {
        if (!bits.Seek(v.Entry(block - 1))) return false;
        at = block * kForwardBlock;
      }
      uint64_t f = 0;
      if (!bits.SkipGammas(position - at) || !bits.Gamma(&f) || f > UINT32_MAX) return false;
      tf[i] = static_cast<uint32_t>(f);
      at = position + 1;
    }
    return true;
  }
  const uint8_t* q = v.codes;
  const uint64_t repeated = v.form >> 1;
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

PhraseLists ForwardRecordLists(const uint8_t* p, const uint8_t* end, const uint32_t* want, size_t n,
                               std::vector<uint32_t>* at, std::vector<uint32_t>* begin, bool runs) {
  at->clear();
  begin->assign(1, 0);
  RecordView r;
  if (!r.Parse(p, end)) return PhraseLists::kCorrupt;
  thread_local std::vector<std::pair<uint64_t, size_t>> held;
  if (!HeldIndexes(r, end, want, n, &held)) return PhraseLists::kCorrupt;
  if (held.size() < n) return PhraseLists::kAbsent;
  // Past the counts without decoding them.
  const uint8_t* q = r.counts;
  uint64_t words = 0, form = 0;
  if (!GetVarint(&q, end, &words) || !GetVarint(&q, end, &form)) return PhraseLists::kCorrupt;
  if (form == 1) return PhraseLists::kUnpositioned;
  if (form == 3) {
    uint64_t bytes = 0;
    if (!GetVarint(&q, end, &bytes) || bytes > static_cast<uint64_t>(end - q))
      return PhraseLists::kCorrupt;
    q += bytes;
  } else if (form & 1) {
    return PhraseLists::kCorrupt;
  } else {
    q = SkipVarints(q, end, form);  // (form / 2) pairs
    if (q == nullptr) return PhraseLists::kCorrupt;
  }
  if (q == end) return PhraseLists::kUnpositioned;
  BitCursor bits(q, end);
  PositionsHead head;
  if (!head.Read(bits, r.n)) return PhraseLists::kCorrupt;
  if (runs && head.run_starts == 0) return PhraseLists::kUnpositioned;
  const uint64_t count = head.count, lists = head.lists;
  thread_local std::vector<ListSkip> read;
  ListSkips skips(bits, lists, read);
  if (!bits.Seek(head.headers)) return PhraseLists::kCorrupt;
  // The headers up to the last wanted list, from the last skip entry before each: where each
  // wanted body starts, in bits after the headers, and its length.
  thread_local std::vector<std::pair<uint64_t, uint64_t>> found;  // (body offset, c)
  found.clear();
  uint64_t offset = 0, index = 0, k = 0;
  uint64_t b = 0;  // skip entries passed: the first whose index is beyond the wanted one's
  for (size_t next = 0; next < n; ++next) {
    const uint64_t want = held[next].first;
    for (; b < skips.size(); ++b) {
      const ListSkip* e = skips.At(b);
      if (e == nullptr) return PhraseLists::kCorrupt;
      if (e->index > want) break;
    }
    // From the last entry at or before the wanted index, if it is beyond list k.
    if (b > 0 && b * kListBlock > k) {
      const ListSkip& e = *skips.At(b - 1);
      if (!bits.Seek(head.headers + e.header)) return PhraseLists::kCorrupt;
      k = b * kListBlock;
      index = e.index;
      offset = e.body;
    }
    for (;; ++k) {
      if (k >= lists) return PhraseLists::kUnpositioned;
      uint64_t gap = 0, c = 0;
      if (!bits.Gamma(&gap) || (index += gap) > r.n || !bits.Gamma(&c) || c > count)
        return PhraseLists::kCorrupt;
      if (index - 1 > want) return PhraseLists::kUnpositioned;
      const uint64_t at_bit = offset;
      offset += BodyBits(count, c);
      if (index - 1 == want) {
        found.emplace_back(at_bit, c);
        ++k;
        break;
      }
    }
  }
  const uint64_t bodies = head.bodies;
  for (const auto& [at_bit, c] : found) {
    if (!bits.Seek(bodies + at_bit) || !DecodeList(bits, count, c, at))
      return PhraseLists::kCorrupt;
    begin->push_back(static_cast<uint32_t>(at->size()));
  }
  if (runs) {
    if (!bits.Seek(head.runs) || !DecodeList(bits, count, head.run_starts, at))
      return PhraseLists::kCorrupt;
    begin->push_back(static_cast<uint32_t>(at->size()));
  }
  return PhraseLists::kFound;
}

}  // namespace bitsift::format
