// `bitsift stats`: describe an index: segments, encodings, bands, the bytes of each part.
#include <bitsift/bitsift.h>

#include <cinttypes>
#include <cstdio>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"

namespace bitsift::cli {

int RunStats(const std::vector<std::string>& args) {
  std::unique_ptr<Index> index;
  if (auto code = ParseAndOpenIndex(args, "usage: bitsift stats [--index PATH]", &index)) {
    return *code;
  }
  IndexStats st = index->Stats();
  std::printf("index      %s\nroot       %s\nicu        %s\ndocuments  %" PRIu64
              "\nterms      %" PRIu64 " (%" PRIu64 " with exact rows, %" PRIu64
              " with Bloom rows and a list, %" PRIu64
              " with a list only; summed over segments)\nfp target  %g\nfiles      %" PRIu64
              " bytes (%.1f bits per document)\n",
              index->path().c_str(), st.root.c_str(), st.icu_version.c_str(), st.documents,
              st.terms, st.exact_terms, st.bloom_terms, st.sparse_terms, st.fp_rate, st.file_bytes,
              st.documents ? 8.0 * st.file_bytes / st.documents : 0.0);
  std::printf("\nsegments: %zu\n%16s %10s %10s %10s %6s %14s\n", st.segments.size(), "file",
              "documents", "deleted", "terms", "bands", "bytes");
  for (const SegmentStats& seg : st.segments) {
    std::printf("%16s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %6" PRIu64 " %14" PRIu64 "\n",
                seg.file.c_str(), seg.documents, seg.deleted, seg.terms, seg.bands, seg.file_bytes);
  }
  std::printf("\nencodings (live documents): %zu\n", st.encodings.size());
  for (const auto& [name, count] : st.encodings)
    std::printf("  %-16s %10" PRIu64 "\n", name.c_str(), count);
  std::printf("\nbands: %zu\n%6s %10s %3s %10s %10s %7s %12s\n", st.bands.size(), "band", "width",
              "k", "documents", "max terms", "fill", "expected fp");
  for (size_t b = 0; b < st.bands.size(); ++b) {
    const BandStats& bs = st.bands[b];
    std::printf("%6zu %10" PRIu64 " %3u %10" PRIu64 " %10" PRIu64 " %7.3f %12.5f\n", b, bs.width,
                bs.k, bs.documents, bs.max_terms, bs.fill_ratio, bs.expected_fp_rate);
  }
  std::printf("\nparts:\n");
  for (const auto& [name, bytes] : st.section_bytes) {
    std::printf("  %-16s %12" PRIu64 " bytes  %5.1f%%\n", name.c_str(), bytes,
                st.file_bytes ? 100.0 * bytes / st.file_bytes : 0.0);
  }
  return kExitMatch;
}

}  // namespace bitsift::cli
