// Scoped queries (QueryOptions::scope and working_dir): on random corpora of several segments,
// with deletions and paths that sort between a folder's name and its contents ("a-b", "a.b"
// between "a" and "a/"), a scoped answer equals the unscoped answer filtered by prefix, the
// limit included.
#include "query/scope.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "bitsift/bitsift.h"
#include "test_util.h"

using bitsift::Document;
using bitsift::Index;
using bitsift::IndexOptions;
using bitsift::QueryOptions;
using bitsift::QueryResult;
using bitsift::Status;
using bitsift::testing::TempDir;
using bitsift::testing::WriteFile;

namespace {

using Paths = std::vector<std::string>;

// Whether `path` is `prefix` or lies under it.
bool Under(const std::string& path, const std::string& prefix) {
  return prefix.empty() || path == prefix ||
         (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
          path[prefix.size()] == '/');
}

Paths Filter(const Paths& paths, const Paths& prefixes, uint64_t limit) {
  Paths out;
  for (const std::string& p : paths) {
    bool in = std::any_of(prefixes.begin(), prefixes.end(),
                          [&](const std::string& x) { return Under(p, x); });
    if (in && (limit == 0 || out.size() < limit)) out.push_back(p);
  }
  return out;
}

Paths Answer(const Index& index, const std::vector<std::string>& terms, const QueryOptions& o,
             QueryResult* r = nullptr) {
  QueryResult local;
  if (r == nullptr) r = &local;
  Status s = index.Query(terms, o, r);
  INFO(s.message());
  REQUIRE(s.ok());
  Paths out;
  for (uint32_t id : r->documents) out.push_back(index.document(id).path);
  return out;
}

// Names whose components sort around '/' ('0' follows it): "a", "a-b", "a.b", "a b", "a0", "ab"
// are all distinct neighbours of "a/...".
std::string RandomName(std::mt19937& rng) {
  static const char* kParts[] = {"a", "a-b", "a.b", "a b", "a0", "ab", "b", "\xC3\xA9"};
  std::uniform_int_distribution<int> depth(1, 3), part(0, 7);
  std::string name;
  for (int d = depth(rng); d > 0; --d)
    name += std::string(name.empty() ? "" : "/") + kParts[part(rng)];
  return name;
}

std::string RandomText(std::mt19937& rng) {
  std::uniform_int_distribution<int> words(1, 12);
  std::geometric_distribution<int> word(0.25);
  std::string text;
  for (int i = words(rng); i > 0; --i) {
    text += 'w';
    text += std::to_string(word(rng) % 20);
    text += ' ';
  }
  return text;
}

// Scopes: folders and files of the corpus, prefixes no path has, and the root.
Paths RandomScope(std::mt19937& rng, const Paths& names) {
  std::uniform_int_distribution<int> count(1, 3), kind(0, 9);
  Paths out;
  for (int i = count(rng); i > 0; --i) {
    const std::string& name =
        names[std::uniform_int_distribution<size_t>(0, names.size() - 1)(rng)];
    int k = kind(rng);
    if (k == 0) {
      out.push_back("");
    } else if (k == 1) {
      out.push_back("nowhere/x");
    } else if (k <= 4) {
      out.push_back(name);
    } else {  // a folder above it, sometimes written with "./" or a trailing slash
      std::string dir = name.substr(0, name.find('/'));
      out.push_back(k == 5 ? "./" + dir : k == 6 ? dir + "/" : dir);
    }
  }
  return out;
}

// The prefixes `scope` selects, normalized as the library reads them.
Paths Normalized(const Paths& scope) {
  Paths out;
  for (const std::string& s : scope) out.push_back(*bitsift::query::NormalizeRelative(s));
  return out;
}

}  // namespace

TEST_CASE("scoped answers equal unscoped answers filtered by prefix, over several segments",
          "[scope]") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    TempDir dir;
    const std::string index_path = dir / "idx";
    std::map<std::string, std::string> texts;
    while (texts.size() < 1400) texts[RandomName(rng) + "/" + std::to_string(texts.size())] = "";
    // Names that are also folders of other names.
    for (const char* n : {"a", "a-b", "ab", "b/z"}) texts[n] = "";
    std::vector<Document> docs;
    for (auto& [name, text] : texts) {
      text = RandomText(rng);
      docs.push_back({name, text, 0});
    }
    IndexOptions options;
    options.memory_budget = 4 << 10;  // a segment per batch of documents
    options.merge = false;
    REQUIRE(bitsift::BuildIndexFromDocuments(docs, index_path, options).ok());
    // Later runs replace and delete some documents: segments with overlapping path ranges.
    for (int round = 0; round < 2; ++round) {
      std::vector<Document> upserts;
      std::vector<std::string> deletes;
      for (auto it = texts.begin(); it != texts.end();) {
        int r = std::uniform_int_distribution<int>(0, 19)(rng);
        if (r == 0) {
          deletes.push_back(it->first);
          it = texts.erase(it);
          continue;
        }
        if (r == 1) {
          it->second = RandomText(rng);
          upserts.push_back({it->first, it->second, 0});
        }
        ++it;
      }
      REQUIRE(bitsift::UpdateDocuments(upserts, deletes, index_path, options).ok());
    }
    std::unique_ptr<Index> index;
    REQUIRE(Index::Open(index_path, &index).ok());
    Paths names;
    for (const auto& [name, text] : texts) names.push_back(name);
    REQUIRE(index->Stats().segments.size() >= 4);
    for (int q = 0; q < 150; ++q) {
      std::vector<std::string> terms = {"w" + std::to_string(q % 6)};
      if (q % 3 == 0) terms.push_back("w" + std::to_string(q % 5 + 1));
      const Paths all = Answer(*index, terms, {});
      QueryOptions o;
      o.scope = RandomScope(rng, names);
      o.limit = std::vector<uint64_t>{0, 0, 1, 7}[q % 4];
      INFO("query " << terms[0] << " scope " << o.scope[0] << " limit " << o.limit);
      QueryResult r;
      CHECK(Answer(*index, terms, o, &r) == Filter(all, Normalized(o.scope), o.limit));
      const Paths prefixes = Normalized(o.scope);
      CHECK(r.scoped == (std::find(prefixes.begin(), prefixes.end(), "") == prefixes.end()));
    }
  }
}

TEST_CASE("a query from a folder of the tree answers for that folder, absolute scopes", "[scope]") {
  TempDir dir;
  std::mt19937 rng(7);
  std::map<std::string, std::string> texts;
  while (texts.size() < 1200) texts[RandomName(rng) + "/f" + std::to_string(texts.size())] = "";
  for (auto& [name, text] : texts) {
    text = RandomText(rng);
    WriteFile(dir / ("tree/" + name), text);
  }
  WriteFile(dir / "other/a/x.txt", "w0 w1");
  IndexOptions options;
  options.memory_budget = 4 << 10;
  options.merge = false;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "tree/.bitsift", options).ok());
  REQUIRE(bitsift::BuildIndex(dir / "other", dir / "other/.bitsift", options).ok());
  std::unique_ptr<Index> index, both;
  REQUIRE(Index::Open(dir / "tree/.bitsift", &index).ok());
  REQUIRE(
      Index::Open(std::vector<std::string>{dir / "tree/.bitsift", dir / "other/.bitsift"}, &both)
          .ok());
  REQUIRE(index->Stats().segments.size() >= 2);
  const Paths all = Answer(*index, {"w0"}, {});
  REQUIRE(all.size() > 100);

  QueryOptions o;
  o.working_dir = dir / "tree/a";
  QueryResult r;
  CHECK(Answer(*index, {"w0"}, o, &r) == Filter(all, {"a"}, 0));
  CHECK(r.scoped);
  CHECK(r.stats.segments_out_of_scope > 0);  // a run's segments cover consecutive path ranges
  o.working_dir = dir / "tree/a/./../a.b/";  // spelled in a roundabout way
  CHECK(Answer(*index, {"w0"}, o) == Filter(all, {"a.b"}, 0));
  // The root itself, a folder outside the tree: the whole index.
  for (const std::string& wd : {dir / "tree", dir.path(), std::string("/")}) {
    o.working_dir = wd;
    CHECK(Answer(*index, {"w0"}, o, &r) == all);
    CHECK_FALSE(r.scoped);
  }
  // Absolute scope entries: under the root, holding the root, outside the tree.
  o = {};
  o.scope = {dir / "tree/ab", dir / "tree/a/a-b"};
  CHECK(Answer(*index, {"w0"}, o) == Filter(all, {"ab", "a/a-b"}, 0));
  o.scope = {dir.path()};
  CHECK(Answer(*index, {"w0"}, o) == all);
  o.scope = {dir / "other"};  // outside the tree of every index opened: refused
  CHECK(index->Query({"w0"}, o, &r).code() == Status::Code::kInvalidArgument);

  // A folder that no longer exists is still a prefix.
  o.scope = {dir / "tree/gone/../a"};
  CHECK(Answer(*index, {"w0"}, o) == Filter(all, {"a"}, 0));
  // working_dir and scope together: both must hold.
  o.working_dir = dir / "tree/a";
  o.scope = {"a/a-b", "b"};
  CHECK(Answer(*index, {"w0"}, o) == Filter(all, {"a/a-b"}, 0));
  // A relative scope that leaves the root is refused.
  o = {};
  o.scope = {"../x"};
  CHECK(index->Query({"w0"}, o, &r).code() == Status::Code::kInvalidArgument);

  // Several indexes: working_dir narrows the index whose tree holds it, not the others.
  const Paths tree_both = Answer(*index, {"w0", "w1"}, {});
  REQUIRE(Answer(*both, {"w0", "w1"}, {}).size() == tree_both.size() + 1);
  o = {};
  o.working_dir = dir / "other/a";
  Paths expected = tree_both;
  expected.push_back("a/x.txt");
  CHECK(Answer(*both, {"w0", "w1"}, o) == expected);
  o.working_dir = dir / "tree/b";
  expected = Filter(tree_both, {"b"}, 0);
  expected.push_back("a/x.txt");
  CHECK(Answer(*both, {"w0", "w1"}, o) == expected);
  // An absolute scope selects in each index the part of its tree under it.
  o = {};
  o.scope = {dir / "other/a"};
  CHECK(Answer(*both, {"w0", "w1"}, o) == Paths{"a/x.txt"});
  o.scope = {dir / "tree/a", dir / "other"};
  expected = Filter(tree_both, {"a"}, 0);
  expected.push_back("a/x.txt");
  CHECK(Answer(*both, {"w0", "w1"}, o) == expected);
}

TEST_CASE("an Index resolves a working_dir once, a newly opened one sees a changed link",
          "[scope]") {
  TempDir dir;
  for (const char* name : {"a/1.txt", "a/2.txt", "b/1.txt"})
    WriteFile(dir / (std::string("tree/") + name), "w");
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "tree/.bitsift", IndexOptions{}).ok());
  REQUIRE(::symlink((dir / "tree/a").c_str(), (dir / "here").c_str()) == 0);
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "tree/.bitsift", &index).ok());
  QueryOptions o;
  o.working_dir = dir / "here";
  for (int i = 0; i < 3; ++i) CHECK(Answer(*index, {"w"}, o) == Paths{"a/1.txt", "a/2.txt"});
  // The link now names b: the open Index keeps what it resolved, a new one resolves again.
  REQUIRE(std::remove((dir / "here").c_str()) == 0);
  REQUIRE(::symlink((dir / "tree/b").c_str(), (dir / "here").c_str()) == 0);
  CHECK(Answer(*index, {"w"}, o) == Paths{"a/1.txt", "a/2.txt"});
  std::unique_ptr<Index> fresh;
  REQUIRE(Index::Open(dir / "tree/.bitsift", &fresh).ok());
  CHECK(Answer(*fresh, {"w"}, o) == Paths{"b/1.txt"});
  // Other values in between are resolved anew, and so is this one after them.
  o.working_dir = dir / "tree";
  CHECK(Answer(*index, {"w"}, o).size() == 3);
  o.working_dir = dir / "here";
  CHECK(Answer(*index, {"w"}, o) == Paths{"b/1.txt"});
}

TEST_CASE("scope paths are normalized lexically", "[scope]") {
  using bitsift::query::NormalizeRelative;
  CHECK(NormalizeRelative("") == "");
  CHECK(NormalizeRelative(".") == "");
  CHECK(NormalizeRelative("./a//b/") == "a/b");
  CHECK(NormalizeRelative("a/../b") == "b");
  CHECK(NormalizeRelative("a/..") == "");
  CHECK_FALSE(NormalizeRelative("..").has_value());
  CHECK_FALSE(NormalizeRelative("a/../../b").has_value());
  using bitsift::query::IntersectPrefixes;
  CHECK(IntersectPrefixes({"a"}, {"a/b", "c"}) == Paths{"a/b"});
  CHECK(IntersectPrefixes({"a/b"}, {"a"}) == Paths{"a/b"});
  CHECK(IntersectPrefixes({"a"}, {"ab"}).empty());
  CHECK(IntersectPrefixes({""}, {"x", "y"}) == Paths{"x", "y"});
}

TEST_CASE("check_files: vanished files are left out and the limit still filled", "[scope]") {
  TempDir dir;
  for (int i = 0; i < 10; ++i) WriteFile(dir / ("tree/f" + std::to_string(i)), "common");
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "tree/.bitsift", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "tree/.bitsift", &index).ok());
  std::filesystem::remove(dir / "tree/f0");
  std::filesystem::remove(dir / "tree/f2");
  WriteFile(dir / "tree/f1", "common, and more");  // changed: other size and inode? mtime
  std::filesystem::remove(dir / "tree/f3");
  std::filesystem::create_directory(dir / "tree/f3");  // no longer a regular file
  QueryOptions o;
  o.check_files = true;
  o.limit = 3;
  QueryResult r;
  CHECK(Answer(*index, {"common"}, o, &r) == Paths{"f1", "f4", "f5"});
  REQUIRE(r.changed.size() == 1);
  CHECK(index->document(r.changed[0]).path == "f1");
  Paths vanished;
  for (uint32_t id : r.vanished) vanished.push_back(index->document(id).path);
  CHECK(vanished == Paths{"f0", "f2", "f3"});
  CHECK(index->file_state(r.documents[1]) == bitsift::FileState::kCurrent);
  o.limit = 0;
  CHECK(Answer(*index, {"common"}, o, &r).size() == 7);
  o.check_files = false;  // without it the index answers as it is
  CHECK(Answer(*index, {"common"}, o, &r).size() == 10);
  CHECK(r.vanished.empty());
  // In-memory documents have no file.
  REQUIRE(bitsift::BuildIndexFromDocuments({{"m", "common", 0}}, dir / "mem", {}).ok());
  REQUIRE(Index::Open(dir / "mem", &index).ok());
  CHECK(index->file_state(0) == bitsift::FileState::kUnknown);
}

TEST_CASE("check_files with known_files: each file looked at once per run", "[scope]") {
  TempDir dir;
  for (int i = 0; i < 4; ++i) WriteFile(dir / ("tree/f" + std::to_string(i)), "common");
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "tree/.bitsift", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "tree/.bitsift", &index).ok());
  std::filesystem::remove(dir / "tree/f1");
  std::vector<std::optional<bitsift::FileState>> known;
  QueryOptions o;
  o.check_files = true;
  o.known_files = &known;
  QueryResult r;
  CHECK(Answer(*index, {"common"}, o, &r) == Paths{"f0", "f2", "f3"});
  REQUIRE(known.size() == index->document_count());
  CHECK(std::count_if(known.begin(), known.end(), [](const auto& k) { return k.has_value(); }) ==
        4);
  CHECK(r.vanished.size() == 1);
  CHECK(r.stats.files_us >= 0);
  // The run remembers what it saw: a file removed since is still answered as it was first seen,
  // and one seen vanished stays out (the same answers for the whole run).
  std::filesystem::remove(dir / "tree/f2");
  CHECK(Answer(*index, {"common"}, o, &r) == Paths{"f0", "f2", "f3"});
  CHECK(r.vanished.size() == 1);
  // A new run looks again.
  known.clear();
  CHECK(Answer(*index, {"common"}, o, &r) == Paths{"f0", "f3"});
  CHECK(r.vanished.size() == 2);
}

TEST_CASE("ShellPath: relative from the working directory when shorter", "[scope]") {
  bitsift::DocumentInfo d;
  d.root = "/home/u/tree";
  d.path = "a/b.txt";
  using bitsift::ShellPath;
  CHECK(ShellPath(d, "/home/u/tree") == "a/b.txt");
  CHECK(ShellPath(d, "/home/u/tree/a") == "b.txt");
  CHECK(ShellPath(d, "/home/u/tree/c/d") == "../../a/b.txt");
  CHECK(ShellPath(d, "/home/u/sibling") == "../tree/a/b.txt");
  CHECK(ShellPath(d, "/home/u") == "tree/a/b.txt");
  CHECK(ShellPath(d, "/home/u/tre") == "../tree/a/b.txt");  // a shared name prefix is no component
  CHECK(ShellPath(d, "/") == "home/u/tree/a/b.txt");
  CHECK(ShellPath(d, "/x/y/z/w/v") == "/home/u/tree/a/b.txt");  // relative would be longer
  CHECK(ShellPath(d, "") == "/home/u/tree/a/b.txt");
  d.path = "-n.txt";
  CHECK(ShellPath(d, "/home/u/tree") == "./-n.txt");
  d.root = "/";
  d.path = "etc/x";
  CHECK(ShellPath(d, "/etc") == "x");
  CHECK(ShellPath(d, "/usr/share/doc") == "/etc/x");
  d.root = "";
  CHECK(ShellPath(d, "/etc") == "etc/x");
  // ShellPathTo into one reused string gives the same paths (what the CLI prints with).
  std::string out = "left over";
  for (const char* root : {"/home/u/tree", "/", ""}) {
    for (const char* path : {"a/b.txt", "-n.txt", "x"}) {
      for (const char* from : {"/home/u/tree", "/home/u/tree/a", "/x/y/z/w/v", "/", ""}) {
        d.root = root;
        d.path = path;
        bitsift::ShellPathTo(root, path, from, &out);
        CHECK(out == ShellPath(d, from));
      }
    }
  }
}

TEST_CASE("PathLines lists shell paths in order, shared with the helper thread", "[scope][race]") {
  TempDir dir;
  // Enough files for pieces on two threads, in directories of 7 files, names that start with
  // '-' ("./-..." from a folder) and names with a space (printed as they are, not quoted).
  const size_t n = bitsift::kParallelPathLines + bitsift::kPathLinesPiece / 2 + 3;
  for (size_t i = 0; i < n; ++i) {
    std::string name = "tree/d";
    name += std::to_string(i / 7);
    name += i % 50 == 0 ? "/-" : "/f";
    name += std::to_string(i);
    name += i % 90 == 0 ? " x.txt" : ".txt";
    WriteFile(dir / name, "common");
  }
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "tree/.bitsift", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "tree/.bitsift", &index).ok());
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < index->document_count(); ++id) ids.push_back(id);
  REQUIRE(ids.size() == n);
  const std::string from = dir / "tree/d3";
  auto listing = [&](const std::vector<uint32_t>& some, char end) {
    std::string expected;
    for (uint32_t id : some)
      expected += "7\t" + bitsift::ShellPath(index->document(id), from) + end;
    return expected;
  };
  auto joined = [](const std::vector<std::string>& pieces) {
    std::string all;
    for (const std::string& p : pieces) all += p;
    return all;
  };
  SECTION("many: pieces on the caller's and the helper's thread") {
    const std::vector<std::string> pieces =
        bitsift::PathLines(*index, ids.data(), ids.size(), "7\t", from, '\n');
    CHECK(pieces.size() == (n + bitsift::kPathLinesPiece - 1) / bitsift::kPathLinesPiece);
    CHECK(joined(pieces) == listing(ids, '\n'));
    // A slice of ids, as the CLI asks for a long listing.
    CHECK(joined(bitsift::PathLines(*index, ids.data() + 100, 1100, "7\t", from, '\n')) ==
          listing(std::vector<uint32_t>(ids.begin() + 100, ids.begin() + 1200), '\n'));
    std::reverse(ids.begin(), ids.end());  // the order of ids, whatever it is
    CHECK(joined(bitsift::PathLines(*index, ids.data(), ids.size(), "7\t", from, '\0')) ==
          listing(ids, '\0'));
  }
  SECTION("few: one piece on the calling thread") {
    ids.resize(5);
    const std::vector<std::string> pieces =
        bitsift::PathLines(*index, ids.data(), ids.size(), "7\t", from, '\n');
    CHECK(pieces.size() == 1);
    CHECK(joined(pieces) == listing(ids, '\n'));
    CHECK(bitsift::PathLines(*index, nullptr, 0, "", from, '\n').empty());
  }
}
