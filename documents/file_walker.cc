#include "documents/file_walker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "documents/decode.h"
#include "documents/decompress.h"
#include "documents/html.h"
#include "documents/ignore_rules.h"
#include "documents/pdf.h"
#include "documents/roff.h"
#include "util/error.h"
#include "util/files.h"

namespace bitsift::documents {
namespace {

constexpr size_t kReadBytes = 1 << 20;

std::string Join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// open(root/relative, flags). A path of PATH_MAX bytes or more cannot be passed to open(), so it
// is opened one directory at a time with openat(): trees of any depth can be indexed.
int OpenUnder(const std::string& root, const std::string& relative, int flags) {
  if (root.size() + 1 + relative.size() < PATH_MAX) {
    return ::open(relative.empty() ? root.c_str() : (root + "/" + relative).c_str(), flags);
  }
  int dir_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  size_t pos = 0;
  while (dir_fd >= 0) {
    size_t slash = relative.find('/', pos);
    bool last = slash == std::string::npos;
    std::string part = relative.substr(pos, last ? std::string::npos : slash - pos);
    int fd = ::openat(dir_fd, part.c_str(),
                      last ? flags : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    ::close(dir_fd);
    errno = err;
    if (last) return fd;
    dir_fd = fd;
    pos = slash + 1;
  }
  return -1;
}

}  // namespace

const char* SkipReasonName(SkipReason reason) {
  switch (reason) {
    case SkipReason::kHidden:
      return "hidden";
    case SkipReason::kSymlink:
      return "symlink";
    case SkipReason::kSpecial:
      return "special";
    case SkipReason::kBinary:
      return "binary";
    case SkipReason::kTooLarge:
      return "too-large";
    case SkipReason::kUnreadable:
      return "unreadable";
    case SkipReason::kVanished:
      return "vanished";
    case SkipReason::kIndexFile:
      return "index-file";
    case SkipReason::kIgnored:
      return "ignored";
    case SkipReason::kDecompressionLimit:
      return "decompression-limit";
    case SkipReason::kBadCompressed:
      return "bad-compressed";
    case SkipReason::kBadDocument:
      return "bad-document";
    case SkipReason::kCount:
      break;
  }
  return "unknown";
}

bool EntryBefore(std::string_view a, bool a_is_dir, std::string_view b, bool b_is_dir) {
  const size_t n = std::min(a.size(), b.size());
  const int c = std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c < 0;
  // One name is a prefix of the other: what follows it decides, the next byte of the longer
  // name against the '/' after a directory's name, or nothing after a file's (which sorts
  // first, as a prefix does).
  auto after = [n](std::string_view x, bool is_dir) -> int {
    if (n < x.size()) return static_cast<unsigned char>(x[n]);
    return is_dir ? '/' : -1;
  };
  return after(a, a_is_dir) < after(b, b_is_dir);
}

namespace {

// A directory being walked: its entries to index or enter, in the order their paths sort.
struct Frame {
  std::string dir;                                    // relative to root
  std::shared_ptr<const DirectoryRules> rules;        // its own (its parent's for the listing)
  std::vector<std::pair<std::string, bool>> entries;  // {name, is a directory}, in order
  size_t next = 0;
};

// Lists the directories of one walk: what to index or enter, each skipped entry reported.
class DirectoryLister {
 public:
  DirectoryLister(const std::string& root, const std::string& root_abs,
                  const DocumentOptions& options, const IndexMark& index_mark,
                  const std::function<bool(const std::string&)>& exclude,
                  const SkipCallback& on_skip)
      : root_(root),
        root_abs_(root_abs),
        options_(options),
        index_mark_(index_mark),
        overrides_(options.globs),
        exclude_(exclude),
        on_skip_(on_skip) {}

  // Lists directory `dir` (relative to the root; parent_rules: its parent's ignore rules)
  // into *frame: its rules, and the entries to index or enter in the order of the paths below
  // them (EntryBefore). Returns false if it cannot be opened (reported).
  bool List(const std::string& dir, std::shared_ptr<const DirectoryRules> parent_rules,
            Frame* frame) const {
    int dfd = OpenUnder(root_, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR* d = dfd >= 0 ? ::fdopendir(dfd) : nullptr;
    if (d == nullptr) {
      int err = errno;
      if (dfd >= 0) ::close(dfd);
      on_skip_(dir, err == ENOENT ? SkipReason::kVanished : SkipReason::kUnreadable,
               std::strerror(err));
      return false;
    }
    // The whole listing first: this directory's rules files apply to its own entries.
    struct Entry {
      std::string name;
      unsigned char type;
    };
    std::vector<Entry> entries;
    bool has_git = false, has_ignore = false, has_gitignore = false;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      has_git |= name == ".git";
      has_ignore |= name == ".ignore";
      has_gitignore |= name == ".gitignore";
      entries.push_back({std::move(name), e->d_type});
    }
    frame->dir = dir;
    if (!dir.empty() && IsIndexDirectory(::dirfd(d), entries)) {  // another bitsift index
      ::closedir(d);
      on_skip_(dir, SkipReason::kIndexFile, "another index");
      return false;
    }
    frame->rules = options_.no_ignore
                       ? nullptr
                       : DirectoryRules::ForChild(parent_rules, root_abs_, dir, ::dirfd(d), has_git,
                                                  has_ignore, has_gitignore);
    for (Entry& e : entries) {
      const std::string rel = Join(dir, e.name);
      const unsigned char type = e.type == DT_UNKNOWN ? TypeOf(::dirfd(d), e.name, rel) : e.type;
      if (type != DT_UNKNOWN && Keep(rel, e.name, type, frame->rules.get())) {
        frame->entries.push_back({std::move(e.name), type == DT_DIR});
      }
    }
    ::closedir(d);
    // In the order of the paths below them (EntryBefore): walked depth-first in that order,
    // the files come sorted, and the whole list is not sorted again (1.2M paths of
    // linux-paras: ~0.3 s of an update's 2.7).
    std::sort(frame->entries.begin(), frame->entries.end(),
              [](const std::pair<std::string, bool>& a, const std::pair<std::string, bool>& b) {
                return EntryBefore(a.first, a.second, b.first, b.second);
              });
    return true;
  }

 private:
  // Whether the directory `dfd`, listed as `entries`, is a search index (index_mark_).
  template <typename Entries>
  bool IsIndexDirectory(int dfd, const Entries& entries) const {
    const std::string& name = index_mark_.file_name;
    if (name.empty() ||
        std::none_of(entries.begin(), entries.end(), [&](const auto& e) { return e.name == name; }))
      return false;
    const int fd = ::openat(dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    std::string magic(index_mark_.magic.size(), '\0');
    const bool is_index =
        ::read(fd, magic.data(), magic.size()) == static_cast<ssize_t>(magic.size()) &&
        magic == index_mark_.magic;
    ::close(fd);
    return is_index;
  }

  // The type of entry `name` of the directory `dfd` from its lstat (for a file system that
  // gives none in the listing): DT_DIR, DT_REG, DT_LNK or DT_FIFO (anything else), or
  // DT_UNKNOWN if it cannot be looked at (reported).
  unsigned char TypeOf(int dfd, const std::string& name, const std::string& rel) const {
    struct stat st;
    if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      int err = errno;
      on_skip_(rel, err == ENOENT ? SkipReason::kVanished : SkipReason::kUnreadable,
               std::strerror(err));
      return DT_UNKNOWN;
    }
    return S_ISDIR(st.st_mode)   ? DT_DIR
           : S_ISREG(st.st_mode) ? DT_REG
           : S_ISLNK(st.st_mode) ? DT_LNK
                                 : DT_FIFO;
  }

  // Whether the entry `rel` (named `name`, of `type`) is indexed (a regular file) or entered (a
  // directory), under the directory's ignore rules `rules` (null: none); reports it if not.
  bool Keep(const std::string& rel, const std::string& name, unsigned char type,
            const DirectoryRules* rules) const {
    if (name == ".bitsift") {
      on_skip_(rel, SkipReason::kIndexFile, "");
      return false;
    }
    if (name == ".git") {
      on_skip_(rel, SkipReason::kHidden, "");
      return false;
    }
    const bool is_dir = type == DT_DIR;
    if (exclude_(rel)) {
      on_skip_(rel, SkipReason::kIndexFile, "");
      return false;
    }
    IgnoreMatch glob = overrides_.empty() ? IgnoreMatch::kNone : overrides_.Match(rel, is_dir);
    if (glob == IgnoreMatch::kIgnore) {
      on_skip_(rel, SkipReason::kIgnored, "--glob");
      return false;
    }
    if (glob == IgnoreMatch::kNone) {  // a glob's choice overrides ignore files and --hidden
      IgnoreMatch m = rules ? rules->Match(rel, is_dir) : IgnoreMatch::kNone;
      if (m == IgnoreMatch::kIgnore) {
        on_skip_(rel, SkipReason::kIgnored, "");
        return false;
      }
      if (name[0] == '.' && !options_.hidden && m != IgnoreMatch::kWhitelist) {
        on_skip_(rel, SkipReason::kHidden, "");
        return false;
      }
    }
    if (is_dir || type == DT_REG) return true;
    on_skip_(rel, type == DT_LNK ? SkipReason::kSymlink : SkipReason::kSpecial, "");
    return false;
  }

  const std::string& root_;
  const std::string& root_abs_;
  const DocumentOptions& options_;
  const IndexMark& index_mark_;
  const GlobOverrides overrides_;
  const std::function<bool(const std::string&)>& exclude_;
  const SkipCallback& on_skip_;
};

}  // namespace

std::vector<std::string> WalkDirectory(const std::string& root, const DocumentOptions& options,
                                       const IndexMark& index_mark,
                                       const std::function<bool(const std::string&)>& exclude,
                                       const SkipCallback& on_skip) {
  options.Validate();
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    int err = errno;
    throw Error(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                ErrnoMessage(AbsoluteForMessage(root), "cannot index", err));
  }
  Ensure(S_ISDIR(st.st_mode), ErrorKind::kInvalidArgument, root + ": not a directory");
  char* resolved = ::realpath(root.c_str(), nullptr);
  const std::string root_abs = resolved != nullptr ? resolved : root;
  std::free(resolved);
  const DirectoryLister lister(root, root_abs, options, index_mark, exclude, on_skip);
  std::vector<std::string> files;
  std::vector<Frame> stack(1);  // depth-first: memory proportional to depth times fan-out
  if (!lister.List("", options.no_ignore ? nullptr : DirectoryRules::ForAncestors(root_abs),
                   &stack[0]))
    stack.clear();
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next == top.entries.size()) {
      stack.pop_back();
      continue;
    }
    auto& [name, is_dir] = top.entries[top.next++];
    std::string rel = Join(top.dir, name);
    if (!is_dir) {
      // Another shard's file is not this index's document, nor a skip to report.
      if (options.shard_count == 0 || ShardOfPath(rel, options.shard_count) == options.shard) {
        files.push_back(std::move(rel));
      }
      continue;
    }
    Frame child;
    const std::shared_ptr<const DirectoryRules> rules = top.rules;  // (top moves as stack grows)
    if (lister.List(rel, rules, &child)) stack.push_back(std::move(child));
  }
  // The order above is the byte order; a sort only if it were not (it costs no comparison
  // beyond one pass when it is).
  if (!std::is_sorted(files.begin(), files.end())) std::sort(files.begin(), files.end());
  return files;
}

namespace {

// The last step of the stage: the text on to the caller's sink, counted.
class CountingStage : public ByteSink {
 public:
  explicit CountingStage(ByteSink& next) : next_(next) {}
  void Write(std::string_view text) override {
    next_.Write(text);
    bytes_ += text.size();
  }
  void Close() override { next_.Close(); }
  uint64_t bytes() const { return bytes_; }

 private:
  ByteSink& next_;
  uint64_t bytes_ = 0;
};

// Text that goes nowhere (ProbeDocumentFile needs only the stage's verdict).
class DiscardStage : public ByteSink {
 public:
  void Write(std::string_view) override {}
  void Close() override {}
};

// Streams root/relative_path through the stage: [decompress] -> decode -> [HTML | man] ->
// `text`, or [decompress] -> PDF -> `text`. With read_limit > 0, stops after that many bytes of
// the file without closing the stage (the verdict on what was read). Fills *facts except size,
// and *origins (if not null) once the whole file is read. Returns kCount or why it is skipped.
SkipReason FeedStage(const std::string& root, const std::string& relative_path,
                     uint64_t max_file_size, const DocumentOptions& options, ByteSink& text,
                     uint64_t read_limit, FileFacts* facts, std::string* detail,
                     LineOrigins* origins = nullptr) {
  // O_NONBLOCK: if the entry was replaced by a FIFO since listing, open must not wait.
  Fd fd(OpenUnder(root, relative_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    int err = errno;
    *detail = std::strerror(err);
    if (err == ENOENT) return SkipReason::kVanished;
    if (err == ELOOP) return SkipReason::kSymlink;
    return SkipReason::kUnreadable;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    *detail = std::strerror(errno);
    return SkipReason::kUnreadable;
  }
  if (!S_ISREG(st.st_mode)) return SkipReason::kSpecial;
  if (static_cast<uint64_t>(st.st_size) > max_file_size) {
    *detail = std::to_string(st.st_size) + " bytes";
    return SkipReason::kTooLarge;
  }
  facts->mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  facts->ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  facts->inode = static_cast<uint64_t>(st.st_ino);
  facts->file_size = static_cast<uint64_t>(st.st_size);

  // The stage, built back to front.
  std::string_view inner;
  const Compression compression = CompressionOfName(relative_path, &inner);
  const bool pdf = options.read_pdf && IsPdfName(inner);
  const bool html = !pdf && IsHtmlName(inner);
  // A page's folder (man1/) counts even when it is the tree's root: a tree indexed from man1/
  // itself, or one file read by its path, reads as a tree above it does.
  std::string with_folder;
  if (inner.find('/') == std::string_view::npos) {
    std::string_view folder = root;
    while (folder.size() > 1 && folder.back() == '/') folder.remove_suffix(1);
    folder.remove_prefix(folder.rfind('/') == std::string_view::npos ? 0 : folder.rfind('/') + 1);
    with_folder.append(folder).append("/").append(inner);
  }
  const bool man = !pdf && !html && options.read_man &&
                   IsManPageName(with_folder.empty() ? inner : std::string_view(with_folder));
  std::vector<uint32_t> source_lines;
  std::vector<uint32_t>* lines = origins != nullptr ? &source_lines : nullptr;
  std::optional<HtmlToText> html_stage;
  std::optional<RoffToText> roff_stage;
  std::optional<PdfToText> pdf_stage;
  std::optional<Decoder> decoder;
  ByteSink* head = &text;
  if (pdf) {
    head = &pdf_stage.emplace(text, options.max_decompressed_bytes);
  } else {
    ByteSink* text_out = &text;
    if (html) text_out = &html_stage.emplace(text, lines);
    if (man) text_out = &roff_stage.emplace(text, lines);
    head = &decoder.emplace(options.encoding, html, *text_out);
  }
  std::unique_ptr<Decompressor> decompressor;
  if (compression != Compression::kNone) {
    decompressor = Decompressor::Create(compression, options.max_decompressed_bytes, *head);
    head = decompressor.get();
  }
  // The format as read: the compression, then the kind (a man page's is known once read).
  auto format_of = [&]() {
    std::string f = compression == Compression::kNone
                        ? std::string()
                        : std::string(CompressionName(compression)) + "+";
    return f + (pdf ? "pdf" : html ? "html" : man && roff_stage->is_roff() ? "man" : "text");
  };
  facts->format = format_of();

  // One read buffer per thread: allocating (and zeroing) 1 MiB per small file was measurable.
  thread_local std::string buffer(kReadBytes, '\0');
  uint64_t total = 0;
  try {
    for (;;) {
      ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        *detail = std::strerror(errno);
        return SkipReason::kUnreadable;
      }
      if (n == 0) break;
      total += static_cast<uint64_t>(n);
      if (total > max_file_size) {
        *detail = "grew past the size limit while being read";
        return SkipReason::kTooLarge;
      }
      head->Write(std::string_view(buffer.data(), static_cast<size_t>(n)));
      if (read_limit != 0 && total >= read_limit) return SkipReason::kCount;
    }
    head->Close();
  } catch (const SkipDocument& skip) {
    *detail = skip.what();
    return skip.reason();
  }
  facts->encoding = decoder ? decoder->encoding() : std::string("UTF-8");
  facts->format = format_of();
  if (origins != nullptr) {
    origins->source_lines.swap(source_lines);
    origins->paged = pdf;
  }
  return SkipReason::kCount;
}

}  // namespace

SkipReason ProbeDocumentFile(const std::string& root, const std::string& relative_path,
                             uint64_t max_file_size, const DocumentOptions& options,
                             std::string* detail) {
  // The decoder decides after kProbeBytes and checks the first kBinaryProbeBytes of decoded
  // text (at most 4 bytes each): reading that much settles what decoding can decide.
  constexpr uint64_t kProbeReadBytes = kProbeBytes + 4 * kBinaryProbeBytes;
  DiscardStage discard;
  FileFacts facts;
  return FeedStage(root, relative_path, max_file_size, options, discard, kProbeReadBytes, &facts,
                   detail);
}

SkipReason ReadDocumentText(const std::string& root, const std::string& relative_path,
                            uint64_t max_file_size, const DocumentOptions& options,
                            std::string* text, FileFacts* facts, std::string* detail,
                            LineOrigins* origins) {
  // The text goes into *text's own buffer: a caller that reads many files through one string
  // reuses its memory (pages new to the process cost 10-20 us each to touch where a first touch
  // traps to the hypervisor).
  StringSink sink;
  sink.text.swap(*text);
  sink.text.clear();
  SkipReason r =
      FeedStage(root, relative_path, max_file_size, options, sink, 0, facts, detail, origins);
  facts->size = sink.text.size();
  text->swap(sink.text);
  if (r != SkipReason::kCount) text->clear();
  return r;
}

SkipReason ReadDocumentFile(const std::string& root, const std::string& relative_path,
                            uint64_t max_file_size, const DocumentOptions& options, ByteSink& text,
                            FileFacts* facts, std::string* detail) {
  CountingStage counted(text);
  SkipReason r = FeedStage(root, relative_path, max_file_size, options, counted, 0, facts, detail);
  facts->size = counted.bytes();
  return r;
}

}  // namespace bitsift::documents
