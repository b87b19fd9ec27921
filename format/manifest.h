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
//                       u64 deleted bytes, u32 form, u32 padding, padding zero bytes,
//                       deleted bytes: the ids as LEB128 gaps (form 0) or a bitmap of u64
//                       words at an offset that is a multiple of 8 (form 1))*,
//   u64 XXH3-64 of everything before it.
#ifndef BITSIFT_FORMAT_MANIFEST_H_
#define BITSIFT_FORMAT_MANIFEST_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bitsift::format {

inline constexpr char kManifestMagic[8] = {'B', 'S', 'M', 'A', 'N', 'I', 'F', '\x1a'};
inline constexpr uint32_t kManifestVersion = 2;  // 1: deletions as gaps, no form (still read)
inline constexpr uint32_t kDeletionsAsGaps = 0;
inline constexpr uint32_t kDeletionsAsBitmap = 1;
inline constexpr char kManifestName[] = "MANIFEST";
inline constexpr char kLockName[] = "LOCK";
inline constexpr char kGitignoreName[] = ".gitignore";

// The deleted documents of one segment: a bitmap over its local ids, the form in which queries
// and merges test them. A manifest keeps a dense set as that bitmap, which a reader uses in
// place in the manifest's mapping; a sparse one as gaps, decoded into a bitmap whose pages are
// zero until written (calloc), so that a segment with one deletion does not cost a reader its
// whole bitmap. (A list of ids decoded beside a bitmap cost a one-shot query on linux-paras
// after a 10% update, 110k deletions, ~0.4 ms and 150 fresh pages: docs/living-index.md, "An
// index is a directory".)
// A value: copies of a set are independent.
class DeletionSet {
 public:
  DeletionSet() = default;
  DeletionSet(const DeletionSet& other);
  DeletionSet& operator=(const DeletionSet& other);
  // A moved-from set is empty.
  DeletionSet(DeletionSet&& other) noexcept { *this = std::move(other); }
  DeletionSet& operator=(DeletionSet&& other) noexcept;

  // The set whose bitmap is `words`, (doc_count + 63) / 64 of them with `count` bits set, read
  // in place; `owner` keeps them alive (a manifest's mapping). Precondition: `words` is
  // 8-byte aligned, its bits at and past doc_count are zero, and `count` is its popcount.
  static DeletionSet View(const uint64_t* words, uint64_t doc_count, uint64_t count,
                          std::shared_ptr<const void> owner);

  // True if local id `id` is deleted.
  bool contains(uint32_t id) const {
    return id / 64 < word_count_ && ((bits_[id / 64] >> (id % 64)) & 1);
  }
  // Marks local id `id` of a segment of `doc_count` documents deleted; returns false if it
  // already was. Precondition: id < doc_count, the same doc_count at every call. A set that
  // views a manifest's bytes copies them first.
  bool insert(uint32_t id, uint64_t doc_count);
  uint64_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // The bitmap ((doc_count + 63) / 64 words), or nullptr while nothing is deleted.
  const uint64_t* bits() const { return count_ != 0 ? bits_ : nullptr; }
  uint64_t word_count() const { return count_ != 0 ? word_count_ : 0; }
  // Whether the bitmap is read in place from its owner (View), not held by the set.
  bool is_view() const { return view_owner_ != nullptr; }
  // Calls f(id) for every deleted id, ascending.
  template <typename F>
  void ForEach(F f) const {
    for (uint64_t i = 0; i < word_count(); ++i) {
      for (uint64_t w = bits_[i]; w != 0; w &= w - 1) {
        f(static_cast<uint32_t>(i * 64 + static_cast<unsigned>(__builtin_ctzll(w))));
      }
    }
  }

 private:
  struct Free {
    void operator()(uint64_t* p) const;
  };
  // Makes the set hold its own bitmap of `words` words (zero past what it held).
  void Own(uint64_t words);

  std::unique_ptr<uint64_t[], Free> owned_;  // the bitmap, when the set holds it
  std::shared_ptr<const void> view_owner_;   // what keeps a viewed bitmap alive
  const uint64_t* bits_ = nullptr;           // owned_ or the viewed words
  uint64_t word_count_ = 0;
  uint64_t count_ = 0;
};

// One live segment file and the documents deleted from it since it was written.
struct ManifestSegment {
  uint64_t number = 0;     // the file is SegmentFileName(number)
  uint64_t doc_count = 0;  // documents in the file, deleted ones included
  uint64_t file_size = 0;  // the file's size (a cheap identity check on open)
  DeletionSet deleted;     // local document ids, each < doc_count
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

// The settings of Manifest::settings that the engine itself records, typed: read and written
// here only. (The document rules, "documents.*", are documents::DocumentOptions'; the token
// rules, "tokens.*", tokenizer::TokenRules'.)
struct EngineSettings {
  // The indexed directory, absolute, where it was when last indexed; "" for documents given in
  // memory.
  std::string root;
  // The index was ROOT/.bitsift: kept inside its tree, it takes its root from where it is, as
  // git does, so the tree can be moved or copied whole (RootOf).
  bool in_tree = false;
  std::optional<double> fp_rate;
  std::optional<uint32_t> sparse_max_df;
  std::optional<uint64_t> max_file_size;
  // Whether forward records keep positions (format::ForwardPositions): "positions" = "none"
  // when not; absent, they do.
  bool positions = true;

  // The engine's settings of `settings` (absent ones stay empty). Throws Error(kCorrupt) for a
  // value that is not a number of its kind.
  static EngineSettings From(const std::map<std::string, std::string>& settings);
  // Writes those that are set into *settings ("root" always).
  void To(std::map<std::string, std::string>* settings) const;

  // The indexed directory of the index at `index_dir`, absolute (or "" for documents given in
  // memory): for an index in its tree still named .bitsift, the parent of index_dir (resolved
  // with realpath), wherever the tree is now; else `root`.
  std::string RootOf(const std::string& index_dir) const;
};

// "seg-000042.bsg".
std::string SegmentFileName(uint64_t number);

// The manifest's bytes (see the layout above).
std::string EncodeManifest(const Manifest& manifest);

// Parses and verifies bytes read from `path`. Throws Error(kCorrupt) naming the path and the
// problem (bad magic, newer version, checksum, truncation, deletions out of range). With an
// `owner` that keeps `bytes` alive, dense deletion sets view their bitmaps in place (when
// 8-byte aligned in memory); without one they are copied.
Manifest DecodeManifest(std::string_view bytes, const std::string& path,
                        std::shared_ptr<const void> owner = nullptr);

// Reads index_dir/MANIFEST. Throws Error(kNotFound) if index_dir is missing or holds no
// manifest, Error(kCorrupt) if index_dir is a 0.1 index file or the manifest is damaged,
// Error(kInvalidArgument) if it is a file of another kind.
Manifest ReadManifest(const std::string& index_dir);

// Reads index_dir/MANIFEST and calls open(manifest) to open the segments it names, as every
// reader of the committed state does. A writer may commit between the two, replacing MANIFEST
// and removing a segment: when open throws Error(kNotFound), MANIFEST is read again and open
// is called again with the newer one (open starts afresh each time), at most kOpenAttempts
// times in all (each retry needs another commit). After the last, the segment is taken as
// lost: Error(kCorrupt) "WHAT (a segment the index manifest names)". ReadManifest's errors and
// open's others propagate. Returns the manifest open last succeeded with (open may have moved
// parts out of it).
inline constexpr int kOpenAttempts = 8;
Manifest OpenManifestSegments(const std::string& index_dir,
                              const std::function<void(Manifest&)>& open);

// Replaces index_dir/MANIFEST atomically (temporary name unique to this writer, fsync, rename,
// directory fsync). Throws Error(kIo); the old manifest is then untouched.
void WriteManifest(const std::string& index_dir, const Manifest& manifest);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_MANIFEST_H_
