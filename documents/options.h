// The rules that decide which files are documents and how they are read: one struct, so an
// index can store the rules in force (ToSettings) and an update apply the same ones
// (FromSettings).
#ifndef BITSIFT_DOCUMENTS_OPTIONS_H_
#define BITSIFT_DOCUMENTS_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bitsift::documents {

struct DocumentOptions {
  std::string encoding;            // --encoding: "" = detect per document, else forced
  bool hidden = false;             // --hidden: include dot files and directories
  bool no_ignore = false;          // --no-ignore: .gitignore, .ignore, info/exclude unused
  std::vector<std::string> globs;  // --glob: "GLOB" selects, "!GLOB" excludes (in order)
  // Compressed files whose content is larger are skipped (kDecompressionLimit).
  uint64_t max_decompressed_bytes = 256ULL << 20;

  // Throws Error(kInvalidArgument) naming the option for an encoding ICU does not know, an
  // empty glob or one holding a newline, or a zero limit.
  void Validate() const;

  // The options as key/value strings (keys "documents.encoding", "documents.hidden",
  // "documents.no_ignore", "documents.globs" (newline-separated),
  // "documents.max_decompressed_bytes").
  std::map<std::string, std::string> ToSettings() const;
  // The inverse of ToSettings; keys without the "documents." prefix are ignored, missing keys
  // keep their defaults. Throws Error(kCorrupt) for a malformed value or an unknown
  // "documents." key (settings written by a newer version).
  static DocumentOptions FromSettings(const std::map<std::string, std::string>& settings);

  bool operator==(const DocumentOptions&) const = default;
};

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_OPTIONS_H_
