// The rules that decide which files are documents and how they are read: one struct, so an
// index can store the rules in force (ToSettings) and an update apply the same ones
// (FromSettings).
#ifndef BITSIFT_DOCUMENTS_OPTIONS_H_
#define BITSIFT_DOCUMENTS_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::documents {

struct DocumentOptions {
  std::string encoding;            // --encoding: "" = detect per document, else forced
  bool hidden = false;             // --hidden: include dot files and directories
  bool no_ignore = false;          // --no-ignore: .gitignore, .ignore, info/exclude unused
  std::vector<std::string> globs;  // --glob: "GLOB" selects, "!GLOB" excludes (in order)
  // Compressed files whose content is larger are skipped (kDecompressionLimit), and PDFs whose
  // text is.
  uint64_t max_decompressed_bytes = 256ULL << 20;
  // The readers of document kinds beyond text and HTML: man pages as `man` shows them
  // (documents/roff.h) and PDFs as their text (documents/pdf.h). An index made before they
  // existed read man pages as plain text and skipped PDFs: its settings lack the key, so both
  // are off when it is read again (its documents read as they were indexed), and an update
  // rebuilds it with them on.
  bool read_man = true;
  bool read_pdf = true;
  // A shard of the tree (bitsift-mpi, docs/shards.md): with shard_count > 0, only the files
  // whose relative path ShardOfPath puts in shard `shard` are documents; the others are absent,
  // as if they were not in the tree (so a rename that moves a file to another shard deletes it
  // here). 0 = the whole tree.
  uint32_t shard_count = 0;
  uint32_t shard = 0;  // < shard_count

  // Throws Error(kInvalidArgument) naming the option for an encoding ICU does not know, an
  // empty glob or one holding a newline, or a zero limit.
  void Validate() const;

  // The options as key/value strings (keys "documents.encoding", "documents.hidden",
  // "documents.no_ignore", "documents.globs" (newline-separated),
  // "documents.max_decompressed_bytes", "documents.readers": the readers on, of "man" and
  // "pdf", comma-separated; "documents.shard": "SHARD/COUNT", only when shard_count > 0, so
  // that an index of a whole tree records what it always did).
  std::map<std::string, std::string> ToSettings() const;
  // The inverse of ToSettings; keys without the "documents." prefix are ignored, missing keys
  // keep their defaults (but a missing "documents.readers" turns both readers off). Throws
  // Error(kCorrupt) for a malformed value or an unknown "documents." key (settings written by a
  // newer version).
  static DocumentOptions FromSettings(const std::map<std::string, std::string>& settings);

  bool operator==(const DocumentOptions&) const = default;
};

// The shard (0 .. shards - 1) of the file at `relative_path` (relative to the indexed
// directory, as documents are named): XXH3-64 of the path's bytes modulo `shards`. Depends on
// the path alone, so every process that sees the same tree puts a file in the same shard, and
// a renamed file goes where its new path hashes. Precondition: shards > 0.
uint32_t ShardOfPath(std::string_view relative_path, uint32_t shards);

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_OPTIONS_H_
