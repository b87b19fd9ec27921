// Sharded indexes: a tree's documents split between several indexes by a hash of their path,
// each built and queried by its own process (`mpirun bitsift-mpi`, docs/shards.md), and all of
// them answered as one index by Index::Open.
#ifndef BITSIFT_SHARDS_H_
#define BITSIFT_SHARDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bitsift/status.h"

namespace bitsift {

// A sharded index's map (the file SHARDS in its directory).
struct ShardMapInfo {
  uint32_t count = 0;              // shards
  std::string root;                // the indexed directory (absolute)
  std::vector<std::string> paths;  // each shard's index directory, in shard order
};

// The shard of the file at `relative_path` (relative to the indexed directory): XXH3-64 of
// the path's bytes modulo `shards`. Precondition: shards > 0.
uint32_t ShardOfPath(std::string_view relative_path, uint32_t shards);

// Whether `index_path` is a sharded index (holds a shard map).
bool IsShardedIndex(const std::string& index_path);

// Reads the shard map of `index_path`. Returns ok, kNotFound if it is not a sharded index,
// kCorrupt (naming the file) for a damaged map.
Status ReadShardMap(const std::string& index_path, ShardMapInfo* map);

// Makes the directory `index_path` (and its parents) for a sharded index of `dir` with `count`
// shards, writing no map yet; *shard_paths (if not null) receives the shards' index
// directories, in shard order, to build each with BuildIndex and IndexOptions::shard. Returns
// ok, kInvalidArgument if `dir` is not a directory, count is 0, or `index_path` holds a map of
// another directory or count, kIoError if the directory cannot be made.
Status PrepareShardedIndex(const std::string& dir, const std::string& index_path, uint32_t count,
                           std::vector<std::string>* shard_paths = nullptr);

// Writes the shard map of `count` shards of `dir` into `index_path` (atomically), once every
// shard is built: from then on Index::Open reads the directory as one index. Returns ok or
// kIoError.
Status WriteShardMap(const std::string& dir, const std::string& index_path, uint32_t count);

}  // namespace bitsift

#endif  // BITSIFT_SHARDS_H_
