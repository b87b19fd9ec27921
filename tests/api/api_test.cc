// The public API: only <bitsift/bitsift.h>. Errors come back as Status, never as crashes.
#include <bitsift/bitsift.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "query/query_parser.h"
#include "reliability/reliability_util.h"
#include "test_util.h"

using bitsift::Index;
using bitsift::Status;
using bitsift::testing::ReadFile;
using bitsift::testing::TempDir;
using bitsift::testing::WriteFile;

namespace {

std::vector<std::string> Paths(const Index& index, const bitsift::QueryResult& r) {
  std::vector<std::string> out;
  for (uint32_t id : r.documents) {
    const bitsift::DocumentInfo d = index.document(id);
    const bitsift::DocumentPath where = index.document_path(id);  // the same, without copies
    CHECK(where.path == d.path);
    CHECK(where.root == d.root);
    out.push_back(d.path);
  }
  return out;
}

std::vector<std::string> Query(const Index& index, std::vector<std::string> args) {
  bitsift::QueryResult r;
  Status s = index.Query(args, {}, &r);
  REQUIRE(s.ok());
  return Paths(index, r);
}

void MakeTree(const TempDir& dir) {
  WriteFile(dir / "docs/a.txt", "Bloom filters answer maybe.");
  WriteFile(dir / "docs/b.txt", "Exact answers need verification.");
  WriteFile(dir / "docs/sub/c.md", "# Bloom\nA filter with an exact answer.");
  WriteFile(dir / "docs/empty.txt", "");
  WriteFile(dir / "docs/.hidden", "bloom secret");
  WriteFile(dir / "docs/bin.dat", std::string("bloom\0binary", 12));
  std::filesystem::create_directory_symlink(dir / "docs/sub", dir / "docs/link");
}

}  // namespace

TEST_CASE("the library's version is the headers'", "[api]") {
  CHECK(std::string(bitsift::Version()) == BITSIFT_VERSION_STRING);
  CHECK(std::string(BITSIFT_VERSION_STRING) == std::to_string(BITSIFT_VERSION_MAJOR) + "." +
                                                   std::to_string(BITSIFT_VERSION_MINOR) + "." +
                                                   std::to_string(BITSIFT_VERSION_PATCH));
}

TEST_CASE("build from a directory, open, query", "[api]") {
  TempDir dir;
  MakeTree(dir);
  bitsift::IndexSummary summary;
  std::vector<std::string> skipped;
  bitsift::IndexOptions options;
  options.on_skip = [&](const std::string& path, const std::string& reason, const std::string&) {
    skipped.push_back(path + ":" + reason);
  };
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "docs/.bitsift", options, &summary).ok());
  CHECK(summary.documents == 4);  // a, b, c, empty
  std::sort(skipped.begin(), skipped.end());
  CHECK(skipped == std::vector<std::string>{".hidden:hidden", "bin.dat:binary", "link:symlink"});
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "docs/.bitsift", &index).ok());
  CHECK(index->document_count() == 4);
  CHECK(Query(*index, {"bloom"}) == std::vector<std::string>{"a.txt", "sub/c.md"});
  CHECK(Query(*index, {"EXACT", "answer"}) == std::vector<std::string>{"sub/c.md"});
  CHECK(Query(*index, {"exact answers"}) == std::vector<std::string>{"b.txt"});
  CHECK(Query(*index, {"secret"}).empty());
  CHECK(Query(*index, {"binary"}).empty());
  bitsift::QueryResult r;
  Status s = index->Query({"!!", "--"}, {}, &r);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  // Limit keeps the first matches in path order.
  bitsift::QueryOptions first;
  first.limit = 1;
  REQUIRE(index->Query({"bloom"}, first, &r).ok());
  CHECK(Paths(*index, r) == std::vector<std::string>{"a.txt"});
  // Counting gives the same documents (their records are not read for document()).
  bitsift::QueryOptions count;
  count.count_only = true;
  REQUIRE(index->Query({"bloom"}, count, &r).ok());
  CHECK(Paths(*index, r) == std::vector<std::string>{"a.txt", "sub/c.md"});
  // Find walks up from a subdirectory.
  std::string found;
  REQUIRE(Index::Find(dir / "docs/sub", &found).ok());
  CHECK(std::filesystem::equivalent(found, dir / "docs/.bitsift"));
  CHECK(Index::Find(dir.path(), &found).code() == Status::Code::kNotFound);
  bitsift::IndexStats st = index->Stats();
  CHECK(st.documents == 4);
  CHECK(!st.bands.empty());
  for (const auto& b : st.bands) CHECK(b.expected_fp_rate <= 0.01 + 1e-9);
}

TEST_CASE("an index records its settings and an update can apply them again", "[api]") {
  TempDir dir;
  MakeTree(dir);
  bitsift::IndexOptions built;
  built.hidden = true;
  built.fp_rate = 0.001;
  built.sparse_max_df = 3;
  built.globs = {"*.txt", "*.md", ".hidden"};
  built.max_file_size = 1 << 20;
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "index", built).ok());
  bitsift::IndexOptions read;
  REQUIRE(bitsift::ReadIndexOptions(dir / "index", &read).ok());
  CHECK(read.hidden);
  CHECK(read.fp_rate == 0.001);
  CHECK(read.sparse_max_df == 3);
  CHECK(read.globs == built.globs);
  CHECK(read.max_file_size == uint64_t{1} << 20);
  CHECK(!read.no_ignore);
  CHECK(read.positions);
  // The stored settings update the index; the defaults rebuild it.
  WriteFile(dir / "docs/new.txt", "bloom again");
  bitsift::IndexSummary summary;
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "index", read, &summary).ok());
  CHECK(!summary.rebuilt);
  CHECK(summary.added == 1);
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "index", {}, &summary).ok());
  CHECK(summary.rebuilt);
  REQUIRE(bitsift::ReadIndexOptions(dir / "index", &read).ok());
  CHECK(!read.hidden);
  CHECK(read.globs.empty());
  CHECK(read.sparse_max_df == bitsift::IndexOptions{}.sparse_max_df);
  CHECK(bitsift::ReadIndexOptions(dir / "none", &read).code() == Status::Code::kNotFound);
}

TEST_CASE("an index without positions answers phrases alike from the texts, and is smaller",
          "[api][positions]") {
  TempDir dir;
  // 300 files from a small vocabulary: its words are frequent enough to keep positions.
  std::mt19937_64 rng(3);
  const char* words[] = {"alpha", "beta", "gamma", "delta", "free", "software", "the", "of"};
  for (int i = 0; i < 300; ++i) {
    std::string text;
    for (int w = 0; w < 60; ++w) text.append(words[rng() % 8]).append(w % 9 == 8 ? "\n" : " ");
    WriteFile(dir / ("docs/f" + std::to_string(i) + ".txt"), text);
  }
  bitsift::IndexOptions without;
  without.positions = false;
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "with", {}).ok());
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "without", without).ok());
  bitsift::IndexOptions read;
  REQUIRE(bitsift::ReadIndexOptions(dir / "without", &read).ok());
  CHECK(!read.positions);
  std::unique_ptr<Index> with_index, without_index;
  REQUIRE(Index::Open(dir / "with", &with_index).ok());
  REQUIRE(Index::Open(dir / "without", &without_index).ok());
  CHECK(with_index->Stats().file_bytes > without_index->Stats().file_bytes);
  REQUIRE(with_index->Check().ok());
  REQUIRE(without_index->Check().ok());
  uint64_t matched = 0;
  for (int q = 0; q < 60; ++q) {
    const std::string phrase = std::string("\"") + words[rng() % 8] + " " + words[rng() % 8] +
                               (q % 3 == 0 ? std::string(" ") + words[rng() % 8] : "") + "\"";
    bitsift::ParsedQuery parsed;
    REQUIRE(bitsift::ParsedQuery::Parse(phrase, bitsift::QuerySyntax::kLanguage, &parsed).ok());
    bitsift::QueryResult a, b;
    REQUIRE(with_index->Query(parsed, {}, &a).ok());
    REQUIRE(without_index->Query(parsed, {}, &b).ok());
    INFO(phrase);
    CHECK(a.documents == b.documents);
    CHECK(a.stats.phrase_candidates < b.stats.phrase_candidates / 10 + 1);  // texts read
    matched += a.documents.size();
  }
  CHECK(matched > 1000);
  // An update keeps the setting; the defaults rebuild the index with positions.
  bitsift::IndexSummary summary;
  WriteFile(dir / "docs/new.txt", "free software");
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "without", read, &summary).ok());
  CHECK(!summary.rebuilt);
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "without", {}, &summary).ok());
  CHECK(summary.rebuilt);
}

TEST_CASE("a sparse term's many candidates are checked against the other terms' rows",
          "[api][oracle]") {
  // 20,000 documents: "rare" in 100 (a sparse row), "mid" in 400 (Bloom rows: above
  // sparse_max_df, below the 1/32 of exact rows), "wide" in 2,000 (an exact row), overlapping.
  auto Name = [](int i) {
    std::string name = "d";
    return name += std::to_string(100000 + i);
  };
  std::vector<bitsift::Document> docs;
  std::mt19937_64 rng(5);
  std::set<int> rare, mid, wide;
  while (rare.size() < 100) rare.insert(static_cast<int>(rng() % 20000));
  while (mid.size() < 400) mid.insert(static_cast<int>(rng() % 20000));
  for (int d : rare) {  // most of rare's documents hold mid too
    if (rng() % 3 != 0) mid.insert(d);
  }
  while (wide.size() < 2000) wide.insert(static_cast<int>(rng() % 20000));
  for (int i = 0; i < 20000; ++i) {
    std::string text = "w";
    text += std::to_string(i % 997);
    text += " filler";
    if (rare.count(i)) text += " rare";
    if (mid.count(i)) text += " mid";
    if (wide.count(i)) text += " wide";
    docs.push_back({Name(i), text, 0});
  }
  TempDir dir;
  bitsift::IndexOptions options;
  options.sparse_max_df = 128;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "index", options).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "index", &index).ok());
  auto expect = [&](std::vector<const std::set<int>*> sets) {
    std::vector<std::string> out;
    for (int i = 0; i < 20000; ++i) {
      bool all = true;
      for (const std::set<int>* s : sets) all = all && s->count(i) > 0;
      if (all) out.push_back(Name(i));
    }
    return out;
  };
  bitsift::QueryResult r;
  REQUIRE(index->Query({"rare", "mid"}, {}, &r).ok());
  CHECK(Paths(*index, r) == expect({&rare, &mid}));
  CHECK(r.stats.rows_read > 1);             // mid's rows were read, not only rare's list
  CHECK(r.stats.candidates < rare.size());  // and they dropped candidates before verification
  REQUIRE(index->Query({"rare", "mid", "wide"}, {}, &r).ok());
  CHECK(Paths(*index, r) == expect({&rare, &mid, &wide}));
  REQUIRE(index->Query({"rare", "wide"}, {}, &r).ok());  // an exact row ANDed
  CHECK(Paths(*index, r) == expect({&rare, &wide}));
  CHECK(r.stats.rows_read > 1);
  CHECK(r.stats.candidates < rare.size());
  REQUIRE(index->Query({"rare", "filler"}, {}, &r).ok());  // every document: bits per candidate
  CHECK(Paths(*index, r) == expect({&rare}));
  CHECK(r.stats.rows_read == 1);
}

TEST_CASE("bad arguments and missing things are clear errors", "[api]") {
  TempDir dir;
  bitsift::IndexOptions options;
  CHECK(bitsift::BuildIndex(dir / "nope", dir / "i", options).code() == Status::Code::kNotFound);
  WriteFile(dir / "file", "x");
  CHECK(bitsift::BuildIndex(dir / "file", dir / "i", options).code() ==
        Status::Code::kInvalidArgument);
  options.fp_rate = 1.5;
  CHECK(bitsift::BuildIndex(dir.path(), dir / "i", options).code() ==
        Status::Code::kInvalidArgument);
  std::unique_ptr<Index> index;
  Status s = Index::Open(dir / "missing", &index);
  CHECK(s.code() == Status::Code::kNotFound);
  CHECK(s.message().find("missing") != std::string::npos);
  s = Index::Open(dir / "file", &index);  // a file that is no index (nor a 0.1 one)
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message().find("not a bitsift index") != std::string::npos);
  // Writing into a directory that does not exist fails without a crash.
  options.fp_rate = 0.01;
  CHECK(bitsift::BuildIndex(dir.path(), dir / "no/such/dir/index", options).code() ==
        Status::Code::kIoError);
}

TEST_CASE("every truncation and many flipped bytes are detected", "[api][corrupt]") {
  TempDir dir;
  std::vector<bitsift::Document> docs;
  for (int i = 0; i < 300; ++i) {
    std::string name = "d", text = "word";
    name += std::to_string(i);
    text += std::to_string(i % 17);
    text += " common 東京タワー";
    docs.push_back({name, text, 0});
  }
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "good", {}).ok());
  const std::string good = bitsift::testing::ReadFile(bitsift::testing::OnlySegment(dir / "good"));
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "good", &index).ok());
  // Truncations at every 61st byte, plus the last byte.
  for (size_t len = 0; len < good.size();
       len += (len + 61 < good.size() ? 61 : good.size() - len - 1 + (len + 1 == good.size()))) {
    bitsift::testing::WriteIndexWithSegment(dir / "good", dir / "bad", good.substr(0, len));
    Status s = Index::Open(dir / "bad", &index);
    INFO("length " << len);
    REQUIRE(s.code() == Status::Code::kCorrupt);
    CHECK(s.message().find(dir / "bad") != std::string::npos);
    if (len == good.size() - 1) break;
  }
  // One flipped bit at positions across the whole file: refused by Open (every section of this
  // small index is verified at open), or, for the padding between sections that Open does not
  // read, by Check.
  for (size_t pos = 0; pos < good.size(); pos += 97) {
    std::string bad = good;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x10);
    bitsift::testing::WriteIndexWithSegment(dir / "good", dir / "bad", bad);
    Status s = Index::Open(dir / "bad", &index);
    if (s.ok()) s = index->Check();
    INFO("flipped byte " << pos);
    REQUIRE(s.code() == Status::Code::kCorrupt);
  }
  // Another format (a file that is no index: nothing to repair), and a newer version.
  WriteFile(dir / "other", "SQLite format 3" + std::string(200, '\0'));
  CHECK(Index::Open(dir / "other", &index).code() == Status::Code::kInvalidArgument);
  bitsift::testing::WriteIndexWithSegment(dir / "good", dir / "bad",
                                          "SQLite format 3" + std::string(200, '\0'));
  CHECK(Index::Open(dir / "bad", &index).code() == Status::Code::kCorrupt);
}

TEST_CASE("re-indexing replaces the index atomically while it is in use", "[api]") {
  TempDir dir;
  WriteFile(dir / "docs/one.txt", "first version");
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "index", {}).ok());
  std::unique_ptr<Index> old_index;
  REQUIRE(Index::Open(dir / "index", &old_index).ok());
  WriteFile(dir / "docs/one.txt", "second edition");
  WriteFile(dir / "docs/two.txt", "second file");
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "index", {}).ok());
  // The open index still answers from the old file.
  CHECK(Query(*old_index, {"first"}) == std::vector<std::string>{"one.txt"});
  CHECK(Query(*old_index, {"second"}).empty());
  std::unique_ptr<Index> new_index;
  REQUIRE(Index::Open(dir / "index", &new_index).ok());
  CHECK(Query(*new_index, {"second"}) == std::vector<std::string>{"one.txt", "two.txt"});
  CHECK(Query(*new_index, {"first"}).empty());
  // No temporary file is left in it.
  for (const auto& e : std::filesystem::directory_iterator(dir / "index")) {
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  }
  // What a killed writer leaves (a manifest or segment being written, a segment never
  // committed) is removed by the next writer; the user's own files are not touched.
  WriteFile(dir / "index/MANIFEST.tmp.1999999.0", "junk");
  WriteFile(dir / "index/seg-000099.bsg.tmp.1999999.3", "junk");
  WriteFile(dir / "index/seg-000098.bsg", "junk");
  WriteFile(dir / "index/notes.txt", "mine");
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "index", {}).ok());
  CHECK_FALSE(std::filesystem::exists(dir / "index/MANIFEST.tmp.1999999.0"));
  CHECK_FALSE(std::filesystem::exists(dir / "index/seg-000099.bsg.tmp.1999999.3"));
  CHECK_FALSE(std::filesystem::exists(dir / "index/seg-000098.bsg"));
  CHECK(std::filesystem::exists(dir / "index/notes.txt"));
  CHECK(Query(*new_index, {"second"}) == std::vector<std::string>{"one.txt", "two.txt"});
}

TEST_CASE("unreadable files are skipped with a reason, the rest is indexed", "[api]") {
  if (::geteuid() == 0) {
    // root reads everything; permission bits cannot make a file unreadable here.
    SUCCEED("skipped under root");
    return;
  }
  TempDir dir;
  WriteFile(dir / "docs/ok.txt", "fine");
  WriteFile(dir / "docs/locked.txt", "hidden words");
  ::chmod((dir / "docs/locked.txt").c_str(), 0);
  bitsift::IndexSummary summary;
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "index", {}, &summary).ok());
  CHECK(summary.documents == 1);
}

TEST_CASE("special files are never opened and never hang", "[api]") {
  TempDir dir;
  WriteFile(dir / "docs/ok.txt", "fine words");
  REQUIRE(::mkfifo((dir / "docs/pipe").c_str(), 0644) == 0);
  bitsift::IndexSummary summary;
  REQUIRE(bitsift::BuildIndex(dir / "docs", dir / "index", {}, &summary).ok());
  CHECK(summary.documents == 1);
  CHECK(summary.skipped == std::vector<std::pair<std::string, uint64_t>>{{"special", 1}});
}

TEST_CASE("Tokenize exposes the contract", "[api]") {
  std::vector<std::string> tokens;
  REQUIRE(bitsift::Tokenize("Straße 布隆过滤器", &tokens).ok());
  CHECK(tokens == std::vector<std::string>{"strasse", "布隆", "滤器", "过滤", "隆过"});
}

TEST_CASE("ReadDocumentText gives the text indexing reads, or why indexing skips the file",
          "[api]") {
  TempDir dir;
  WriteFile(dir / "page.html", "<p>Tag <b>words</b> &amp; more</p>");
  WriteFile(dir / "latin1.txt", std::string("caf\xe9 au lait, d\xe9j\xe0 vu\n"));
  WriteFile(dir / "bin.dat", std::string("a\0b", 3));
  WriteFile(dir / "big.txt", std::string(2000, 'x'));
  std::string text;
  REQUIRE(bitsift::ReadDocumentText(dir / "page.html", {}, &text).ok());
  CHECK(text.find("<") == std::string::npos);
  CHECK(text.find("words & more") != std::string::npos);
  REQUIRE(bitsift::ReadDocumentText(dir / "latin1.txt", {}, &text).ok());
  CHECK(text.find("d\u00e9j\u00e0") != std::string::npos);  // decoded to UTF-8
  // The index finds the file by the terms of that text.
  REQUIRE(bitsift::BuildIndex(dir.path(), dir / "idx", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "idx", &index).ok());
  std::vector<std::string> terms;
  REQUIRE(bitsift::Tokenize(text, &terms).ok());
  bitsift::QueryResult r;
  REQUIRE(index->Query(terms, bitsift::QueryOptions{}, &r).ok());
  REQUIRE(r.documents.size() == 1);
  CHECK(index->document(r.documents[0]).path == "latin1.txt");

  Status s = bitsift::ReadDocumentText(dir / "bin.dat", {}, &text);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message().find("binary") != std::string::npos);
  CHECK(text.empty());
  bitsift::IndexOptions small;
  small.max_file_size = 1000;
  s = bitsift::ReadDocumentText(dir / "big.txt", small, &text);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message().find("too-large") != std::string::npos);
  CHECK(bitsift::ReadDocumentText(dir / "none.txt", {}, &text).code() == Status::Code::kNotFound);
}

TEST_CASE("a man page in a man folder reads alike by its path, from the tree and from the folder",
          "[api][documents]") {
  // Named as no man page (page.txt), but in a man1 folder with a roff first line: a man page,
  // whether the index's root is above the folder or the folder itself, and for ReadDocumentText.
  TempDir dir;
  WriteFile(
      dir / "tree/man1/page.txt",
      ".\\\" DO NOT MODIFY THIS FILE\n.TH PAGE 1\n.SH NAME\npage \\- shows \\fBbold\\fR words\n");
  std::string text;
  REQUIRE(bitsift::ReadDocumentText(dir / "tree/man1/page.txt", {}, &text).ok());
  CHECK(text.find("MODIFY") == std::string::npos);  // a comment
  CHECK(text.find("bold words") != std::string::npos);
  for (const std::string root : {"tree", "tree/man1"}) {
    INFO(root);
    const std::string idx = dir / (root == "tree" ? "i1" : "i2");
    REQUIRE(bitsift::BuildIndex(dir / root, idx, {}).ok());
    std::unique_ptr<Index> index;
    REQUIRE(Index::Open(idx, &index).ok());
    bitsift::QueryResult r;
    REQUIRE(index->Query({"bold"}, bitsift::QueryOptions{}, &r).ok());
    CHECK(r.documents.size() == 1);
    REQUIRE(index->Query({"modify"}, bitsift::QueryOptions{}, &r).ok());
    CHECK(r.documents.empty());
    REQUIRE(index->Query({"fbbold"}, bitsift::QueryOptions{}, &r).ok());
    CHECK(r.documents.empty());
  }
}

TEST_CASE("the query language and matching lines of files, through the library", "[api][lines]") {
  TempDir dir;
  WriteFile(dir / "t/a.txt", "Copyright 2024\nThis is free software.\nfree\nsoftware\n");
  WriteFile(dir / "t/b.txt", "software, free of charge\nGPL\n");
  WriteFile(dir / "t/c.html", "<title>Free Software</title><p>one</p><p>the GPL</p>");
  REQUIRE(bitsift::BuildIndex(dir / "t", dir / "t/.bitsift", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "t/.bitsift", &index).ok());

  // Parse errors are values with positions; nothing is thrown.
  bitsift::ParsedQuery q;
  bitsift::QueryError error;
  Status s =
      bitsift::ParsedQuery::Parse("free \"soft", bitsift::QuerySyntax::kLanguage, &q, &error);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(error.position == 5);
  CHECK(q.empty());
  s = bitsift::ParsedQuery::ParseArguments({"free", "OR"}, bitsift::QuerySyntax::kLanguage, &q,
                                           &error);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(error.argument == 1);
  CHECK(s.message().find("query argument 2") != std::string::npos);
  bitsift::QueryResult r;
  CHECK(index->Query(bitsift::ParsedQuery(), {}, &r).code() == Status::Code::kInvalidArgument);

  REQUIRE(bitsift::ParsedQuery::Parse("\"free software\" -gpl", bitsift::QuerySyntax::kLanguage, &q)
              .ok());
  CHECK_FALSE(q.plain());
  REQUIRE(index->Query(q, {}, &r).ok());
  CHECK(Paths(*index, r) == std::vector<std::string>{"a.txt"});
  std::vector<bitsift::LineGroup> groups;
  REQUIRE(index->MatchingLines(r.documents[0], q, {}, &groups).ok());
  REQUIRE(groups.size() == 1);
  // Line 2 holds the phrase; lines 3 and 4 hold it across the line break ("free\nsoftware").
  REQUIRE(groups[0].lines.size() == 3);
  CHECK(groups[0].lines[0].number == 2);
  CHECK(groups[0].lines[0].text == "This is free software.");
  CHECK(groups[0].lines[0].spans == std::vector<bitsift::LineSpan>{{8, 21}});
  CHECK(groups[0].lines[1].spans == std::vector<bitsift::LineSpan>{{0, 4}});
  CHECK(groups[0].lines[2].spans == std::vector<bitsift::LineSpan>{{0, 8}});
  // Words mode: 0.1's meaning; quotes and dashes are text.
  REQUIRE(
      bitsift::ParsedQuery::Parse("\"free software\" -gpl", bitsift::QuerySyntax::kWords, &q).ok());
  CHECK(q.plain());
  REQUIRE(index->Query(q, {}, &r).ok());
  CHECK(Paths(*index, r) == std::vector<std::string>{"b.txt", "c.html"});
  // Its tree is made only when asked for (ToString, matching lines), and is the words parse's.
  CHECK(q.ToString() == "(and free gpl software)");
  REQUIRE(index->MatchingLines(r.documents[0], q, {}, &groups).ok());
  REQUIRE(groups.size() == 1);
  CHECK_FALSE(groups[0].lines.empty());
  for (const char* words : {"GPL", "gpl GPL free", "std::vector x", "布隆过滤器 free"}) {
    INFO(words);
    REQUIRE(bitsift::ParsedQuery::Parse(words, bitsift::QuerySyntax::kWords, &q).ok());
    CHECK(
        q.ToString() ==
        bitsift::query::ParseQueryString(words, bitsift::query::QueryMode::kWords).root.ToString());
  }
  CHECK(bitsift::ParsedQuery::Parse("*** --", bitsift::QuerySyntax::kWords, &q, &error).code() ==
        Status::Code::kInvalidArgument);
  CHECK(error.reason.find("no terms") != std::string::npos);
  // HTML: lines of the extracted text, with context.
  REQUIRE(bitsift::ParsedQuery::Parse("gpl", bitsift::QuerySyntax::kLanguage, &q).ok());
  REQUIRE(index->Query(q, {}, &r).ok());
  REQUIRE(Paths(*index, r) == std::vector<std::string>{"b.txt", "c.html"});
  bitsift::LineOptions context;
  context.before = 1;
  REQUIRE(index->MatchingLines(r.documents[1], q, context, &groups).ok());
  REQUIRE(groups.size() == 1);
  REQUIRE(groups[0].lines.size() == 2);
  CHECK_FALSE(groups[0].lines[0].match);
  CHECK(groups[0].lines[1].text == "the GPL");
  CHECK(groups[0].lines[1].spans == std::vector<bitsift::LineSpan>{{4, 7}});
  // A snippet (best_lines): the lines holding the most distinct terms, ties to the earlier, in
  // the document's order.
  REQUIRE(bitsift::ParsedQuery::Parse("copyright OR free OR software",
                                      bitsift::QuerySyntax::kLanguage, &q)
              .ok());
  REQUIRE(index->Query(q, {}, &r).ok());
  REQUIRE(Paths(*index, r).at(0) == "a.txt");
  bitsift::LineOptions snippet;
  auto numbers = [&](uint64_t best) {
    snippet.best_lines = best;
    std::vector<uint64_t> out;
    REQUIRE(index->MatchingLines(r.documents[0], q, snippet, &groups).ok());
    for (const bitsift::LineGroup& g : groups) {
      for (const bitsift::MatchLine& l : g.lines) out.push_back(l.number);
    }
    return out;
  };
  CHECK(numbers(0) == std::vector<uint64_t>{1, 2, 3, 4});
  CHECK(numbers(1) == std::vector<uint64_t>{2});
  CHECK(numbers(2) == std::vector<uint64_t>{1, 2});

  // A changed file: its lines are refused (kStale), and a phrase that needs its text (in an
  // index without positions: this one's positions decide it) is not decided from it.
  bitsift::IndexOptions no_positions;
  no_positions.positions = false;
  REQUIRE(bitsift::BuildIndex(dir / "t", dir / "np", no_positions).ok());
  std::unique_ptr<Index> textual;
  REQUIRE(Index::Open(dir / "np", &textual).ok());
  WriteFile(dir / "t/a.txt", "This is free software, changed.\n");
  const uint32_t a = 0;
  REQUIRE(index->document(a).path == "a.txt");
  CHECK(index->MatchingLines(a, q, {}, &groups).code() == Status::Code::kStale);
  REQUIRE(
      bitsift::ParsedQuery::Parse("\"free software\"", bitsift::QuerySyntax::kLanguage, &q).ok());
  REQUIRE(index->Query(q, {}, &r).ok());
  CHECK(Paths(*index, r) == std::vector<std::string>{"a.txt", "c.html"});  // as indexed
  REQUIRE(textual->document(a).path == "a.txt");
  REQUIRE(textual->Query(q, {}, &r).ok());
  CHECK(Paths(*textual, r) == std::vector<std::string>{"c.html"});
  CHECK(r.unreadable == std::vector<uint32_t>{a});
  // TrimLine keeps a window around the first match.
  bitsift::MatchLine line;
  line.text = std::string(100, 'x') + " free " + std::string(100, 'y');
  line.spans = {{101, 105}};
  bitsift::LineWindow w = bitsift::TrimLine(line, 20);
  CHECK(w.cut_before);
  CHECK(w.cut_after);
  CHECK(w.end - w.start == 20);
  CHECK(line.text.substr(w.start + w.spans[0].start, 4) == "free");
}

TEST_CASE("a word list's tree is made once when threads first ask for it together", "[api][race]") {
  // ParsedQuery::Parse(kWords) keeps the terms and makes the tree on first use (ToString,
  // matching lines); a ParsedQuery shared by threads must make it once (std::call_once; TSan
  // sees a plain lazy make as a race).
  TempDir dir;
  WriteFile(dir / "t/a.txt", "some free\nsoftware here\n");
  WriteFile(dir / "t/b.txt", "free software\n");
  REQUIRE(bitsift::BuildIndex(dir / "t", dir / "idx", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "idx", &index).ok());
  for (int round = 0; round < 20; ++round) {
    bitsift::ParsedQuery q;
    REQUIRE(bitsift::ParsedQuery::Parse("software FREE", bitsift::QuerySyntax::kWords, &q).ok());
    constexpr int kThreads = 4;
    std::vector<std::string> printed(kThreads);
    std::vector<size_t> lines(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<bitsift::LineGroup> groups;
        if (t % 2 == 0) printed[t] = q.ToString();
        if (index->MatchingLines(0, q, {}, &groups).ok() && !groups.empty())
          lines[t] = groups[0].lines.size();
        if (t % 2 == 1) printed[t] = q.ToString();
      });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      CHECK(printed[t] == "(and free software)");
      CHECK(lines[t] == 2);  // a.txt: "free" on one line, "software" on the next
    }
  }
}

TEST_CASE("MatchingLinesOf finds the lines MatchingLines finds, on two threads", "[api][race]") {
  TempDir dir;
  // 80 files: plain text with the words on different lines, HTML, a file changed and one
  // removed after indexing (kStale for both), enough for the helper thread to take some.
  const size_t n = 80;
  for (size_t i = 0; i < n; ++i) {
    std::string text = "line one " + std::to_string(i) + "\n";
    for (size_t l = 0; l < i % 9; ++l) text += "filler " + std::to_string(l) + "\n";
    text += i % 3 == 0 ? "free\nsoftware here\n" : "free software here\n";
    if (i % 4 == 0) text += "and free again\n";
    const std::string name = "t/d" + std::to_string(i / 10) + "/f" + std::to_string(i);
    if (i % 10 == 7) {
      WriteFile(dir / (name + ".html"), "<p>" + text + "</p><p>free</p>");
    } else {
      WriteFile(dir / (name + ".txt"), text);
    }
  }
  REQUIRE(bitsift::BuildIndex(dir / "t", dir / "idx", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "idx", &index).ok());
  WriteFile(dir / "t/d1/f11.txt", "free software, changed\n");
  REQUIRE(std::filesystem::remove(dir / "t/d2/f22.txt"));
  bitsift::ParsedQuery q;
  REQUIRE(
      bitsift::ParsedQuery::Parse("\"free software\" OR again", bitsift::QuerySyntax::kLanguage, &q)
          .ok());
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < index->document_count(); ++id) ids.push_back(id);
  REQUIRE(ids.size() == n);
  bitsift::LineOptions options;
  options.before = 1;
  options.after = 1;
  // What MatchingLines gives, one document at a time on this thread.
  std::vector<std::vector<bitsift::LineGroup>> want(n);
  std::vector<Status> want_status(n);
  for (size_t i = 0; i < n; ++i)
    want_status[i] = index->MatchingLines(ids[i], q, options, &want[i]);
  size_t stale = 0, with_lines = 0;
  for (size_t i = 0; i < n; ++i) {
    stale += want_status[i].code() == Status::Code::kStale;
    with_lines += !want[i].empty();
  }
  REQUIRE(stale == 2);
  REQUIRE(with_lines == n - 2);
  auto same = [&](const std::vector<std::vector<bitsift::LineGroup>>& groups,
                  const std::vector<Status>& statuses, size_t from) {
    for (size_t i = 0; i < groups.size(); ++i) {
      INFO("document " << from + i);
      REQUIRE(statuses[i].code() == want_status[from + i].code());
      REQUIRE(groups[i].size() == want[from + i].size());
      for (size_t g = 0; g < groups[i].size(); ++g) {
        const auto& a = groups[i][g].lines;
        const auto& b = want[from + i][g].lines;
        REQUIRE(a.size() == b.size());
        for (size_t l = 0; l < a.size(); ++l) {
          CHECK(a[l].number == b[l].number);
          CHECK(a[l].text == b[l].text);
          CHECK(a[l].match == b[l].match);
          CHECK(a[l].spans == b[l].spans);
        }
      }
    }
  };
  std::vector<std::vector<bitsift::LineGroup>> groups;
  std::vector<Status> statuses;
  SECTION("shared with the helper thread") {
    bitsift::MatchingLinesOf(*index, ids.data(), n, q, options, &groups, &statuses);
    REQUIRE(groups.size() == n);
    same(groups, statuses, 0);
    // A slice, as the CLI asks.
    bitsift::MatchingLinesOf(*index, ids.data() + 30, 40, q, options, &groups, &statuses);
    REQUIRE(groups.size() == 40);
    same(groups, statuses, 30);
  }
  SECTION("few, or not parallel: on the calling thread") {
    bitsift::MatchingLinesOf(*index, ids.data() + 5, bitsift::kParallelMatchingLines - 1, q,
                             options, &groups, &statuses);
    same(groups, statuses, 5);
    options.parallel = false;
    bitsift::MatchingLinesOf(*index, ids.data(), n, q, options, &groups, &statuses);
    same(groups, statuses, 0);
    bitsift::MatchingLinesOf(*index, nullptr, 0, q, options, &groups, &statuses);
    CHECK(groups.empty());
    CHECK(statuses.empty());
  }
}
