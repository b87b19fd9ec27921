#include "format/shard_map.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "storage/file_writers.h"
#include "util/error.h"

namespace bitsift::format {
namespace {

constexpr const char* kMagic = "bitsift-shards 1";
// More shards than this is a damaged count, not a cluster.
constexpr uint64_t kMaxShards = 1 << 20;

}  // namespace

std::string ShardDirName(uint32_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "shard-%03u", i);
  return buf;
}

ShardMap MakeShardMap(uint32_t count, const std::string& root) {
  ShardMap m;
  m.count = count;
  m.root = root;
  for (uint32_t i = 0; i < count; ++i) m.dirs.push_back(ShardDirName(i));
  return m;
}

bool IsShardedIndex(const std::string& dir) {
  struct stat st;
  return ::stat((dir + "/" + kShardMapFile).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

ShardMap ReadShardMap(const std::string& dir) {
  const std::string path = dir + "/" + kShardMapFile;
  std::ifstream in(path);
  Ensure(in.good(), ErrorKind::kNotFound, path + ": no shard map");
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kCorrupt, path + ": not a bitsift shard map: " + why);
  };
  std::string line;
  if (!std::getline(in, line) || line != kMagic)
    throw bad("its first line is not '" + std::string(kMagic) + "'");
  ShardMap m;
  bool have_count = false, have_partition = false;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "count") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n == 0 || n > kMaxShards) throw bad("count " + value);
      m.count = static_cast<uint32_t>(n);
      have_count = true;
    } else if (key == "partition") {
      if (value != kShardPartition) throw bad("unknown partition '" + value + "'");
      have_partition = true;
    } else if (key == "root") {
      m.root = value;
    } else if (key == "shard") {
      if (value.empty() || value.find('/') != std::string::npos || value[0] == '.') {
        throw bad("shard directory '" + value + "'");
      }
      m.dirs.push_back(value);
    } else {
      throw bad("unknown line '" + line + "' (written by a newer bitsift?)");
    }
  }
  if (!have_count || !have_partition || m.root.empty() || m.root[0] != '/') {
    throw bad("count, partition or root missing");
  }
  if (m.dirs.size() != m.count) {
    throw bad(std::to_string(m.dirs.size()) + " shard lines for count " + std::to_string(m.count));
  }
  return m;
}

void WriteShardMap(const std::string& dir, const ShardMap& map) {
  std::ostringstream out;
  out << kMagic << "\ncount " << map.count << "\npartition " << kShardPartition << "\nroot "
      << map.root << "\n";
  for (const std::string& d : map.dirs) out << "shard " << d << "\n";
  const std::string text = out.str();
  storage::AtomicFileWriter w(dir + "/" + kShardMapFile);
  w.Append(text.data(), text.size());
  w.Commit();
}

}  // namespace bitsift::format
