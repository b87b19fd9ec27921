#include "answers/index_location.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

#include "answers/shell_paths.h"
#include "format/manifest.h"
#include "format/shard_map.h"
#include "util/error.h"
#include "util/files.h"

namespace bitsift::answers {
namespace {

// realpath(3) of `path`, or "" if it cannot be resolved.
std::string RealPath(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  std::string out = real != nullptr ? real : "";
  std::free(real);
  return out;
}

}  // namespace

std::string FindIndex(const std::string& start_dir) {
  const std::string resolved = RealPath(start_dir);
  Ensure(!resolved.empty(), ErrorKind::kNotFound, ErrnoMessage(start_dir, "cannot resolve", errno));
  for (std::string dir = resolved;;) {
    std::string candidate = (dir == "/" ? "" : dir) + "/" + kDefaultIndexName;
    struct stat st;
    // A directory is an index; a file is a 0.1 index (opening it says to rebuild it).
    if (::stat(candidate.c_str(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
      return candidate;
    }
    if (dir == "/") break;
    dir = DirectoryOf(dir);
  }
  throw Error(ErrorKind::kNotFound,
              "no index: no .bitsift in " + resolved +
                  " or any of its parents (run 'bitsift index DIR' or pass --index PATH)");
}

std::string ResolveIndexPath(const std::string& path) {
  const std::string inner = (path == "/" ? "" : path) + "/" + kDefaultIndexName;
  struct stat st;
  if (::stat((path + "/" + format::kManifestName).c_str(), &st) != 0 &&
      !format::IsShardedIndex(path) && ::stat(inner.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return inner;
  }
  return path;
}

std::string RebuildCommand(const std::string& index_dir) {
  std::string root = "DIR";
  if (format::IsShardedIndex(index_dir)) {
    try {
      root = format::ReadShardMap(index_dir).root;
    } catch (const Error&) {
    }
    return IndexCommand(root, index_dir, /*rebuild=*/true);
  }
  try {
    format::Manifest m = format::ReadManifest(index_dir);
    root = format::EngineSettings::From(m.settings).RootOf(index_dir);
    if (root.empty()) return "";
  } catch (const Error&) {
    const std::string dir = RealPath(index_dir);
    const size_t slash = dir.rfind('/');
    if (slash != std::string::npos &&
        dir.compare(slash + 1, std::string::npos, kDefaultIndexName) == 0) {
      root = slash == 0 ? "/" : dir.substr(0, slash);
    }
  }
  return IndexCommand(root, index_dir, /*rebuild=*/true);
}

}  // namespace bitsift::answers
