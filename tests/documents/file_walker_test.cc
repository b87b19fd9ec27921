// The walker with ignore rules, --glob, --hidden, --no-ignore; documents read through the
// whole stage; and end to end through the API: files in every encoding and format answer
// queries as their UTF-8 text does.
#include "documents/file_walker.h"

#include <bitsift/bitsift.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "documents/compress_util.h"
#include "documents/sample_texts.h"
#include "format/manifest.h"
#include "indexer/segment_builder.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

using bitsift::documents::Compression;
using bitsift::documents::DocumentOptions;
using bitsift::documents::FileFacts;
using bitsift::documents::SkipReason;
using namespace bitsift::testing;

namespace {

struct Walk {
  std::vector<std::string> files;
  std::map<std::string, std::string> skipped;  // path -> reason
};

Walk WalkTree(const std::string& root, const DocumentOptions& options = {}) {
  Walk w;
  w.files = bitsift::documents::WalkDirectory(
      root, options,
      {bitsift::format::kManifestName,
       std::string(bitsift::format::kManifestMagic, sizeof(bitsift::format::kManifestMagic))},
      [](const std::string&) { return false; },
      [&](const std::string& p, SkipReason r, const std::string&) {
        w.skipped[p] = bitsift::documents::SkipReasonName(r);
      });
  return w;
}

std::vector<std::string> V(std::initializer_list<const char*> l) {
  return std::vector<std::string>(l.begin(), l.end());
}

struct Collect : bitsift::tokenizer::TokenSink {
  std::set<std::string> tokens;
  void OnToken(std::string_view t, bitsift::tokenizer::TokenRole) override { tokens.emplace(t); }
};

// Reads one file through the stage; returns the skip reason name or "ok".
std::string Read(const std::string& root, const std::string& rel, FileFacts* facts, Collect* tokens,
                 const DocumentOptions& options = {}) {
  bitsift::tokenizer::Tokenizer tok;
  std::string detail;
  bitsift::indexer::TokenizingSink text(tok, *tokens);
  SkipReason r =
      bitsift::documents::ReadDocumentFile(root, rel, 1 << 30, options, text, facts, &detail);
  return r == SkipReason::kCount ? "ok" : bitsift::documents::SkipReasonName(r);
}

std::vector<std::string> Query(const bitsift::Index& index, const std::string& term) {
  bitsift::QueryResult r;
  bitsift::Status s = index.Query({term}, {}, &r);
  INFO(s.message());
  REQUIRE(s.ok());
  std::vector<std::string> out;
  for (uint32_t id : r.documents) out.push_back(index.document(id).path);
  return out;
}

}  // namespace

TEST_CASE("walker: sibling entries order as every path below them does", "[documents][walker]") {
  // Names over bytes around '/' (0x2F): ' ', '!', '-', '.', '0', 'a', 0xFF; short ones, so that
  // one is often a prefix of another.
  const std::string alphabet = std::string(" !-.0a") + '\xff';
  std::mt19937 rng(27);
  auto name = [&] {
    std::string n(1 + rng() % 3, ' ');
    for (char& c : n) c = alphabet[rng() % alphabet.size()];
    return n;
  };
  for (int round = 0; round < 20000; ++round) {
    const std::string a = name(), b = name();
    const bool a_dir = rng() % 2, b_dir = rng() % 2;
    if (a == b) continue;
    // The paths at or below each: the file itself, or the directory's children.
    auto paths = [&](const std::string& n, bool dir) {
      std::vector<std::string> out;
      if (!dir) return std::vector<std::string>{n};
      for (int i = 0; i < 4; ++i) out.push_back(n + "/" + name());
      return out;
    };
    const bool before = bitsift::documents::EntryBefore(a, a_dir, b, b_dir);
    REQUIRE(before != bitsift::documents::EntryBefore(b, b_dir, a, a_dir));
    for (const std::string& pa : paths(a, a_dir)) {
      for (const std::string& pb : paths(b, b_dir)) {
        INFO(pa << " against " << pb);
        REQUIRE((pa < pb) == before);
      }
    }
  }
}

TEST_CASE("walker: files listed in byte order among names that sort around '/'",
          "[documents][walker]") {
  TempDir dir;
  const std::string root = dir / "tree";
  // "a-b" < "a.txt" < "a/..." < "a0" < "ab/..." as paths, whatever the directories' listing
  // order: the walk must interleave files and directories as their paths sort.
  for (const char* d : {"tree", "tree/a", "tree/a/b", "tree/ab", "tree/a b", "tree/z"})
    std::filesystem::create_directories(dir / d);
  std::vector<std::string> files = {"a-b",  "a.txt", "a/!x",  "a/b/c", "a/b-", "a/b0", "a0",
                                    "ab/x", "a b/y", "a b-z", "z/z",   "z!",   "\xff"};
  for (const std::string& f : files) WriteFile(root + "/" + f, "word\n");
  std::sort(files.begin(), files.end());
  REQUIRE(WalkTree(root).files == files);
}

TEST_CASE("walker: .gitignore at every level inside a git work tree", "[documents][walker]") {
  TempDir dir;
  std::filesystem::create_directories(dir / ".git/info");
  WriteFile(dir / ".gitignore", "*.log\n/build/\ngenerated.txt\n!keep.log\n");
  WriteFile(dir / "a.txt", "x");
  WriteFile(dir / "debug.log", "x");
  WriteFile(dir / "keep.log", "x");
  WriteFile(dir / "build/out.txt", "x");
  WriteFile(dir / "src/build/kept.txt", "x");  // "/build/" is anchored to the top
  WriteFile(dir / "src/generated.txt", "x");   // unanchored: any level
  WriteFile(dir / "src/.gitignore", "local.txt\n/only-here.txt\n!debug2.log\n");
  WriteFile(dir / "src/local.txt", "x");
  WriteFile(dir / "src/only-here.txt", "x");
  WriteFile(dir / "src/deeper/only-here.txt", "x");  // anchored to src/, not deeper
  WriteFile(dir / "src/debug2.log", "x");            // re-included by the deeper file
  WriteFile(dir / "local.txt", "x");                 // src/.gitignore does not apply up here
  WriteFile(dir / ".git/info/exclude", "secret.txt\n");
  WriteFile(dir / "secret.txt", "x");
  WriteFile(dir / "src/secret.txt", "x");
  Walk w = WalkTree(dir.path());
  CHECK(w.files == V({"a.txt", "keep.log", "local.txt", "src/build/kept.txt", "src/debug2.log",
                      "src/deeper/only-here.txt"}));
  CHECK(w.skipped["debug.log"] == "ignored");
  CHECK(w.skipped["build"] == "ignored");  // one entry for the directory
  CHECK(w.skipped["src/generated.txt"] == "ignored");
  CHECK(w.skipped["src/local.txt"] == "ignored");
  CHECK(w.skipped["secret.txt"] == "ignored");
  CHECK(w.skipped["src/secret.txt"] == "ignored");
  CHECK(w.skipped[".git"] == "hidden");
  CHECK(w.skipped[".gitignore"] == "hidden");
  CHECK(w.skipped.count("build/out.txt") == 0);  // never entered

  // --no-ignore: everything that is not hidden.
  DocumentOptions no_ignore;
  no_ignore.no_ignore = true;
  CHECK(WalkTree(dir.path(), no_ignore).files.size() == 13);
}

TEST_CASE("walker: a parent directory excluded cannot be re-included into", "[documents][walker]") {
  TempDir dir;
  std::filesystem::create_directories(dir / ".git");
  WriteFile(dir / ".gitignore", "/*\n!/foo\n/foo/*\n!/foo/bar\n!.gitignore\n");
  WriteFile(dir / "top.txt", "x");
  WriteFile(dir / "foo/other/x.txt", "x");
  WriteFile(dir / "foo/bar/y.txt", "x");
  WriteFile(dir / "foo/z.txt", "x");
  WriteFile(dir / "logs/.gitignore", "");
  WriteFile(dir / "logs/a.txt", "x");
  Walk w = WalkTree(dir.path());
  // "!.gitignore" re-includes a dot file even without --hidden, as ripgrep does.
  CHECK(w.files == V({".gitignore", "foo/bar/y.txt"}));
  // "!x" cannot re-include a file of an excluded directory.
  WriteFile(dir / ".gitignore", "logs/\n!logs/a.txt\n");
  CHECK(WalkTree(dir.path()).files ==
        V({"foo/bar/y.txt", "foo/other/x.txt", "foo/z.txt", "top.txt"}));
}

TEST_CASE("walker: .gitignore only in a git work tree, .ignore everywhere and first",
          "[documents][walker]") {
  TempDir dir;
  WriteFile(dir / "plain/.gitignore", "*.txt\n");
  WriteFile(dir / "plain/.ignore", "*.tmp\n");
  WriteFile(dir / "plain/a.txt", "x");
  WriteFile(dir / "plain/b.tmp", "x");
  Walk w = WalkTree(dir / "plain");
  CHECK(w.files == V({"a.txt"}));  // no .git: .gitignore does not apply, .ignore does
  // In a work tree .ignore has precedence over .gitignore.
  std::filesystem::create_directories(dir / "repo/.git");
  WriteFile(dir / "repo/.gitignore", "*.log\n");
  WriteFile(dir / "repo/.ignore", "!keep.log\nnotes/\n");
  WriteFile(dir / "repo/keep.log", "x");
  WriteFile(dir / "repo/drop.log", "x");
  WriteFile(dir / "repo/notes/n.txt", "x");
  WriteFile(dir / "repo/ok.txt", "x");
  CHECK(WalkTree(dir / "repo").files == V({"keep.log", "ok.txt"}));
  // A nested repository: the outer .gitignore stops at its root; .ignore does not.
  WriteFile(dir / "repo/sub/x.log", "x");
  WriteFile(dir / "repo/inner/x.log", "x");
  std::filesystem::create_directories(dir / "repo/inner/.git");
  CHECK(WalkTree(dir / "repo").files == V({"inner/x.log", "keep.log", "ok.txt"}));
  // Rules files of the parents of the indexed directory apply too.
  CHECK(WalkTree(dir / "repo/sub").files.empty());
  WriteFile(dir / "repo/sub/y.txt", "x");
  CHECK(WalkTree(dir / "repo/sub").files == V({"y.txt"}));
}

TEST_CASE("walker: .git/info/exclude of a linked worktree", "[documents][walker]") {
  TempDir dir;
  // As `git worktree add` leaves them: a .git file naming a gitdir whose commondir holds info/.
  std::filesystem::create_directories(dir / "main/.git/worktrees/wt");
  WriteFile(dir / "main/.git/info/exclude", "private.txt\n");
  WriteFile(dir / "main/.git/worktrees/wt/commondir", "../..\n");
  WriteFile(dir / "wt/.git", "gitdir: " + (dir / "main/.git/worktrees/wt") + "\n");
  WriteFile(dir / "wt/private.txt", "x");
  WriteFile(dir / "wt/public.txt", "x");
  Walk w = WalkTree(dir / "wt");
  CHECK(w.files == V({"public.txt"}));
  CHECK(w.skipped["private.txt"] == "ignored");
  CHECK(w.skipped[".git"] == "hidden");
}

TEST_CASE("walker: --hidden, --glob, and the index always excluded", "[documents][walker]") {
  TempDir dir;
  std::filesystem::create_directories(dir / ".git");
  WriteFile(dir / ".gitignore", "ignored.md\n");
  WriteFile(dir / ".env", "x");
  WriteFile(dir / ".config/settings.md", "x");
  WriteFile(dir / ".bitsift/MANIFEST", "x");
  WriteFile(dir / "sub/.bitsift", "x");
  WriteFile(dir / "a.md", "x");
  WriteFile(dir / "b.txt", "x");
  WriteFile(dir / "ignored.md", "x");
  WriteFile(dir / "docs/c.md", "x");
  WriteFile(dir / "docs/secret.md", "x");
  CHECK(WalkTree(dir.path()).files == V({"a.md", "b.txt", "docs/c.md", "docs/secret.md"}));

  DocumentOptions hidden;
  hidden.hidden = true;
  Walk h = WalkTree(dir.path(), hidden);
  CHECK(h.files == V({".config/settings.md", ".env", ".gitignore", "a.md", "b.txt", "docs/c.md",
                      "docs/secret.md"}));
  CHECK(h.skipped[".bitsift"] == "index-file");
  CHECK(h.skipped["sub/.bitsift"] == "index-file");
  CHECK(h.skipped[".git"] == "hidden");

  DocumentOptions md;
  md.globs = {"*.md", "!secret.md"};
  Walk g = WalkTree(dir.path(), md);
  CHECK(g.files == V({"a.md", "docs/c.md", "ignored.md"}));  // a glob overrides .gitignore
  CHECK(g.skipped["b.txt"] == "ignored");
  CHECK(g.skipped["docs/secret.md"] == "ignored");
  // A selecting glob also overrides --hidden for what it selects; the index stays out.
  DocumentOptions env;
  env.globs = {".env", "MANIFEST"};
  CHECK(WalkTree(dir.path(), env).files == V({".env"}));
  // An excluding glob prunes a directory.
  DocumentOptions no_docs;
  no_docs.globs = {"!docs/"};
  Walk n = WalkTree(dir.path(), no_docs);
  CHECK(n.files == V({"a.md", "b.txt"}));
  CHECK(n.skipped["docs"] == "ignored");
  // Anchored globs are relative to the indexed directory.
  DocumentOptions anchored;
  anchored.globs = {"docs/*.md"};
  CHECK(WalkTree(dir.path(), anchored).files == V({"docs/c.md", "docs/secret.md"}));
}

TEST_CASE("walker: another index kept inside the tree is not walked", "[documents][walker]") {
  TempDir dir;
  WriteFile(dir / "a.txt", "alpha");
  WriteFile(dir / "notes/b.txt", "beta");
  // A real index at notes/idx (an index kept under another name, or a second tree's).
  bitsift::IndexSummary summary;
  REQUIRE(bitsift::BuildIndex(dir / "notes", dir / "notes/idx", {}, &summary).ok());
  // A folder with a MANIFEST of its own that is not an index's is walked.
  WriteFile(dir / "plans/MANIFEST", "just a file named MANIFEST");
  Walk w = WalkTree(dir.path());
  CHECK(w.files == V({"a.txt", "notes/b.txt", "plans/MANIFEST"}));
  CHECK(w.skipped["notes/idx"] == "index-file");
  // Indexing the tree with it: the other index's files are no documents.
  REQUIRE(bitsift::BuildIndex(dir.path(), dir / ".bitsift", {}, &summary).ok());
  CHECK(summary.documents == 3);
}

TEST_CASE("walker: invalid options are refused before the walk", "[documents][walker]") {
  TempDir dir;
  DocumentOptions bad_encoding;
  bad_encoding.encoding = "no-such-encoding";
  CHECK_THROWS_AS(WalkTree(dir.path(), bad_encoding), bitsift::Error);
  DocumentOptions bad_glob;
  bad_glob.globs = {""};
  CHECK_THROWS_AS(WalkTree(dir.path(), bad_glob), bitsift::Error);
}

TEST_CASE("DocumentOptions round trip through settings", "[documents][options]") {
  DocumentOptions o;
  CHECK(DocumentOptions::FromSettings(o.ToSettings()) == o);
  o.encoding = "Shift_JIS";
  o.hidden = true;
  o.no_ignore = true;
  o.globs = {"*.md", "!secret/**", "a b"};
  o.max_decompressed_bytes = 12345;
  auto settings = o.ToSettings();
  CHECK(settings.at("documents.encoding") == "Shift_JIS");
  CHECK(settings.at("documents.globs") == "*.md\n!secret/**\na b");
  settings["root"] = "/elsewhere";  // other settings of the manifest are left alone
  CHECK(DocumentOptions::FromSettings(settings) == o);
  // An index made before the man page and PDF readers lacks their key: read as it was made.
  DocumentOptions before_readers;
  before_readers.read_man = before_readers.read_pdf = false;
  CHECK(DocumentOptions::FromSettings({}) == before_readers);
  o.read_pdf = false;
  CHECK(o.ToSettings().at("documents.readers") == "man");
  CHECK(DocumentOptions::FromSettings(o.ToSettings()) == o);
  CHECK_THROWS_AS(DocumentOptions::FromSettings({{"documents.readers", "man,epub"}}),
                  bitsift::Error);
  CHECK_THROWS_AS(DocumentOptions::FromSettings({{"documents.hidden", "yes"}}), bitsift::Error);
  CHECK_THROWS_AS(DocumentOptions::FromSettings({{"documents.max_decompressed_bytes", "-1"}}),
                  bitsift::Error);
  CHECK_THROWS_AS(DocumentOptions::FromSettings({{"documents.future", "x"}}), bitsift::Error);
}

TEST_CASE("a document's format and encoding through the whole stage", "[documents][walker]") {
  TempDir dir;
  const std::string html =
      "<html><head><title>Titleword</title><script>scriptword</script>"
      "</head><body><p>Café&nbsp;bodyword</p><p>second</p></body></html>";
  const std::string text = "plain compressed textword\n";
  WriteFile(dir / "page.html", html);
  WriteFile(dir / "page.html.gz", Compress(html, Compression::kGzip));
  WriteFile(dir / "notes.txt.xz", Compress(text, Compression::kXz));
  WriteFile(dir / "notes.txt.bz2", Compress(text, Compression::kBzip2));
  WriteFile(dir / "notes.zst", Compress(text, Compression::kZstd));
  WriteFile(dir / "ru.txt", Encode(Repeat(SampleTexts()[4].text, 1024), "KOI8-R"));
  WriteFile(dir / "utf16.txt", "\xFF\xFE" + Encode("wide textword", "UTF-16LE"));
  WriteFile(dir / "bomb.txt.gz", Compress(std::string(5 << 20, 'a'), Compression::kGzip));
  WriteFile(dir / "broken.gz", "not gzip");
  WriteFile(dir / "binary.gz", Compress(std::string("\x7f"
                                                    "ELF\0\0\0",
                                                    7),
                                        Compression::kGzip));
  struct Expect {
    const char* file;
    const char* format;
    const char* encoding;
    const char* token;
  };
  for (const Expect& e : {Expect{"page.html", "html", "UTF-8", "bodyword"},
                          Expect{"page.html.gz", "gzip+html", "UTF-8", "titleword"},
                          Expect{"notes.txt.xz", "xz+text", "UTF-8", "textword"},
                          Expect{"notes.txt.bz2", "bzip2+text", "UTF-8", "textword"},
                          Expect{"notes.zst", "zstd+text", "UTF-8", "textword"},
                          Expect{"ru.txt", "text", "KOI8-R", "библиотеками"},
                          Expect{"utf16.txt", "text", "UTF-16LE", "textword"}}) {
    INFO(e.file);
    FileFacts facts;
    Collect tokens;
    CHECK(Read(dir.path(), e.file, &facts, &tokens) == "ok");
    CHECK(facts.format == e.format);
    CHECK(facts.encoding == e.encoding);
    CHECK(tokens.tokens.count(e.token) == 1);
    CHECK(tokens.tokens.count("scriptword") == 0);
    CHECK(tokens.tokens.count("cafébodyword") == 0);
  }
  FileFacts facts;
  Collect tokens;
  DocumentOptions small;
  small.max_decompressed_bytes = 1 << 20;
  CHECK(Read(dir.path(), "bomb.txt.gz", &facts, &tokens, small) == "decompression-limit");
  CHECK(Read(dir.path(), "broken.gz", &facts, &tokens) == "bad-compressed");
  CHECK(Read(dir.path(), "binary.gz", &facts, &tokens) == "binary");
  // Forced: every file is read in that encoding.
  DocumentOptions latin1;
  latin1.encoding = "latin1";
  CHECK(Read(dir.path(), "ru.txt", &facts, &tokens, latin1) == "ok");
  CHECK(facts.encoding == "ISO-8859-1");
}

TEST_CASE("end to end: every encoding and format answers as its UTF-8 text does",
          "[documents][e2e]") {
  TempDir dir;
  // Each language: its UTF-8 text, the same text in every legacy encoding, with BOMs in
  // UTF-16/32, as HTML, and compressed.
  std::map<std::string, std::vector<std::string>> files_of;  // language -> files
  for (const SampleText& t : SampleTexts()) {
    const std::string utf8 = Repeat(t.text, 1024);
    std::string lang = t.language;
    auto add = [&](const std::string& name, const std::string& bytes) {
      WriteFile(dir / (lang + "/" + name), bytes);
      files_of[lang].push_back(lang + "/" + name);
    };
    add("utf8.txt", utf8);
    for (const char* e : t.encodings) add(std::string(e) + ".txt", Encode(utf8, e));
    add("utf16le.txt", "\xFF\xFE" + Encode(utf8, "UTF-16LE"));
    add("utf16be.txt", "\xFE\xFF" + Encode(utf8, "UTF-16BE"));
    add("utf32le.txt", std::string("\xFF\xFE\0\0", 4) + Encode(utf8, "UTF-32LE"));
    add("page.html", "<html><head><meta charset=\"" + std::string(t.encodings[0]) +
                         "\"></head><body><p>" + Encode(utf8, t.encodings[0]) +
                         "</p></body></html>");
    add("text.txt.gz", Compress(Encode(utf8, t.encodings[0]), Compression::kGzip));
    add("text.txt.xz", Compress(Encode(utf8, t.encodings.back()), Compression::kXz));
    add("page.html.bz2", Compress("<p>" + utf8 + "</p>", Compression::kBzip2));
    add("text.txt.zst", Compress("\xFF\xFE" + Encode(utf8, "UTF-16LE"), Compression::kZstd));
    std::sort(files_of[lang].begin(), files_of[lang].end());
  }
  bitsift::IndexSummary summary;
  bitsift::Status s = bitsift::BuildIndex(dir.path(), dir / ".bitsift", {}, &summary);
  INFO(s.message());
  REQUIRE(s.ok());
  std::unique_ptr<bitsift::Index> index;
  REQUIRE(bitsift::Index::Open(dir / ".bitsift", &index).ok());
  size_t files = 0;
  for (const auto& [lang, list] : files_of) files += list.size();
  CHECK(summary.documents == files);
  CHECK(summary.skipped.empty());
  int queries = 0;
  for (const SampleText& t : SampleTexts()) {
    // Every term of the UTF-8 text finds exactly that language's files, whatever their form.
    for (const std::string& term : bitsift::tokenizer::TokenSet(t.text)) {
      INFO(t.language << ": " << term);
      std::vector<std::string> found = Query(*index, term);
      std::vector<std::string> expected;
      for (const SampleText& other : SampleTexts()) {
        auto terms = bitsift::tokenizer::TokenSet(other.text);
        if (std::binary_search(terms.begin(), terms.end(), term)) {
          for (const std::string& f : files_of[other.language]) expected.push_back(f);
        }
      }
      std::sort(expected.begin(), expected.end());
      CHECK(found == expected);
      ++queries;
    }
    for (const char* word : t.words) CHECK(!Query(*index, word).empty());
  }
  WARN(queries << " queries over " << files << " files in " << SampleTexts().size()
               << " languages answered as on their UTF-8 text");
}

namespace {

// Every live document of an index (all hold "everywhere") with its recorded encoding name.
std::map<std::string, std::string> RecordedEncodings(const bitsift::Index& index) {
  bitsift::QueryResult r;
  REQUIRE(index.Query({"everywhere"}, {}, &r).ok());
  std::map<std::string, std::string> out;
  for (uint32_t id : r.documents) {
    bitsift::DocumentInfo d = index.document(id);
    out[d.path] = d.encoding;
  }
  return out;
}

// What the stage reads each file under `root` in (FileFacts::encoding): the truth to compare
// the index with.
std::map<std::string, std::string> StageEncodings(const std::string& root,
                                                  const std::vector<std::string>& files) {
  std::map<std::string, std::string> out;
  for (const std::string& f : files) {
    FileFacts facts;
    Collect tokens;
    REQUIRE(Read(root, f, &facts, &tokens) == "ok");
    out[f] = facts.encoding;
  }
  return out;
}

// Checks the index at `index_path` against `expected` (path -> encoding): each document's
// DocumentInfo::encoding, and IndexStats::encodings as the counts of those names.
void CheckEncodings(const std::string& index_path,
                    const std::map<std::string, std::string>& expected) {
  std::unique_ptr<bitsift::Index> index;
  REQUIRE(bitsift::Index::Open(index_path, &index).ok());
  CHECK(RecordedEncodings(*index) == expected);
  std::map<std::string, uint64_t> counts;
  for (const auto& [path, name] : expected) counts[name]++;
  const bitsift::IndexStats stats = index->Stats();
  CHECK(std::map<std::string, uint64_t>(stats.encodings.begin(), stats.encodings.end()) == counts);
  for (size_t i = 1; i < stats.encodings.size(); ++i)
    CHECK(stats.encodings[i - 1].second >= stats.encodings[i].second);  // most first
  bitsift::Status s = index->Check();
  INFO(s.message());
  CHECK(s.ok());
}

}  // namespace

TEST_CASE("each document's encoding is recorded, through updates and compaction",
          "[documents][encoding]") {
  TempDir dir;
  std::vector<std::string> files;
  auto add = [&](const std::string& name, const std::string& bytes) {
    WriteFile(dir / name, bytes);
    if (std::find(files.begin(), files.end(), name) == files.end()) files.push_back(name);
  };
  // Each language in each of its legacy encodings, in UTF-8 and UTF-16 with BOMs, compressed.
  for (const SampleText& t : SampleTexts()) {
    const std::string utf8 = Repeat(t.text, 1024) + " everywhere\n";
    const std::string lang = t.language;
    add(lang + "/utf8.txt", utf8);
    for (const char* e : t.encodings) add(lang + "/" + e + ".txt", Encode(utf8, e));
    add(lang + "/utf16le.txt", "\xFF\xFE" + Encode(utf8, "UTF-16LE"));
    add(lang + "/utf16be.txt.gz",
        Compress("\xFE\xFF" + Encode(utf8, "UTF-16BE"), Compression::kGzip));
  }
  bitsift::IndexOptions options;
  options.merge = false;  // keep the segments of the updates apart
  REQUIRE(bitsift::BuildIndex(dir.path(), dir / ".bitsift", options).ok());
  std::map<std::string, std::string> expected = StageEncodings(dir.path(), files);
  // The names are ICU's canonical ones.
  CHECK(expected.at("zh-Hans/GB18030.txt") == "GB18030");
  CHECK(expected.at("ja/Shift_JIS.txt") == "Shift_JIS");
  CHECK(expected.at("ru/KOI8-R.txt") == "KOI8-R");
  CHECK(expected.at("ru/utf16le.txt") == "UTF-16LE");
  CHECK(expected.at("ru/utf16be.txt.gz") == "UTF-16BE");
  CHECK(expected.at("ru/utf8.txt") == "UTF-8");
  std::set<std::string> names;
  for (const auto& [path, name] : expected) names.insert(name);
  CHECK(names.size() >= 15);
  CheckEncodings(dir / ".bitsift", expected);

  // An update: a file re-encoded (KOI8-R -> UTF-16LE), one removed, one added: the new
  // segment has its own table, the old ones keep theirs.
  const SampleText& ru = SampleTexts()[4];
  REQUIRE(std::string(ru.language) == "ru");
  const std::string ru_text = Repeat(ru.text, 1024) + " everywhere\n";
  add("ru/KOI8-R.txt", "\xFF\xFE" + Encode(ru_text, "UTF-16LE"));
  REQUIRE(::unlink((dir / "ja/Shift_JIS.txt").c_str()) == 0);
  files.erase(std::find(files.begin(), files.end(), "ja/Shift_JIS.txt"));
  add("ja/later-sjis.txt",
      Encode(Repeat(SampleTexts()[2].text, 1024) + " everywhere\n", "Shift_JIS"));
  bitsift::IndexSummary summary;
  REQUIRE(bitsift::BuildIndex(dir.path(), dir / ".bitsift", options, &summary).ok());
  CHECK(summary.added == 1);
  CHECK(summary.changed == 1);
  CHECK(summary.removed == 1);
  CHECK(summary.segments == 2);
  expected = StageEncodings(dir.path(), files);
  CHECK(expected.at("ru/KOI8-R.txt") == "UTF-16LE");
  CHECK(expected.at("ja/later-sjis.txt") == "Shift_JIS");
  CheckEncodings(dir / ".bitsift", expected);

  // Compaction feeds the live documents through the builder again: encodings carried over.
  REQUIRE(bitsift::CompactIndex(dir / ".bitsift", {}, &summary).ok());
  CHECK(summary.segments == 1);
  CheckEncodings(dir / ".bitsift", expected);

  // In-memory documents are UTF-8.
  REQUIRE(bitsift::BuildIndexFromDocuments({{"a", "everywhere", 0}, {"b", "everywhere too", 0}},
                                           dir / "memory", {})
              .ok());
  CheckEncodings(dir / "memory", {{"a", "UTF-8"}, {"b", "UTF-8"}});
}
