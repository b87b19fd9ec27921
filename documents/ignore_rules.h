// Ignore rules as ripgrep applies them by default (no Debian package offers a C or C++
// gitignore matcher; libgit2 answers only for paths of a repository it opens, and knows
// nothing of .ignore files or --glob).
//
// Patterns follow git's gitignore documentation: blank lines and "#" comments are skipped;
// trailing spaces are dropped unless escaped ("\ "); "!" negates (re-includes); "\#" and "\!"
// are literal; a trailing "/" matches directories only; a "/" at the start or in the middle
// anchors the pattern to the directory of its file, otherwise it matches a name at any
// depth; "*" and "?" do not match "/", "[...]" is a set; "**/" at the start or "/**/" in the
// middle match zero or more directories, "/**" at the end everything inside; "\x" matches x.
// Within one file the last matching pattern wins. A file cannot be re-included when a parent
// directory is excluded (the walk never enters it).
//
// Precedence, as ripgrep: --glob overrides first, then .ignore files, then .gitignore files,
// then .git/info/exclude; the rules of a deeper directory win over those of its parents.
// .gitignore and .git/info/exclude apply only inside a git work tree (a directory holding
// ".git", a directory or a worktree's file), and the .gitignore files above the nearest such
// directory do not apply. .ignore files apply everywhere. Rules files in the parents of the
// indexed directory apply as well.
#ifndef BITSIFT_DOCUMENTS_IGNORE_RULES_H_
#define BITSIFT_DOCUMENTS_IGNORE_RULES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::documents {

enum class IgnoreMatch { kNone, kIgnore, kWhitelist };

// Whether a gitignore-style glob matches a '/'-separated relative path, segment by segment
// (no anchoring or negation logic; "**" segments as described above). For tests and for
// IgnoreRules.
bool GlobMatch(std::string_view glob, std::string_view path);

// The patterns of one rules file (or of the --glob list).
class IgnoreRules {
 public:
  IgnoreRules() = default;
  // Parses text in the gitignore format (lines separated by "\n" or "\r\n"; a leading UTF-8
  // byte-order mark skipped, as git does).
  static IgnoreRules Parse(std::string_view text);
  // The last pattern matching `path` (relative to the rules file's directory, '/'-separated,
  // no leading or trailing '/'): kIgnore, kWhitelist for a "!" pattern, or kNone.
  IgnoreMatch Match(std::string_view path, bool is_dir) const;
  bool empty() const { return patterns_.empty(); }
  // Adds one pattern line (as Parse does for each line).
  void Add(std::string_view line);

 private:
  struct Pattern {
    std::string glob;  // without "!", leading "/" and trailing "/"
    bool negated = false;
    bool dir_only = false;
    bool anchored = false;  // matched against the whole path, else against the last name
  };
  std::vector<Pattern> patterns_;
};

// The --glob list: "GLOB" includes (when any such glob is given, files matching none are
// ignored; directories are still entered), "!GLOB" excludes; the last matching glob wins.
// Globs are gitignore patterns relative to the indexed directory.
class GlobOverrides {
 public:
  explicit GlobOverrides(const std::vector<std::string>& globs);
  IgnoreMatch Match(std::string_view path, bool is_dir) const;
  bool empty() const { return rules_.empty(); }

 private:
  IgnoreRules rules_;  // globs with their sense inverted: an include is a "!" pattern
  bool any_include_ = false;
};

// The rules files in force in one directory of the walk and, through `parent`, its
// ancestors. Immutable once made; shared by the directories below it.
class DirectoryRules {
 public:
  // Rules of the ancestors of the indexed directory `root_abs` (an absolute, resolved path):
  // the parent for ForChild(..., dir = "", ...) of the root itself. nullptr when they have none.
  static std::shared_ptr<const DirectoryRules> ForAncestors(const std::string& root_abs);
  // Rules of `dir` (relative to the root, "" for the root) below `parent` (may be nullptr).
  // `dir_fd` is an open descriptor of the directory; has_git/has_ignore/has_gitignore say
  // which names its listing holds (so no file is opened in a directory that has none).
  // Returns `parent` itself when the directory adds nothing. Unreadable rules files count as
  // empty.
  static std::shared_ptr<const DirectoryRules> ForChild(
      std::shared_ptr<const DirectoryRules> parent, const std::string& root_abs,
      const std::string& dir, int dir_fd, bool has_git, bool has_ignore, bool has_gitignore);

  // Whether `path` (relative to the root; a file or directory directly inside this
  // directory) is ignored, whitelisted or neither by the rules files.
  IgnoreMatch Match(std::string_view path, bool is_dir) const;

 private:
  bool Adds() const { return has_git_ || !ignore_.empty() || !gitignore_.empty(); }
  std::string Relative(std::string_view path) const;

  std::shared_ptr<const DirectoryRules> parent_;
  std::string prefix_;  // prepended to a root-relative path to make it relative to this dir
  size_t strip_ = 0;    // or: leading bytes of a root-relative path to drop
  bool has_git_ = false;
  IgnoreRules ignore_, gitignore_, exclude_;
};

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_IGNORE_RULES_H_
