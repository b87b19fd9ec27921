// Gitignore pattern semantics, case by case from git's gitignore documentation, and the
// --glob overrides. The rules files as the walker applies them: file_walker_test.cc.
#include "documents/ignore_rules.h"

#include <catch2/catch.hpp>
#include <string>

using bitsift::documents::GlobMatch;
using bitsift::documents::GlobOverrides;
using bitsift::documents::IgnoreMatch;
using bitsift::documents::IgnoreRules;

namespace {

constexpr bool kDir = true, kFile = false;

IgnoreMatch M(const char* rules, const char* path, bool is_dir = kFile) {
  return IgnoreRules::Parse(rules).Match(path, is_dir);
}
bool Ignored(const char* rules, const char* path, bool is_dir = kFile) {
  return M(rules, path, is_dir) == IgnoreMatch::kIgnore;
}

}  // namespace

TEST_CASE("gitignore: blank lines, comments, trailing spaces, escapes", "[documents][ignore]") {
  CHECK(IgnoreRules::Parse("\n\n   \n# a comment\n").empty());
  CHECK_FALSE(Ignored("# foo", "# foo"));
  CHECK(Ignored("\\#foo", "#foo"));              // "\#" is a literal '#'
  CHECK(Ignored("\\!important", "!important"));  // "\!" is a literal '!'
  CHECK(Ignored("foo   ", "foo"));               // trailing spaces are dropped...
  CHECK_FALSE(Ignored("foo   ", "foo   "));
  CHECK(Ignored("foo\\ ", "foo "));  // ...unless escaped
  CHECK(Ignored("foo\r\n", "foo"));  // CRLF files
  // A UTF-8 byte-order mark before the first pattern is skipped, as git skips it.
  CHECK(Ignored("\xEF\xBB\xBF*.log\n", "a.log"));
  CHECK(Ignored("\xEF\xBB\xBF*.log\r\n*.tmp\r\n", "b.tmp"));
  CHECK(Ignored("a\\*b", "a*b"));  // an escaped glob character is literal
  CHECK_FALSE(Ignored("a\\*b", "axb"));
}

TEST_CASE("gitignore: a name without slash matches at any level", "[documents][ignore]") {
  CHECK(Ignored("foo", "foo"));
  CHECK(Ignored("foo", "a/b/foo"));
  CHECK(Ignored("foo", "a/foo", kDir));
  CHECK_FALSE(Ignored("foo", "foobar"));
  CHECK_FALSE(Ignored("foo", "a/foo/bar"));  // the walker never enters a/foo; bar is not foo
  CHECK(Ignored("*.html", "index.html"));
  CHECK(Ignored("*.html", "docs/api/index.html"));
  CHECK(Ignored("*.o", ".hidden.o"));  // '*' matches a leading dot
  CHECK(Ignored("?.txt", "a.txt"));
  CHECK_FALSE(Ignored("?.txt", "ab.txt"));
  CHECK(Ignored("[a-c].txt", "b.txt"));
  CHECK_FALSE(Ignored("[a-c].txt", "d.txt"));
  CHECK(Ignored("[!a-c].txt", "d.txt"));
  CHECK_FALSE(Ignored("fo[/]o", "fo/o"));  // a bracket never matches '/'
}

TEST_CASE("gitignore: a trailing slash matches directories only", "[documents][ignore]") {
  // "frotz/" matches frotz and a/frotz that are directories.
  CHECK(Ignored("frotz/", "frotz", kDir));
  CHECK(Ignored("frotz/", "a/frotz", kDir));
  CHECK_FALSE(Ignored("frotz/", "frotz", kFile));
  CHECK_FALSE(Ignored("frotz/", "a/frotz", kFile));
}

TEST_CASE("gitignore: a slash at the start or middle anchors", "[documents][ignore]") {
  // "doc/frotz/" matches doc/frotz but not a/doc/frotz.
  CHECK(Ignored("doc/frotz/", "doc/frotz", kDir));
  CHECK_FALSE(Ignored("doc/frotz/", "a/doc/frotz", kDir));
  CHECK(Ignored("doc/frotz", "doc/frotz"));
  CHECK_FALSE(Ignored("doc/frotz", "a/doc/frotz"));
  // "/*.c" matches cat-file.c but not mozilla-sha1/sha1.c.
  CHECK(Ignored("/*.c", "cat-file.c"));
  CHECK_FALSE(Ignored("/*.c", "mozilla-sha1/sha1.c"));
  CHECK(Ignored("/build", "build", kDir));
  CHECK_FALSE(Ignored("/build", "src/build", kDir));
  // "foo/*" matches foo/test.json and the directory foo/bar, not foo/bar/hello.c by itself.
  CHECK(Ignored("foo/*", "foo/test.json"));
  CHECK(Ignored("foo/*", "foo/bar", kDir));
  CHECK_FALSE(Ignored("foo/*", "foo/bar/hello.c"));
  CHECK_FALSE(Ignored("foo/*", "foo", kDir));
  // '*' does not match '/'.
  CHECK_FALSE(Ignored("Documentation/*.html", "Documentation/git/git.html"));
  CHECK(Ignored("Documentation/*.html", "Documentation/git.html"));
}

TEST_CASE("gitignore: ** matches any number of directories", "[documents][ignore]") {
  // "**/foo" matches file or directory foo anywhere.
  CHECK(Ignored("**/foo", "foo"));
  CHECK(Ignored("**/foo", "x/y/foo", kDir));
  // "**/foo/bar" matches bar directly under any foo.
  CHECK(Ignored("**/foo/bar", "foo/bar"));
  CHECK(Ignored("**/foo/bar", "a/b/foo/bar"));
  CHECK_FALSE(Ignored("**/foo/bar", "a/foo/x/bar"));
  // "abc/**" matches everything inside abc, not abc itself.
  CHECK(Ignored("abc/**", "abc/x"));
  CHECK(Ignored("abc/**", "abc/x/y/z"));
  CHECK_FALSE(Ignored("abc/**", "abc", kDir));
  CHECK_FALSE(Ignored("abc/**", "x/abc/y"));
  // "a/**/b" matches a/b, a/x/b, a/x/y/b.
  for (const char* p : {"a/b", "a/x/b", "a/x/y/b"}) CHECK(Ignored("a/**/b", p));
  CHECK_FALSE(Ignored("a/**/b", "a/x/c"));
  // Other consecutive asterisks are ordinary ones.
  CHECK(Ignored("a**z", "abcz"));
  CHECK_FALSE(Ignored("/a**z", "ab/cz"));
  CHECK(GlobMatch("**", "any/thing"));
}

TEST_CASE("gitignore: negation and the last match wins", "[documents][ignore]") {
  const char* rules = "*.log\n!important.log\n";
  CHECK(M(rules, "debug.log") == IgnoreMatch::kIgnore);
  CHECK(M(rules, "important.log") == IgnoreMatch::kWhitelist);
  CHECK(M(rules, "x/important.log") == IgnoreMatch::kWhitelist);
  CHECK(M(rules, "notes.txt") == IgnoreMatch::kNone);
  // Order matters: a later pattern overrides an earlier one.
  CHECK(M("!important.log\n*.log\n", "important.log") == IgnoreMatch::kIgnore);
  // The documentation's example: exclude everything except directory foo/bar.
  const char* only_foo_bar = "/*\n!/foo\n/foo/*\n!/foo/bar\n";
  CHECK(M(only_foo_bar, "top.txt") == IgnoreMatch::kIgnore);
  CHECK(M(only_foo_bar, "foo", kDir) == IgnoreMatch::kWhitelist);
  CHECK(M(only_foo_bar, "foo/other", kDir) == IgnoreMatch::kIgnore);
  CHECK(M(only_foo_bar, "foo/bar", kDir) == IgnoreMatch::kWhitelist);
  CHECK(M(only_foo_bar, "foo/bar/deep.txt") == IgnoreMatch::kNone);
}

TEST_CASE("glob overrides (--glob): includes, excludes, the last one wins", "[documents][ignore]") {
  GlobOverrides none({});
  CHECK(none.empty());
  GlobOverrides md({"*.md"});
  CHECK(md.Match("README.md", kFile) == IgnoreMatch::kWhitelist);
  CHECK(md.Match("docs/a.md", kFile) == IgnoreMatch::kWhitelist);
  CHECK(md.Match("a.txt", kFile) == IgnoreMatch::kIgnore);  // not selected
  CHECK(md.Match("docs", kDir) == IgnoreMatch::kNone);      // directories are still entered
  GlobOverrides no_logs({"!*.log"});
  CHECK(no_logs.Match("x.log", kFile) == IgnoreMatch::kIgnore);
  CHECK(no_logs.Match("x.txt", kFile) == IgnoreMatch::kNone);  // only excludes: rest stays
  GlobOverrides both({"*.txt", "!secret*.txt"});
  CHECK(both.Match("a.txt", kFile) == IgnoreMatch::kWhitelist);
  CHECK(both.Match("secret1.txt", kFile) == IgnoreMatch::kIgnore);
  GlobOverrides later({"!secret*.txt", "*.txt"});
  CHECK(later.Match("secret1.txt", kFile) == IgnoreMatch::kWhitelist);
  GlobOverrides anchored({"src/**"});
  CHECK(anchored.Match("src/a/b.c", kFile) == IgnoreMatch::kWhitelist);
  CHECK(anchored.Match("lib/src/b.c", kFile) == IgnoreMatch::kIgnore);
  GlobOverrides dir({"!build/"});
  CHECK(dir.Match("build", kDir) == IgnoreMatch::kIgnore);
  CHECK(dir.Match("build", kFile) == IgnoreMatch::kNone);
}
