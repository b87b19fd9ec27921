// The shard map: the small text file that makes a directory a sharded index (docs/shards.md).
// A sharded index PATH holds PATH/SHARDS and one ordinary index directory per shard
// (PATH/shard-000, ...); shard i indexes the files of the tree whose relative path
// documents::ShardOfPath puts in shard i. The file, one field a line:
//
//   bitsift-shards 1               magic and version (never renumber)
//   count N                        the number of shards (fixed while the index lives)
//   partition xxh3-path            the rule: XXH3-64 of the relative path, modulo N
//   root /abs/DIR                  the indexed directory
//   shard shard-000                N lines: each shard's index directory, relative to PATH
//
// A reader that meets another version or partition refuses the index.
#ifndef BITSIFT_FORMAT_SHARD_MAP_H_
#define BITSIFT_FORMAT_SHARD_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace bitsift::format {

inline constexpr const char* kShardMapFile = "SHARDS";
inline constexpr const char* kShardPartition = "xxh3-path";

struct ShardMap {
  uint32_t count = 0;             // shards
  std::string root;               // the indexed directory (absolute)
  std::vector<std::string> dirs;  // count names, relative to the sharded index's directory
};

// The directory name of shard `i`: "shard-000", "shard-001", ... ("shard-1000" past 999).
std::string ShardDirName(uint32_t i);

// A map of `count` shards of `root` (absolute) with the default directory names.
ShardMap MakeShardMap(uint32_t count, const std::string& root);

// Whether `dir` holds a shard map (a sharded index).
bool IsShardedIndex(const std::string& dir);

// Reads dir/SHARDS. Throws Error(kNotFound) if there is none, Error(kCorrupt) naming the file
// if it is malformed or of another version or partition.
ShardMap ReadShardMap(const std::string& dir);

// Writes dir/SHARDS atomically (storage::AtomicFileWriter): readers see the old map or the new
// one. Throws Error(kIo).
void WriteShardMap(const std::string& dir, const ShardMap& map);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_SHARD_MAP_H_
