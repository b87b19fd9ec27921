#include "query/scope.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "util/error.h"

namespace bitsift::query {
namespace {

// Whether `path` is `prefix` or lies under it (both relative prefixes, "" = everything).
bool Under(std::string_view path, std::string_view prefix) {
  return prefix.empty() || path == prefix ||
         (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
          path[prefix.size()] == '/');
}

// The rest of absolute `path` below absolute `dir` ("" if equal), or nullopt if it is not there.
std::optional<std::string> Below(const std::string& path, const std::string& dir) {
  if (path == dir) return std::string();
  if (dir == "/") return path.substr(1);
  if (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
      path[dir.size()] == '/') {
    return path.substr(dir.size() + 1);
  }
  return std::nullopt;
}

std::string RealPath(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  if (r == nullptr) return std::string();
  std::string out = r;
  std::free(r);
  return out;
}

// The first local id whose path is not below `key` in byte order.
uint32_t LowerBound(const format::SegmentReader& reader, std::string_view key) {
  uint64_t lo = 0, hi = reader.doc_count();
  while (lo < hi) {
    uint64_t mid = (lo + hi) / 2;
    if (reader.path(static_cast<uint32_t>(mid)) < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return static_cast<uint32_t>(lo);
}

}  // namespace

std::optional<std::string> NormalizeRelative(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

std::string CanonicalPath(const std::string& path) {
  std::string abs = path;
  if (abs.empty() || abs[0] != '/') {
    char buf[PATH_MAX];
    Ensure(::getcwd(buf, sizeof(buf)) != nullptr, ErrorKind::kIo,
           ErrnoMessage(".", "cannot find the working directory", errno));
    abs = std::string(buf) + "/" + abs;
  }
  // ".." may leave nothing but the root: "/.." is "/".
  std::string lexical = "/";
  lexical += NormalizeRelative(abs).value_or(std::string());
  if (std::string real = RealPath(lexical); !real.empty()) return real;
  // A path that does not exist (a file deleted since indexing): resolve what does exist.
  std::string rest;
  std::string dir = lexical;
  while (dir != "/") {
    size_t slash = dir.rfind('/');
    rest = dir.substr(slash + 1) + (rest.empty() ? "" : "/" + rest);
    dir = slash == 0 ? "/" : dir.substr(0, slash);
    if (std::string real = RealPath(dir); !real.empty()) {
      return (real == "/" ? "" : real) + "/" + rest;
    }
  }
  return lexical;
}

std::optional<std::string> ResolveScopeEntry(const std::string& root, const std::string& entry) {
  if (entry.empty() || entry[0] != '/') {
    std::optional<std::string> rel = NormalizeRelative(entry);
    Ensure(rel.has_value(), ErrorKind::kInvalidArgument,
           "scope path '" + entry + "' leaves the indexed directory");
    return rel;
  }
  if (root.empty()) return std::nullopt;
  if (Below(root, entry)) return std::string();  // the entry holds the whole tree
  return Below(entry, root);
}

std::optional<std::string> FolderInside(const std::string& root, const std::string& dir) {
  if (root.empty()) return std::nullopt;
  std::optional<std::string> rel = Below(dir, root);
  if (!rel || rel->empty()) return std::nullopt;
  return rel;
}

Prefixes IntersectPrefixes(const Prefixes& a, const Prefixes& b) {
  Prefixes out;
  for (const std::string& x : a) {
    for (const std::string& y : b) {
      if (Under(x, y)) {
        out.push_back(x);
      } else if (Under(y, x)) {
        out.push_back(y);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<IdRange> RangesUnder(const format::SegmentReader& reader, const Prefixes& prefixes) {
  const uint32_t n = static_cast<uint32_t>(reader.doc_count());
  std::vector<IdRange> ranges;
  for (const std::string& p : prefixes) {
    if (p.empty()) return n == 0 ? std::vector<IdRange>{} : std::vector<IdRange>{{0, n}};
    // The document named p itself: paths such as "p-x" or "p.txt" sort between it and "p/".
    uint32_t at = LowerBound(reader, p);
    if (at < n && reader.path(at) == p) ranges.push_back({at, at + 1});
    // Everything under "p/": up to the first path at or past "p0" ('0' follows '/').
    uint32_t lo = LowerBound(reader, p + '/');
    uint32_t hi = LowerBound(reader, p + '0');
    if (lo < hi) ranges.push_back({lo, hi});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const IdRange& x, const IdRange& y) { return x.lo < y.lo; });
  std::vector<IdRange> merged;
  for (const IdRange& r : ranges) {
    if (!merged.empty() && r.lo <= merged.back().hi) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

}  // namespace bitsift::query
