// Where an index is and how to make it again: the index a command finds from a directory, as
// git finds ".git", and the command that rebuilds a damaged one.
#ifndef BITSIFT_ANSWERS_INDEX_LOCATION_H_
#define BITSIFT_ANSWERS_INDEX_LOCATION_H_

#include <string>

namespace bitsift::answers {

// The name of an index kept inside the tree it indexes, at its root.
inline constexpr const char* kDefaultIndexName = ".bitsift";

// The path of the index ".bitsift" in `start_dir` or the nearest of its parents (resolved
// with realpath). Throws Error(kNotFound) if there is none, naming the commands that make or
// name one.
std::string FindIndex(const std::string& start_dir);

// The index directory a path given as an index names: `path` itself, or path/.bitsift when
// `path` is not an index (it holds no MANIFEST) but holds one there: a tree given for its index.
std::string ResolveIndexPath(const std::string& path);

// The command that rebuilds the index directory `index_dir`: its root read from its manifest
// when that is readable; else, for a directory named .bitsift, the default place, its parent;
// else a placeholder DIR. Empty for an index of in-memory documents.
std::string RebuildCommand(const std::string& index_dir);

}  // namespace bitsift::answers

#endif  // BITSIFT_ANSWERS_INDEX_LOCATION_H_
