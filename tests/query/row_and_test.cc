#include "query/row_and.h"

#include <catch2/catch.hpp>
#include <random>
#include <vector>

using namespace bitsift::query;

TEST_CASE("blocked and parallel AND equal the scalar loop", "[and]") {
  std::mt19937_64 rng(9);
  for (size_t words : {8, 64, 1000, 1 << 14, 40000}) {
    for (size_t nrows : {1, 2, 7, 21}) {
      for (double density : {0.02, 0.5, 0.97}) {
        std::vector<std::vector<uint64_t>> rows(nrows, std::vector<uint64_t>(words));
        for (auto& row : rows) {
          for (auto& w : row) {
            uint64_t v = 0;
            for (int b = 0; b < 64; ++b) {
              if (std::generate_canonical<double, 32>(rng) < density) v |= uint64_t{1} << b;
            }
            w = v;
          }
        }
        std::vector<const uint64_t*> ptrs;
        for (auto& row : rows) ptrs.push_back(row.data());
        std::vector<uint64_t> want(words), serial(words, 7), parallel(words, 7);
        AndRowsScalar(ptrs.data(), nrows, words, want.data());
        uint64_t read_serial = AndRowsBlocked(ptrs.data(), nrows, words, serial.data(), false);
        uint64_t read_parallel = AndRowsBlocked(ptrs.data(), nrows, words, parallel.data(), true);
        INFO("words=" << words << " rows=" << nrows << " density=" << density);
        CHECK(serial == want);
        CHECK(parallel == want);
        CHECK(read_serial == read_parallel);
        CHECK(read_serial <= words * nrows);
        CHECK(read_serial >= words);
        if (density < 0.05 && nrows > 2) CHECK(read_serial < words * nrows);  // skipping works
      }
    }
  }
}
