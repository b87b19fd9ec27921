#include "format/bloom.h"

#include <cmath>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bitsift::format {

uint64_t HashTerm(std::string_view term) { return XXH3_64bits(term.data(), term.size()); }

uint32_t HashCountFor(double fp_rate) {
  double k = std::round(std::log2(1.0 / fp_rate));
  return k < 1 ? 1 : static_cast<uint32_t>(k);
}

BloomShape ShapeFor(uint64_t max_terms, double fp_rate) {
  BloomShape shape;
  shape.k = HashCountFor(fp_rate);
  if (max_terms == 0) return shape;
  // (1 - e^{-kn/m})^k <= p  <=>  m >= -k n / ln(1 - p^{1/k}).
  double k = shape.k;
  double m = -k * static_cast<double>(max_terms) / std::log1p(-std::pow(fp_rate, 1.0 / k));
  shape.width = static_cast<uint64_t>(std::ceil(m));
  if (shape.width < shape.k) shape.width = shape.k;
  return shape;
}

double ExpectedFalsePositiveRate(BloomShape shape, uint64_t n) {
  if (shape.width == 0) return 1.0;
  double k = shape.k;
  return std::pow(1.0 - std::exp(-k * static_cast<double>(n) / static_cast<double>(shape.width)),
                  k);
}

}  // namespace bitsift::format
