#include "format/doc_bands.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace bitsift::format {
namespace {

uint64_t LoadWord(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// Lanes of `bits` bits (4, 8 or 16) equal to `code` among the first `n` lanes of the packed
// codes at `codes` (SWAR: a lane is zero after the XOR iff it held the code).
uint64_t CountCode(const uint8_t* codes, uint64_t n, uint32_t bits, uint64_t code) {
  const uint64_t lanes = 64 / bits;
  const uint64_t ones = ~uint64_t{0} / ((uint64_t{1} << bits) - 1);  // 1 in each lane's bit 0
  const uint64_t high = ones << (bits - 1);
  const uint64_t low = ~high;
  const uint64_t pattern = code * ones;
  auto zero_lanes = [&](uint64_t word) {
    const uint64_t x = word ^ pattern;
    return ~(((x & low) + low) | x | low);  // a lane's top bit: the lane was zero
  };
  uint64_t count = 0;
  const uint64_t words = n / lanes;
  for (uint64_t w = 0; w < words; ++w) {
    count += static_cast<uint64_t>(__builtin_popcountll(zero_lanes(LoadWord(codes + w * 8))));
  }
  if (const uint64_t rest = n % lanes; rest != 0) {
    const uint64_t mask = (uint64_t{1} << (rest * bits)) - 1;
    count +=
        static_cast<uint64_t>(__builtin_popcountll(zero_lanes(LoadWord(codes + words * 8)) & mask));
  }
  return count;
}

void Fail(const std::string& what) {
  throw std::logic_error("EncodeDocBands: " + what + " (a writer's bug)");
}

}  // namespace

std::vector<uint8_t> EncodeDocBands(const std::vector<uint32_t>& column_of,
                                    const std::vector<BandRecord>& bands) {
  const uint64_t band_count = bands.size();
  if (band_count > kMaxBands) Fail(std::to_string(band_count) + " bands");
  const uint32_t bits = DocBandCodeBits(band_count);
  const uint64_t none = NoBandCode(band_count);
  const uint64_t block_bytes = DocBandsBlockBytes(band_count);
  std::vector<uint8_t> out(DocBandsBytes(column_of.size(), band_count), 0);
  std::vector<uint32_t> before(band_count, 0);  // each band's documents so far
  for (uint64_t b = 0; b < DocBandsBlocks(column_of.size()); ++b) {
    uint8_t* block = out.data() + b * block_bytes;
    if (band_count != 0) std::memcpy(block, before.data(), 4 * band_count);
    uint8_t* codes = block + 4 * band_count;
    for (uint64_t pos = 0; pos < kDocBandsBlock; ++pos) {
      const uint64_t d = b * kDocBandsBlock + pos;
      uint64_t code = none;
      if (d < column_of.size() && column_of[d] != kNoColumn) {
        const uint32_t column = column_of[d];
        const auto it = std::upper_bound(
            bands.begin(), bands.end(), column,
            [](uint32_t c, const BandRecord& band) { return c < band.first_column; });
        if (it == bands.begin()) Fail("column " + std::to_string(column) + " is in no band");
        code = static_cast<uint64_t>(it - bands.begin()) - 1;
        const BandRecord& band = bands[code];
        if (column != band.first_column + before[code] || before[code] >= band.doc_count) {
          Fail("document " + std::to_string(d) + " is not at its band's next column");
        }
        ++before[code];
      }
      const uint64_t bit = pos * bits;
      for (uint32_t i = 0; i < bits; i += 4) {  // a nibble at a time (bits is 4, 8 or 16)
        codes[(bit + i) / 8] |= static_cast<uint8_t>(((code >> i) & 0xF) << ((bit + i) % 8));
      }
    }
  }
  return out;
}

uint32_t DocBandCode(const uint8_t* block, uint64_t pos, uint64_t band_count) {
  const uint32_t bits = DocBandCodeBits(band_count);
  const uint64_t lanes = 64 / bits;
  return static_cast<uint32_t>(
      (LoadWord(block + 4 * band_count + pos / lanes * 8) >> (pos % lanes * bits)) &
      ((uint64_t{1} << bits) - 1));
}

bool DocColumnInBlock(const uint8_t* block, uint64_t pos, const BandRecord* bands,
                      uint64_t band_count, uint32_t* column) {
  const uint32_t bits = DocBandCodeBits(band_count);
  const uint8_t* codes = block + 4 * band_count;
  const uint64_t code = DocBandCode(block, pos, band_count);
  if (code == NoBandCode(band_count)) {
    *column = kNoColumn;
    return true;
  }
  if (code >= band_count) return false;
  uint32_t before;
  std::memcpy(&before, block + 4 * code, 4);
  const uint64_t rank = uint64_t{before} + CountCode(codes, pos, bits, code);
  if (rank >= bands[code].doc_count) return false;
  *column = static_cast<uint32_t>(bands[code].first_column + rank);
  return true;
}

}  // namespace bitsift::format
