// Scoping a query to folders: which documents of an index lie under given paths, and where they
// are in a segment. A segment's documents are sorted by path bytes, so the documents under a
// folder are one contiguous run of local ids (plus, at most, one document whose path is the
// folder's name itself): a scope becomes a few id ranges found by binary search.
#ifndef BITSIFT_QUERY_SCOPE_H_
#define BITSIFT_QUERY_SCOPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/segment_reader.h"

namespace bitsift::query {

// A half-open range [lo, hi) of a segment's local document ids.
struct IdRange {
  uint32_t lo = 0;
  uint32_t hi = 0;
  bool operator==(const IdRange&) const = default;
};

// Paths relative to an index's root, without "." or ".." components or a trailing "/". A prefix
// selects the document of that path and every document under it ("a/b" selects "a/b" and
// "a/b/c", not "a/bc"); "" selects every document.
using Prefixes = std::vector<std::string>;

// Which documents of one index a search may return: all of them, or those under `prefixes`
// (none if `prefixes` is empty).
struct IndexScope {
  bool all = true;
  Prefixes prefixes;
};

// Returns `path` with empty and "." components dropped and ".." resolved lexically, without a
// leading or trailing "/" (so "" for the root itself), or nullopt if a ".." leaves the top.
std::optional<std::string> NormalizeRelative(std::string_view path);

// Returns the absolute form of `path` (relative ones are taken from the working directory):
// realpath(3) when it exists, so symbolic links resolve as the indexer resolved the root;
// otherwise its deepest existing ancestor resolved and the rest normalized lexically.
std::string CanonicalPath(const std::string& path);

// The part of the tree of an index rooted at `root` (absolute, canonical; empty for an index of
// in-memory documents) that the scope entry `entry` selects, as a prefix: a relative entry is
// relative to the root; an absolute one selects everything ("") if it holds the root, the rest
// of its path if it lies under the root, and nothing (nullopt) otherwise. Throws
// Error(kInvalidArgument) for a relative entry that leaves the root ("../x").
std::optional<std::string> ResolveScopeEntry(const std::string& root, const std::string& entry);

// The prefix of the folder `dir` (absolute, canonical) when it lies strictly inside the tree of
// `root`, else nullopt (the root itself, a folder outside it, or an in-memory index).
std::optional<std::string> FolderInside(const std::string& root, const std::string& dir);

// The documents selected by both sets: for each pair of prefixes where one lies under the
// other, the deeper one. Sorted, without duplicates.
Prefixes IntersectPrefixes(const Prefixes& a, const Prefixes& b);

// The local ids of `reader`'s documents under `prefixes`: sorted, disjoint, non-empty and
// non-adjacent ranges (empty if no document is under them). O(prefixes x log documents) path
// comparisons.
std::vector<IdRange> RangesUnder(const format::SegmentReader& reader, const Prefixes& prefixes);

// Whether local id `id` lies in one of `ranges` (sorted and disjoint, as RangesUnder returns).
inline bool InRanges(const IdRange* ranges, size_t n, uint32_t id) {
  size_t lo = 0, hi = n;  // the first range whose hi is above id
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ranges[mid].hi <= id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < n && ranges[lo].lo <= id;
}

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_SCOPE_H_
