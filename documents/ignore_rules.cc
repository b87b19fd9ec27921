#include "documents/ignore_rules.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bitsift::documents {
namespace {

constexpr size_t kMaxRulesFileBytes = 16 << 20;

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t slash = s.find('/', start);
    out.push_back(s.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool HasMeta(std::string_view s) { return s.find_first_of("*?[\\") != std::string_view::npos; }

// One path segment against one glob segment (no '/' in either).
bool SegmentMatch(std::string_view glob, std::string_view name) {
  if (!HasMeta(glob)) return glob == name;
  return ::fnmatch(std::string(glob).c_str(), std::string(name).c_str(), 0) == 0;
}

bool SegmentsMatch(const std::vector<std::string_view>& g, size_t gi,
                   const std::vector<std::string_view>& p, size_t pi) {
  while (gi < g.size()) {
    if (g[gi] == "**") {
      // At the end: everything inside (one or more segments). Elsewhere: zero or more.
      if (gi + 1 == g.size()) return pi < p.size();
      for (size_t k = pi; k <= p.size(); ++k) {
        if (SegmentsMatch(g, gi + 1, p, k)) return true;
      }
      return false;
    }
    if (pi == p.size() || !SegmentMatch(g[gi], p[pi])) return false;
    ++gi;
    ++pi;
  }
  return pi == p.size();
}

// Reads a small file under dir_fd (not following a final symbolic link); "" if absent.
std::string ReadRulesFile(int dir_fd, const char* name) {
  int fd = ::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return "";
  std::string out;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[16 << 10];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > kMaxRulesFileBytes) break;
    }
  }
  ::close(fd);
  return out;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// .git/info/exclude of the work tree at dir_abs (whose .git may be a directory, or a file
// "gitdir: PATH" as in linked worktrees and submodules).
std::string ReadGitExclude(int dir_fd, const std::string& dir_abs) {
  struct stat st;
  if (::fstatat(dir_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) != 0) return "";
  if (S_ISDIR(st.st_mode)) return ReadRulesFile(dir_fd, ".git/info/exclude");
  std::string link = Trim(ReadRulesFile(dir_fd, ".git"));
  if (link.compare(0, 8, "gitdir: ") != 0) return "";
  std::string git_dir = link.substr(8);
  if (git_dir.empty()) return "";
  if (git_dir[0] != '/') git_dir = dir_abs + "/" + git_dir;
  // A linked worktree keeps info/ in the common directory its "commondir" file names.
  int gfd = ::open(git_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (gfd < 0) return "";
  std::string common = Trim(ReadRulesFile(gfd, "commondir"));
  std::string exclude;
  if (common.empty()) {
    exclude = ReadRulesFile(gfd, "info/exclude");
  } else {
    if (common[0] != '/') common = git_dir + "/" + common;
    int cfd = ::open(common.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cfd >= 0) {
      exclude = ReadRulesFile(cfd, "info/exclude");
      ::close(cfd);
    }
  }
  ::close(gfd);
  return exclude;
}

}  // namespace

bool GlobMatch(std::string_view glob, std::string_view path) {
  return SegmentsMatch(Split(glob), 0, Split(path), 0);
}

IgnoreRules IgnoreRules::Parse(std::string_view text) {
  IgnoreRules rules;
  // A UTF-8 byte-order mark (Windows editors write one) is not part of the first pattern: git
  // skips it too.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    rules.Add(text.substr(start, nl - start));
    start = nl + 1;
  }
  return rules;
}

void IgnoreRules::Add(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // Trailing spaces go unless escaped: an odd number of backslashes before the last space.
  while (!line.empty() && line.back() == ' ') {
    size_t backslashes = 0;
    while (backslashes + 1 < line.size() && line[line.size() - 2 - backslashes] == '\\') {
      ++backslashes;
    }
    if (backslashes % 2 == 1) break;
    line.remove_suffix(1);
  }
  if (line.empty() || line[0] == '#') return;
  Pattern p;
  if (line[0] == '!') {
    p.negated = true;
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    p.dir_only = true;
    while (!line.empty() && line.back() == '/') line.remove_suffix(1);
  }
  p.anchored = line.find('/') != std::string_view::npos;
  while (!line.empty() && line[0] == '/') line.remove_prefix(1);
  if (line.empty()) return;
  p.glob = std::string(line);
  patterns_.push_back(std::move(p));
}

IgnoreMatch IgnoreRules::Match(std::string_view path, bool is_dir) const {
  if (patterns_.empty()) return IgnoreMatch::kNone;
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (auto it = patterns_.rbegin(); it != patterns_.rend(); ++it) {
    if (it->dir_only && !is_dir) continue;
    bool hit = it->anchored ? GlobMatch(it->glob, path) : SegmentMatch(it->glob, name);
    if (hit) return it->negated ? IgnoreMatch::kWhitelist : IgnoreMatch::kIgnore;
  }
  return IgnoreMatch::kNone;
}

GlobOverrides::GlobOverrides(const std::vector<std::string>& globs) {
  for (const std::string& g : globs) {
    if (!g.empty() && g[0] == '!') {
      rules_.Add(std::string_view(g).substr(1));
    } else {
      rules_.Add("!" + g);
      any_include_ = true;
    }
  }
}

IgnoreMatch GlobOverrides::Match(std::string_view path, bool is_dir) const {
  IgnoreMatch m = rules_.Match(path, is_dir);
  if (m == IgnoreMatch::kNone && any_include_ && !is_dir) return IgnoreMatch::kIgnore;
  return m;
}

std::string DirectoryRules::Relative(std::string_view path) const {
  if (!prefix_.empty()) return prefix_ + std::string(path);
  return std::string(path.substr(std::min(strip_, path.size())));
}

std::shared_ptr<const DirectoryRules> DirectoryRules::ForAncestors(const std::string& root_abs) {
  std::shared_ptr<const DirectoryRules> rules;
  // Ancestors from "/" down to the root's parent: /, /a, /a/b for root /a/b/c.
  std::vector<std::string> ancestors;
  for (size_t slash = root_abs.find('/'); slash != std::string::npos && slash < root_abs.size();
       slash = root_abs.find('/', slash + 1)) {
    ancestors.push_back(slash == 0 ? "/" : root_abs.substr(0, slash));
  }
  for (const std::string& a : ancestors) {
    int fd = ::open(a.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    auto d = std::make_shared<DirectoryRules>();
    d->parent_ = rules;
    d->prefix_ = root_abs.substr(a == "/" ? 1 : a.size() + 1) + "/";
    d->has_git_ = ::fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0;
    d->ignore_ = IgnoreRules::Parse(ReadRulesFile(fd, ".ignore"));
    d->gitignore_ = IgnoreRules::Parse(ReadRulesFile(fd, ".gitignore"));
    if (d->has_git_) d->exclude_ = IgnoreRules::Parse(ReadGitExclude(fd, a));
    ::close(fd);
    if (d->Adds()) rules = std::move(d);
  }
  return rules;
}

std::shared_ptr<const DirectoryRules> DirectoryRules::ForChild(
    std::shared_ptr<const DirectoryRules> parent, const std::string& root_abs,
    const std::string& dir, int dir_fd, bool has_git, bool has_ignore, bool has_gitignore) {
  if (!has_git && !has_ignore && !has_gitignore) return parent;
  auto d = std::make_shared<DirectoryRules>();
  d->parent_ = std::move(parent);
  d->strip_ = dir.empty() ? 0 : dir.size() + 1;
  d->has_git_ = has_git;
  if (has_ignore) d->ignore_ = IgnoreRules::Parse(ReadRulesFile(dir_fd, ".ignore"));
  if (has_gitignore) d->gitignore_ = IgnoreRules::Parse(ReadRulesFile(dir_fd, ".gitignore"));
  if (has_git) {
    d->exclude_ =
        IgnoreRules::Parse(ReadGitExclude(dir_fd, dir.empty() ? root_abs : root_abs + "/" + dir));
  }
  if (!d->Adds()) return d->parent_;
  return d;
}

IgnoreMatch DirectoryRules::Match(std::string_view path, bool is_dir) const {
  for (const DirectoryRules* d = this; d != nullptr; d = d->parent_.get()) {
    if (d->ignore_.empty()) continue;
    IgnoreMatch m = d->ignore_.Match(d->Relative(path), is_dir);
    if (m != IgnoreMatch::kNone) return m;
  }
  const DirectoryRules* repo = this;
  while (repo != nullptr && !repo->has_git_) repo = repo->parent_.get();
  if (repo == nullptr) return IgnoreMatch::kNone;  // not in a git work tree
  for (const DirectoryRules* d = this;; d = d->parent_.get()) {
    if (!d->gitignore_.empty()) {
      IgnoreMatch m = d->gitignore_.Match(d->Relative(path), is_dir);
      if (m != IgnoreMatch::kNone) return m;
    }
    if (d == repo) break;
  }
  return repo->exclude_.Match(repo->Relative(path), is_dir);
}

}  // namespace bitsift::documents
