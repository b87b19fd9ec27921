#include "format/doc_bands.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

using namespace bitsift;
using format::BandRecord;

namespace {

// `band_count` bands over `docs` documents, each document in a random band or in none (about
// one in eight), its column its band's first column plus the band's documents before it.
struct Layout {
  std::vector<BandRecord> bands;
  std::vector<uint32_t> column_of;
};

Layout RandomLayout(std::mt19937_64& rng, uint64_t docs, uint64_t band_count) {
  std::vector<int64_t> band_of(docs);
  std::vector<uint32_t> count(band_count, 0);
  for (uint64_t d = 0; d < docs; ++d) {
    // Skewed: low bands hold most documents, as small documents do.
    if (band_count == 0) {  // a segment whose documents have no terms
      band_of[d] = -1;
      continue;
    }
    const uint64_t b = std::min<uint64_t>(band_count - 1, (rng() % band_count) * (rng() % 2));
    band_of[d] = rng() % 8 == 0 ? -1 : static_cast<int64_t>(b);
    if (band_of[d] >= 0) ++count[b];
  }
  Layout l;
  uint64_t first = 0;
  for (uint64_t b = 0; b < band_count; ++b) {
    BandRecord r{};
    r.first_column = first;
    r.doc_count = count[b];
    first += count[b];
    l.bands.push_back(r);
  }
  std::vector<uint32_t> next(band_count, 0);
  for (uint64_t d = 0; d < docs; ++d) {
    l.column_of.push_back(band_of[d] < 0 ? format::kNoColumn
                                         : static_cast<uint32_t>(l.bands[band_of[d]].first_column +
                                                                 next[band_of[d]]++));
  }
  return l;
}

}  // namespace

TEST_CASE("every document's column decodes from its DOC_BANDS block", "[format][doc_bands]") {
  std::mt19937_64 rng(7);
  // 4-bit codes up to 14 bands, 8-bit up to 254, 16-bit above; whole and partial blocks.
  for (uint64_t band_count : {0, 1, 2, 7, 14, 15, 42, 254, 255, 300}) {
    for (uint64_t docs : {0, 1, 63, 511, 512, 513, 2000}) {
      CAPTURE(band_count, docs);
      const Layout l = RandomLayout(rng, docs, band_count);
      const std::vector<uint8_t> bytes = format::EncodeDocBands(l.column_of, l.bands);
      REQUIRE(bytes.size() == format::DocBandsBytes(docs, band_count));
      const uint64_t block_bytes = format::DocBandsBlockBytes(band_count);
      for (uint64_t d = 0; d < docs; ++d) {
        uint32_t column = 0;
        REQUIRE(format::DocColumnInBlock(bytes.data() + d / format::kDocBandsBlock * block_bytes,
                                         d % format::kDocBandsBlock, l.bands.data(), band_count,
                                         &column));
        REQUIRE(column == l.column_of[d]);
      }
    }
  }
  CHECK(format::DocBandCodeBits(14) == 4);
  CHECK(format::DocBandCodeBits(15) == 8);
  CHECK(format::DocBandCodeBits(255) == 16);
}

TEST_CASE("DOC_BANDS refuses columns out of id order and inconsistent blocks",
          "[format][doc_bands]") {
  std::mt19937_64 rng(11);
  Layout l = RandomLayout(rng, 1000, 7);
  // Two documents of band 0 swapped: the columns no longer follow ids.
  auto in_band0 = [&](uint64_t d) {
    return l.column_of[d] != format::kNoColumn && l.column_of[d] < l.bands[1].first_column;
  };
  uint64_t a = 0;
  while (!in_band0(a)) ++a;
  uint64_t b = a + 1;
  while (!in_band0(b)) ++b;
  REQUIRE(b < format::kDocBandsBlock);
  Layout swapped = l;
  std::swap(swapped.column_of[a], swapped.column_of[b]);
  CHECK_THROWS_AS(format::EncodeDocBands(swapped.column_of, swapped.bands), std::logic_error);
  Layout outside = l;
  outside.column_of[a] = static_cast<uint32_t>(l.bands.back().first_column +
                                               l.bands.back().doc_count);  // past every band
  CHECK_THROWS_AS(format::EncodeDocBands(outside.column_of, outside.bands), std::logic_error);

  // A block whose code names no band (9 of 7), or whose count puts a column past its band.
  std::vector<uint8_t> bytes = format::EncodeDocBands(l.column_of, l.bands);
  uint32_t column;
  std::vector<uint8_t> bad = bytes;
  uint8_t* codes = bad.data() + 4 * 7;
  codes[0] = static_cast<uint8_t>((codes[0] & 0xF0) | 9);
  CHECK_FALSE(format::DocColumnInBlock(bad.data(), 0, l.bands.data(), 7, &column));
  bad = bytes;
  const uint32_t too_many = l.bands[0].doc_count;  // band 0's count before block 0
  std::memcpy(bad.data(), &too_many, 4);
  CHECK(format::DocColumnInBlock(bytes.data(), a, l.bands.data(), 7, &column));
  CHECK(column == l.column_of[a]);
  CHECK_FALSE(format::DocColumnInBlock(bad.data(), a, l.bands.data(), 7, &column));
}
