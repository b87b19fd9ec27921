// The signature-row builder on its own: every term of every column sets exactly its rows
// (sparse terms none), nothing else is set, and the parallel result does not depend on the number
// of threads.
#include "indexer/signature_rows.h"

#include <tbb/task_arena.h>

#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "format/bloom.h"

using bitsift::format::BandRecord;
using bitsift::format::kDocsPerBlock;
using bitsift::indexer::BuildSignatureRows;

namespace {

struct Layout {
  std::vector<BandRecord> bands;
  std::vector<std::vector<std::vector<uint32_t>>> terms;  // [band][column] -> sorted ids
  std::vector<uint64_t> hashes;
  uint32_t exact = 0;
  uint32_t sparse_first = 0;  // ids from here on have sparse rows: no bit
};

Layout MakeLayout(std::mt19937_64& rng) {
  Layout l;
  const uint32_t term_count = 500;
  l.exact = 5;
  l.sparse_first = 400;
  for (uint32_t t = 0; t < term_count; ++t) l.hashes.push_back(rng());
  uint64_t offset_words = 0;
  for (uint32_t b = 0; b < 3; ++b) {
    BandRecord r{};
    r.doc_count = static_cast<uint32_t>(1 + rng() % 1500);
    r.width = 64 + rng() % 900;
    r.k = 1 + static_cast<uint32_t>(rng() % 8);
    r.words_per_row = (r.doc_count + kDocsPerBlock - 1) / kDocsPerBlock * (kDocsPerBlock / 64);
    r.rows_offset = offset_words * 8;
    offset_words += (r.width + l.exact) * r.words_per_row;
    l.bands.push_back(r);
    std::vector<std::vector<uint32_t>> cols(r.doc_count);
    for (auto& c : cols) {
      std::set<uint32_t> ids;
      for (size_t i = rng() % 30; i > 0; --i) ids.insert(static_cast<uint32_t>(rng() % term_count));
      c.assign(ids.begin(), ids.end());
    }
    l.terms.push_back(cols);
  }
  return l;
}

std::vector<uint64_t> Build(const Layout& l) {
  return BuildSignatureRows(
      l.bands, l.exact, l.sparse_first, l.hashes,
      [&](uint64_t b, uint64_t c) -> const std::vector<uint32_t>& { return l.terms[b][c]; });
}

bool Bit(const std::vector<uint64_t>& rows, const BandRecord& b, uint64_t row, uint64_t col) {
  return (rows[b.rows_offset / 8 + row * b.words_per_row + col / 64] >> (col % 64)) & 1;
}

}  // namespace

TEST_CASE("signature rows: each column sets exactly its terms' rows", "[rows]") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 4; ++round) {
    Layout l = MakeLayout(rng);
    std::vector<uint64_t> rows = Build(l);
    for (size_t bi = 0; bi < l.bands.size(); ++bi) {
      const BandRecord& b = l.bands[bi];
      for (uint64_t col = 0; col < b.words_per_row * 64; ++col) {
        std::set<uint64_t> expected;  // the rows this column must have set
        if (col < b.doc_count) {
          for (uint32_t id : l.terms[bi][col]) {
            if (id < l.exact) {
              expected.insert(b.width + id);
            } else if (id < l.sparse_first) {
              bitsift::format::ForEachPosition(l.hashes[id], b.width, b.k,
                                               [&](uint64_t r) { expected.insert(r); });
            }
          }
        }
        for (uint64_t r = 0; r < b.width + l.exact; ++r) {
          if (Bit(rows, b, r, col) != (expected.count(r) > 0)) {
            FAIL("band " << bi << " row " << r << " column " << col);
          }
        }
      }
    }
  }
}

TEST_CASE("signature rows: one thread and many give the same bits", "[rows][concurrent]") {
  std::mt19937_64 rng(8);
  Layout l = MakeLayout(rng);
  std::vector<uint64_t> serial;
  tbb::task_arena one(1);
  one.execute([&] { serial = Build(l); });
  for (int i = 0; i < 3; ++i) CHECK(Build(l) == serial);
}
