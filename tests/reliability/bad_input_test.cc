// Bad input while indexing: indexing always completes, every skip is counted by reason (and
// named through on_skip, which `--verbose` prints), and what was indexed is searchable.
#include <bitsift/bitsift.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "documents/file_walker.h"
#include "indexer/segment_builder.h"
#include "reliability_util.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"
#include "util/memory.h"

using bitsift::Index;
using bitsift::Status;
using namespace bitsift::testing;

namespace {

struct Built {
  bitsift::IndexSummary summary;
  std::vector<std::string> skips;  // "path:reason"
  std::unique_ptr<Index> index;
};

// Indexes dir into dir/.bitsift, then opens and fully checks the index.
std::unique_ptr<Built> BuildAndOpen(const std::string& dir, bitsift::IndexOptions options = {}) {
  auto b = std::make_unique<Built>();
  options.on_skip = [&b](const std::string& path, const std::string& reason, const std::string&) {
    b->skips.push_back(path + ":" + reason);
  };
  Status s = bitsift::BuildIndex(dir, dir + "/.bitsift", options, &b->summary);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(Index::Open(dir + "/.bitsift", &b->index).ok());
  Status c = b->index->Check();
  INFO(c.message());
  REQUIRE(c.ok());
  std::sort(b->skips.begin(), b->skips.end());
  return b;
}

uint64_t Skipped(const bitsift::IndexSummary& s, const std::string& reason) {
  for (const auto& [r, n] : s.skipped) {
    if (r == reason) return n;
  }
  return 0;
}

std::vector<std::string> Find(const Index& index, const std::vector<std::string>& terms) {
  bitsift::QueryResult r;
  Status s = index.Query(terms, {}, &r);
  INFO(s.message());
  REQUIRE(s.ok());
  std::vector<std::string> out;
  for (uint32_t id : r.documents) out.push_back(index.document(id).path);
  return out;
}

// Every token of `text` finds the document `path`.
void ExpectSearchable(const Index& index, const std::string& text, const std::string& path) {
  for (const std::string& token : bitsift::tokenizer::TokenSet(text)) {
    std::vector<std::string> found = Find(index, {token});
    INFO("token " << token);
    CHECK(std::find(found.begin(), found.end(), path) != found.end());
  }
}

}  // namespace

TEST_CASE("invalid UTF-8 is indexed as U+FFFD and its words stay searchable", "[badinput]") {
  TempDir dir;
  const std::string text =
      "alpha \xC3 beta \xFF\xFE gamma \xED\xA0\x80 delta \xF4\x90\x80\x80 epsilon \xC0\xAF zeta "
      "ab\xE2\x82"
      "cd \xF0\x9F\x98 caf\xC3";
  WriteFile(dir / "bad.txt", text);
  WriteFile(dir / "good.txt", "alpha omega");
  // Read as UTF-8 (forced): without that, a text with no valid multi-byte sequence is taken
  // for a legacy encoding (tests/documents/decode_test.cc), where its ASCII words are the same.
  bitsift::IndexOptions utf8;
  utf8.encoding = "UTF-8";
  utf8.rebuild = true;  // the manifest does not record the encoding yet: unchanged files stay
  auto detected = BuildAndOpen(dir.path());
  for (const char* w : {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}) {
    CHECK(!Find(*detected->index, {w}).empty());
  }
  auto b = BuildAndOpen(dir.path(), utf8);
  CHECK(b->summary.documents == 2);
  for (const char* w : {"beta", "gamma", "delta", "epsilon", "zeta"}) {
    CHECK(Find(*b->index, {w}) == std::vector<std::string>{"bad.txt"});
  }
  CHECK(Find(*b->index, {"alpha"}) == std::vector<std::string>{"bad.txt", "good.txt"});
  ExpectSearchable(*b->index, text, "bad.txt");
}

TEST_CASE("NUL bytes after the first 8 KiB do not make a file binary", "[badinput]") {
  TempDir dir;
  std::string head;
  while (head.size() < 8192) head += "lorem ipsum ";
  head.resize(8192);
  const std::string late = head + std::string(3, '\0') + " tailword\0end" + std::string(1, '\0');
  WriteFile(dir / "late-nul.txt", late);
  std::string early = head;
  early[8191] = '\0';  // the last byte of the probe
  WriteFile(dir / "early-nul.txt", early + " otherword");
  auto b = BuildAndOpen(dir.path());
  CHECK(b->summary.documents == 1);
  CHECK(Skipped(b->summary, "binary") == 1);
  CHECK(b->skips == std::vector<std::string>{"early-nul.txt:binary"});
  CHECK(Find(*b->index, {"tailword"}) == std::vector<std::string>{"late-nul.txt"});
  CHECK(Find(*b->index, {"otherword"}).empty());
  ExpectSearchable(*b->index, late, "late-nul.txt");
}

TEST_CASE("file names that are not UTF-8 are indexed under their raw bytes", "[badinput]") {
  TempDir dir;
  const std::vector<std::string> names = {"caf\xE9.txt", "\xFF\xFE", "half\xC3(.md",
                                          "sur\xED\xA0\x80rogate"};
  for (size_t i = 0; i < names.size(); ++i) WriteFile(dir / names[i], Cat("rawname word", i));
  auto b = BuildAndOpen(dir.path());
  CHECK(b->summary.documents == names.size());
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  CHECK(Find(*b->index, {"rawname"}) == sorted);
  for (size_t i = 0; i < names.size(); ++i) {
    CHECK(Find(*b->index, {Cat("word", i)}) == std::vector<std::string>{names[i]});
  }
}

TEST_CASE("symbolic link loops and dangling links are skipped, never followed", "[badinput]") {
  TempDir dir;
  WriteFile(dir / "sub/real.txt", "linked words");
  namespace fs = std::filesystem;
  fs::create_symlink("b", dir / "a");
  fs::create_symlink("a", dir / "b");
  fs::create_symlink("self", dir / "self");
  fs::create_directory_symlink("..", dir / "sub/up");
  fs::create_directory_symlink(".", dir / "sub/here");
  fs::create_symlink("nowhere", dir / "dangling");
  fs::create_symlink("sub/real.txt", dir / "file-link");
  auto b = BuildAndOpen(dir.path());
  CHECK(b->summary.documents == 1);
  CHECK(Skipped(b->summary, "symlink") == 7);
  CHECK(b->skips == std::vector<std::string>{"a:symlink", "b:symlink", "dangling:symlink",
                                             "file-link:symlink", "self:symlink",
                                             "sub/here:symlink", "sub/up:symlink"});
  CHECK(Find(*b->index, {"linked"}) == std::vector<std::string>{"sub/real.txt"});
}

TEST_CASE("FIFOs, sockets and devices are never opened and never hang", "[badinput]") {
  TempDir dir;
  WriteFile(dir / "ok.txt", "plain words");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(sock >= 0);
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = dir / "sock";
  REQUIRE(sock_path.size() < sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
  REQUIRE(::bind(sock, reinterpret_cast<struct sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(sock, 1) == 0);
  // A character device like /dev/zero (reading it would never end) and a block device, when
  // this process may create device nodes (root outside a restricted container).
  uint64_t devices = 0;
  if (::mknod((dir / "zero").c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0) ++devices;
  if (::mknod((dir / "blk").c_str(), S_IFBLK | 0644, makedev(7, 0)) == 0) ++devices;
  if (devices == 0) WARN("cannot create device nodes here: devices not tested");
  auto b = BuildAndOpen(dir.path());
  ::close(sock);
  CHECK(b->summary.documents == 1);
  CHECK(Skipped(b->summary, "special") == 2 + devices);
  CHECK(Find(*b->index, {"plain"}) == std::vector<std::string>{"ok.txt"});
}

TEST_CASE("a tree 200 levels deep is indexed to the bottom", "[badinput]") {
  TempDir dir;
  std::string rel;
  for (int level = 0; level < 200; ++level) {
    rel += Cat(level ? "/" : "", "d", level % 10);
    WriteFile(dir / (rel + "/f.txt"), Cat("level", level, " everywhere"));
  }
  auto b = BuildAndOpen(dir.path());
  CHECK(b->summary.documents == 200);
  CHECK(Find(*b->index, {"level199"}) == std::vector<std::string>{rel + "/f.txt"});
  CHECK(Find(*b->index, {"everywhere"}).size() == 200);
}

TEST_CASE("paths longer than PATH_MAX are walked and read", "[badinput]") {
  // 200 levels of 60-byte names: about 12,200 bytes, three times PATH_MAX. Neither open() nor
  // std::filesystem takes such a path, so the tree is made with mkdirat/openat.
  TempDir dir;
  const std::string name(60, 'n');
  int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  std::string rel;
  for (int level = 0; level < 200; ++level) {
    std::string level_name = Cat(name, level);
    REQUIRE(::mkdirat(fd, level_name.c_str(), 0755) == 0);
    int next = ::openat(fd, level_name.c_str(), O_RDONLY | O_DIRECTORY);
    REQUIRE(next >= 0);
    ::close(fd);
    fd = next;
    rel += (level ? "/" : "") + level_name;
  }
  int file = ::openat(fd, "deep.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(file >= 0);
  const std::string text = "bottomword of a very deep tree";
  REQUIRE(::write(file, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(file);
  ::close(fd);
  REQUIRE(rel.size() > PATH_MAX);
  auto b = BuildAndOpen(dir.path());
  CHECK(b->skips.empty());
  CHECK(b->summary.documents == 1);
  CHECK(Find(*b->index, {"bottomword", "deep"}) == std::vector<std::string>{rel + "/deep.txt"});
  // std::filesystem::remove_all cannot remove such a tree either: unlink it bottom-up with fds.
  std::vector<int> fds = {::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY)};
  for (int level = 0; level < 200; ++level) {
    fds.push_back(::openat(fds.back(), Cat(name, level).c_str(), O_RDONLY | O_DIRECTORY));
    REQUIRE(fds.back() >= 0);
  }
  CHECK(::unlinkat(fds.back(), "deep.txt", 0) == 0);
  for (int level = 199; level >= 0; --level) {
    ::close(fds.back());
    fds.pop_back();
    CHECK(::unlinkat(fds.back(), Cat(name, level).c_str(), AT_REMOVEDIR) == 0);
  }
  ::close(fds.back());
}

TEST_CASE("an empty directory gives an empty, valid index", "[badinput]") {
  TempDir dir;
  std::filesystem::create_directories(dir / "only/empty/dirs");
  auto b = BuildAndOpen(dir.path());
  CHECK(b->summary.documents == 0);
  CHECK(b->index->document_count() == 0);
  CHECK(Find(*b->index, {"anything"}).empty());
}

TEST_CASE("100,000 empty files", "[badinput][many]") {
  // BITSIFT_MANY_FILES overrides the count (100,000 by default).
  const uint64_t count = EnvNumber("BITSIFT_MANY_FILES", 100000);
  TempDir dir;
  for (uint64_t i = 0; i < count; ++i) {
    if (i % 1000 == 0) std::filesystem::create_directories(dir / (Cat("d", i / 1000)));
    std::string path = dir / (Cat("d", i / 1000, "/e", i % 1000));
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  WriteFile(dir / "d0/needle.txt", "needle");
  auto start = std::chrono::steady_clock::now();
  auto b = BuildAndOpen(dir.path());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN(count << " empty files indexed and checked in " << seconds << " s");
  CHECK(b->summary.documents == count + 1);
  CHECK(b->index->document(0).terms == 0);
  CHECK(Find(*b->index, {"needle"}) == std::vector<std::string>{"d0/needle.txt"});
}

TEST_CASE("files that shrink, grow, vanish or change type between listing and reading",
          "[badinput]") {
  using bitsift::documents::SkipReason;
  TempDir dir;
  WriteFile(dir / "shrinks.txt", std::string(100000, 'x') + " shrinkword");
  WriteFile(dir / "grows.txt", "small");
  WriteFile(dir / "grows-too-much.txt", "small");
  WriteFile(dir / "vanishes.txt", "gone");
  WriteFile(dir / "becomes-dir.txt", "x");
  WriteFile(dir / "becomes-fifo.txt", "x");
  WriteFile(dir / "becomes-link.txt", "x");
  std::vector<std::string> skipped;
  std::vector<std::string> files = bitsift::documents::WalkDirectory(
      dir.path(), {}, {}, [](const std::string&) { return false; },
      [&](const std::string& p, SkipReason, const std::string&) { skipped.push_back(p); });
  REQUIRE(files.size() == 7);
  REQUIRE(skipped.empty());
  // The changes happen after listing, before reading.
  REQUIRE(::truncate((dir / "shrinks.txt").c_str(), 3) == 0);
  WriteFile(dir / "grows.txt", "small and then grownword");
  WriteFile(dir / "grows-too-much.txt", std::string(5000, 'y'));
  std::filesystem::remove(dir / "vanishes.txt");
  std::filesystem::remove(dir / "becomes-dir.txt");
  std::filesystem::create_directory(dir / "becomes-dir.txt");
  std::filesystem::remove(dir / "becomes-fifo.txt");
  REQUIRE(::mkfifo((dir / "becomes-fifo.txt").c_str(), 0644) == 0);
  std::filesystem::remove(dir / "becomes-link.txt");
  std::filesystem::create_symlink("grows.txt", dir / "becomes-link.txt");
  bitsift::tokenizer::Tokenizer tok;
  struct Collect : bitsift::tokenizer::TokenSink {
    std::vector<std::string> tokens;
    void OnToken(std::string_view t, bitsift::tokenizer::TokenRole) override {
      tokens.emplace_back(t);
    }
  };
  auto read = [&](const std::string& name, uint64_t max_size, bitsift::documents::FileFacts* facts,
                  Collect* sink) {
    std::string detail;
    bitsift::indexer::TokenizingSink text(tok, *sink);
    const SkipReason r =
        bitsift::documents::ReadDocumentFile(dir.path(), name, max_size, {}, text, facts, &detail);
    if (r != SkipReason::kCount) tok.Reset();
    return r;
  };
  bitsift::documents::FileFacts facts;
  Collect c1;
  CHECK(read("shrinks.txt", 1 << 20, &facts, &c1) == SkipReason::kCount);
  CHECK(facts.size == 3);
  CHECK(c1.tokens == std::vector<std::string>{"xxx"});
  Collect c2;
  CHECK(read("grows.txt", 1 << 20, &facts, &c2) == SkipReason::kCount);
  CHECK(std::find(c2.tokens.begin(), c2.tokens.end(), "grownword") != c2.tokens.end());
  Collect c3;
  CHECK(read("grows-too-much.txt", 1000, &facts, &c3) == SkipReason::kTooLarge);
  Collect c4;
  CHECK(read("vanishes.txt", 1 << 20, &facts, &c4) == SkipReason::kVanished);
  CHECK(read("becomes-dir.txt", 1 << 20, &facts, &c4) == SkipReason::kSpecial);
  CHECK(read("becomes-fifo.txt", 1 << 20, &facts, &c4) == SkipReason::kSpecial);
  CHECK(read("becomes-link.txt", 1 << 20, &facts, &c4) == SkipReason::kSymlink);
  CHECK(c4.tokens.empty());
}

TEST_CASE("indexing completes while files keep changing under it", "[badinput][race]") {
  TempDir dir;
  const int kFiles = 300;
  for (int i = 0; i < kFiles; ++i) WriteFile(dir / (Cat("f", i, ".txt")), "stable word");
  std::atomic<bool> stop{false};
  // A writer that truncates, extends, deletes and recreates files as fast as it can.
  std::thread churn([&] {
    std::mt19937 rng(7);
    std::string big(200000, 'z');
    while (!stop.load()) {
      std::string path = dir / (Cat("f", rng() % kFiles, ".txt"));
      switch (rng() % 4) {
        case 0:
          (void)::truncate(path.c_str(), 0);
          break;
        case 1:
          WriteFile(path, "stable word " + big.substr(0, rng() % big.size()));
          break;
        case 2:
          ::unlink(path.c_str());
          break;
        default:
          WriteFile(path, "stable word again");
          break;
      }
    }
  });
  for (int round = 0; round < 4; ++round) {
    bitsift::IndexSummary summary;
    Status s = bitsift::BuildIndex(dir.path(), dir / "index", {}, &summary);
    INFO(s.message());
    REQUIRE(s.ok());
    CHECK(summary.documents + Skipped(summary, "vanished") <= kFiles);
    std::unique_ptr<Index> index;
    REQUIRE(Index::Open(dir / "index", &index).ok());
    CHECK(index->Check().ok());
    CHECK(index->live_document_count() == summary.documents);
  }
  stop = true;
  churn.join();
}

TEST_CASE("a huge file without a newline is read with bounded memory", "[badinput][big]") {
  // 1 GiB by default (about 30 s in Release); the sanitizer passes of scripts/test set
  // BITSIFT_BIG_FILE_MB lower.
  const uint64_t mb = EnvNumber("BITSIFT_BIG_FILE_MB", 1024);
  TempDir dir;
  const std::string docs = dir / "docs", file = docs + "/huge.txt";
  std::string head;
  while (head.size() < 8192) head += "headword spaced text ";
  WriteFile(file, head);
  // A sparse file: the hole reads as NUL bytes (after the 8 KiB probe, so not "binary"), and
  // nothing of it is stored on disk or in this process.
  const std::string tail = " tailword";
  const uint64_t size = mb << 20;
  {
    int fd = ::open(file.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(size - tail.size())) == 0);
    REQUIRE(::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(size - tail.size())) ==
            static_cast<ssize_t>(tail.size()));
    ::close(fd);
  }
  ProcessResult r = RunProcess({BitsiftProgram(), "index", docs, "--index", dir / "index",
                                "--max-file-size", std::to_string(size), "--threads", "2"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("indexed 1 document ") != std::string::npos);
  // (Under a sanitizer: its shadow memory and quarantine.)
  const long limit_kb = bitsift::util::kSanitizerBuild ? 1024 * 1024 : 200 * 1024;
  WARN(mb << " MiB file: peak RSS " << r.max_rss_kb / 1024 << " MiB (limit " << limit_kb / 1024
          << ")");
  CHECK(r.max_rss_kb < limit_kb);
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "index", &index).ok());
  CHECK(Find(*index, {"tailword"}) == std::vector<std::string>{"huge.txt"});
  CHECK(Find(*index, {"headword", "tailword"}) == std::vector<std::string>{"huge.txt"});
  CHECK(index->document(0).size == size);
  // Over the default size limit it is skipped as too large, not read.
  r = RunProcess({BitsiftProgram(), "index", docs, "--index", dir / "index2", "--max-file-size",
                  std::to_string(size - 1), "--verbose"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("too-large 1") != std::string::npos);
  CHECK(r.err.find("huge.txt") != std::string::npos);
}
