// The manifest of an index directory: which immutable segment files are live, which of their
// documents are deleted, and the settings the index was built with. One manifest is one state
// of the index; it is replaced atomically, so every reader sees a complete state.
//
//   PATH/.gitignore   "*"          PATH/LOCK       flock(2)ed by the one writer
//   PATH/MANIFEST     this record  PATH/seg-N.bsg  segment files (format/index_format.h)
//
// Byte layout (little-endian; docs/index_format.md):
//   magic "BSMANIF\x1a", u32 version, u32 reserved, u64 generation, u64 next_segment,
//   u32 setting count, (u32 key length, key, u32 value length, value)*,
//   u32 segment count, (u64 number, u64 doc_count, u64 file_size, u64 deleted count,
//                       u64 deleted bytes, deleted ids as LEB128 gaps)*,
//   u64 XXH3-64 of everything before it.
#ifndef BITSIFT_FORMAT_MANIFEST_H_
#define BITSIFT_FORMAT_MANIFEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::format {

inline constexpr char kManifestMagic[8] = {'B', 'S', 'M', 'A', 'N', 'I', 'F', '\x1a'};
inline constexpr uint32_t kManifestVersion = 1;
inline constexpr char kManifestName[] = "MANIFEST";
inline constexpr char kLockName[] = "LOCK";
inline constexpr char kGitignoreName[] = ".gitignore";

// One live segment file and the documents deleted from it since it was written.
struct ManifestSegment {
  uint64_t number = 0;            // the file is SegmentFileName(number)
  uint64_t doc_count = 0;         // documents in the file, deleted ones included
  uint64_t file_size = 0;         // the file's size (a cheap identity check on open)
  std::vector<uint32_t> deleted;  // strictly ascending local document ids
};

struct Manifest {
  uint64_t generation = 0;    // increases with every committed state
  uint64_t next_segment = 1;  // segment numbers are never reused
  // What the index was built with: "root" (absolute indexed directory), "fp_rate",
  // "max_file_size", and the document rules in force. Values are text.
  std::map<std::string, std::string> settings;
  std::vector<ManifestSegment> segments;

  uint64_t live_documents() const;
};

// "seg-000042.bsg".
std::string SegmentFileName(uint64_t number);

// The manifest's bytes (see the layout above).
std::string EncodeManifest(const Manifest& manifest);

// Parses and verifies bytes read from `path`. Throws Error(kCorrupt) naming the path and the
// problem (bad magic, newer version, checksum, truncation, unsorted deletions).
Manifest DecodeManifest(std::string_view bytes, const std::string& path);

// Reads index_dir/MANIFEST. Throws Error(kNotFound) if index_dir is missing or holds no
// manifest, Error(kCorrupt) if index_dir is a 0.1 index file or the manifest is damaged,
// Error(kInvalidArgument) if it is a file of another kind.
Manifest ReadManifest(const std::string& index_dir);

// Replaces index_dir/MANIFEST atomically (temporary name unique to this writer, fsync, rename,
// directory fsync). Throws Error(kIo); the old manifest is then untouched.
void WriteManifest(const std::string& index_dir, const Manifest& manifest);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_MANIFEST_H_
