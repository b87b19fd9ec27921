#include "format/manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>

#include "format/index_format.h"
#include "storage/file_writers.h"
#include "storage/mapped_file.h"
#include "util/error.h"
#include "util/files.h"
#include "util/varint.h"

namespace bitsift::format {
namespace {

void PutU32(uint32_t v, std::string& out) { out.append(reinterpret_cast<const char*>(&v), 4); }
void PutU64(uint64_t v, std::string& out) { out.append(reinterpret_cast<const char*>(&v), 8); }

// Reads fields from the manifest's bytes; every read is bounds-checked.
class Reader {
 public:
  Reader(std::string_view bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  void Need(uint64_t n) const {
    if (n > bytes_.size() - pos_) Fail("truncated");
  }
  // The next field, a little-endian integer of type T (uint32_t, uint64_t).
  template <typename T>
  T Get() {
    static_assert(std::is_integral_v<T>);
    T v;
    Need(sizeof(T));
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string_view Bytes(uint64_t n) {
    Need(n);
    std::string_view v = bytes_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  size_t pos() const { return pos_; }
  [[noreturn]] void Fail(const std::string& what) const {
    throw Error(ErrorKind::kCorrupt, path_ + ": damaged index manifest: " + what);
  }

 private:
  std::string_view bytes_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

void DeletionSet::Free::operator()(uint64_t* p) const { std::free(p); }

DeletionSet::DeletionSet(const DeletionSet& other) { *this = other; }

DeletionSet& DeletionSet::operator=(const DeletionSet& other) {
  if (this == &other) return *this;
  owned_.reset();
  view_owner_ = other.view_owner_;
  bits_ = other.bits_;
  word_count_ = other.word_count_;
  count_ = other.count_;
  if (other.owned_) Own(word_count_);  // a copy of the words, not the same ones
  return *this;
}

DeletionSet& DeletionSet::operator=(DeletionSet&& other) noexcept {
  if (this == &other) return *this;
  owned_ = std::move(other.owned_);
  view_owner_ = std::move(other.view_owner_);
  bits_ = std::exchange(other.bits_, nullptr);
  word_count_ = std::exchange(other.word_count_, 0);
  count_ = std::exchange(other.count_, 0);
  return *this;
}

DeletionSet DeletionSet::View(const uint64_t* words, uint64_t doc_count, uint64_t count,
                              std::shared_ptr<const void> owner) {
  DeletionSet s;
  s.view_owner_ = std::move(owner);
  s.bits_ = words;
  s.word_count_ = (doc_count + 63) / 64;
  s.count_ = count;
  return s;
}

void DeletionSet::Own(uint64_t words) {
  // calloc: a large bitmap comes as fresh zero pages, each faulted in only when touched.
  auto* w = static_cast<uint64_t*>(std::calloc(words != 0 ? words : 1, sizeof(uint64_t)));
  if (w == nullptr) throw std::bad_alloc();
  if (bits_ != nullptr) std::memcpy(w, bits_, std::min(words, word_count_) * sizeof(uint64_t));
  owned_.reset(w);
  view_owner_.reset();
  bits_ = w;
  word_count_ = words;
}

bool DeletionSet::insert(uint32_t id, uint64_t doc_count) {
  if (!owned_) Own((doc_count + 63) / 64);
  uint64_t& w = owned_[id / 64];
  const uint64_t bit = uint64_t{1} << (id % 64);
  if (w & bit) return false;
  w |= bit;
  ++count_;
  return true;
}

uint64_t Manifest::live_documents() const {
  uint64_t n = 0;
  for (const ManifestSegment& s : segments) n += s.doc_count - s.deleted.size();
  return n;
}

namespace {

// The whole of `text` as a number of type T (strtoull/strtod rules, no sign for the whole
// numbers); nullopt otherwise.
template <typename T>
std::optional<T> ParseSetting(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) || text[0] == '-')
    return std::nullopt;
  errno = 0;
  char* end = nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    const double v = std::strtod(text.c_str(), &end);
    if (*end != '\0' || errno == ERANGE) return std::nullopt;
    return v;
  } else {
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE || v > std::numeric_limits<T>::max()) return std::nullopt;
    return static_cast<T>(v);
  }
}

}  // namespace

EngineSettings EngineSettings::From(const std::map<std::string, std::string>& settings) {
  EngineSettings e;
  auto read = [&](const char* key, auto* field) {
    auto it = settings.find(key);
    if (it == settings.end()) return;
    using T = typename std::remove_reference_t<decltype(*field)>::value_type;
    *field = ParseSetting<T>(it->second);
    Ensure(field->has_value(), ErrorKind::kCorrupt,
           std::string("index setting ") + key + ": not a number: " + it->second);
  };
  if (auto it = settings.find("root"); it != settings.end()) e.root = it->second;
  if (auto it = settings.find("root_in_tree"); it != settings.end()) e.in_tree = it->second == "1";
  read("fp_rate", &e.fp_rate);
  read("sparse_max_df", &e.sparse_max_df);
  read("max_file_size", &e.max_file_size);
  if (auto it = settings.find("positions"); it != settings.end()) {
    Ensure(it->second == "none", ErrorKind::kCorrupt,
           "index setting positions: not 'none': " + it->second);
    e.positions = false;
  }
  return e;
}

std::string EngineSettings::RootOf(const std::string& index_dir) const {
  if (!in_tree) return root;
  char* real = ::realpath(index_dir.c_str(), nullptr);
  const std::string dir = real != nullptr ? real : "";
  std::free(real);
  constexpr std::string_view kInTree = "/.bitsift";
  if (dir.size() <= kInTree.size() ||
      std::string_view(dir).substr(dir.size() - kInTree.size()) != kInTree) {
    return root;  // renamed, or copied out of its tree: the tree it was built from
  }
  return DirectoryOf(dir);
}

void EngineSettings::To(std::map<std::string, std::string>* settings) const {
  (*settings)["root"] = root;
  if (in_tree) (*settings)["root_in_tree"].assign(1, '1');
  if (fp_rate) {
    std::ostringstream fp;
    fp.precision(17);
    fp << *fp_rate;
    (*settings)["fp_rate"] = fp.str();
  }
  if (sparse_max_df) (*settings)["sparse_max_df"] = std::to_string(*sparse_max_df);
  if (max_file_size) (*settings)["max_file_size"] = std::to_string(*max_file_size);
  if (!positions) (*settings)["positions"] = "none";
}

std::string SegmentFileName(uint64_t number) {
  char name[40];
  std::snprintf(name, sizeof(name), "seg-%06llu.bsg", static_cast<unsigned long long>(number));
  return name;
}

std::string EncodeManifest(const Manifest& m) {
  std::string out(kManifestMagic, sizeof(kManifestMagic));
  PutU32(kManifestVersion, out);
  PutU32(0, out);
  PutU64(m.generation, out);
  PutU64(m.next_segment, out);
  PutU32(static_cast<uint32_t>(m.settings.size()), out);
  for (const auto& [key, value] : m.settings) {
    PutU32(static_cast<uint32_t>(key.size()), out);
    out += key;
    PutU32(static_cast<uint32_t>(value.size()), out);
    out += value;
  }
  PutU32(static_cast<uint32_t>(m.segments.size()), out);
  for (const ManifestSegment& s : m.segments) {
    PutU64(s.number, out);
    PutU64(s.doc_count, out);
    PutU64(s.file_size, out);
    PutU64(s.deleted.size(), out);
    // A bitmap from one deletion in 64 documents on: its bytes are then at most 8 a deletion,
    // read in place, where gaps (about a byte each) cost a reader ~3 ns each to decode and a
    // bitmap of fresh pages to decode into.
    const bool bitmap = s.deleted.size() * 64 >= s.doc_count && !s.deleted.empty();
    std::string payload;
    if (bitmap) {
      payload.assign(reinterpret_cast<const char*>(s.deleted.bits()),
                     s.deleted.word_count() * sizeof(uint64_t));
    } else {
      uint64_t next = 0;  // the smallest id the next one may be
      s.deleted.ForEach([&](uint32_t id) {
        PutVarint(id - next, payload);
        next = uint64_t{id} + 1;
      });
    }
    PutU64(payload.size(), out);
    PutU32(bitmap ? kDeletionsAsBitmap : kDeletionsAsGaps, out);
    const size_t padding = (8 - (out.size() + 4) % 8) % 8;  // the payload 8-byte aligned
    PutU32(static_cast<uint32_t>(padding), out);
    out.append(padding, '\0');
    out += payload;
  }
  PutU64(Checksum(out.data(), out.size()), out);
  return out;
}

namespace {

// Decodes deletions as LEB128 gaps into *set (ids below doc_count).
void DecodeGaps(const Reader& r, std::string_view gaps, uint64_t deleted, uint64_t doc_count,
                DeletionSet* set) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(gaps.data());
  const uint8_t* end = p + gaps.size();
  uint64_t next = 0;
  for (uint64_t d = 0; d < deleted; ++d) {
    uint64_t gap;
    if (!GetVarint(&p, end, &gap)) r.Fail("deletions truncated");
    if (gap >= doc_count - next) r.Fail("deleted document id out of range");
    const uint64_t id = next + gap;  // gaps are >= 0: ids ascend strictly
    set->insert(static_cast<uint32_t>(id), doc_count);
    next = id + 1;
  }
  if (p != end) r.Fail("deletions have trailing bytes");
}

// Checks deletions as a bitmap and views it in place (owner given, words aligned) or copies it.
DeletionSet DecodeBitmap(const Reader& r, std::string_view bytes, uint64_t deleted,
                         uint64_t doc_count, const std::shared_ptr<const void>& owner) {
  const uint64_t words = (doc_count + 63) / 64;
  if (bytes.size() != words * sizeof(uint64_t)) r.Fail("deletion bitmap of the wrong size");
  uint64_t set = 0, last = 0;
  for (uint64_t i = 0; i < words; ++i) {
    std::memcpy(&last, bytes.data() + i * sizeof(uint64_t), sizeof(uint64_t));
    set += static_cast<uint64_t>(__builtin_popcountll(last));
  }
  if (doc_count % 64 != 0 && (last >> (doc_count % 64)) != 0)
    r.Fail("deleted document id out of range");
  if (set != deleted) r.Fail("deletion bitmap does not hold its count");
  if (deleted == 0) return DeletionSet();
  if (owner != nullptr && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) == 0) {
    return DeletionSet::View(reinterpret_cast<const uint64_t*>(bytes.data()), doc_count, deleted,
                             owner);
  }
  DeletionSet copy;
  for (uint64_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i * sizeof(uint64_t), sizeof(uint64_t));
    for (; w != 0; w &= w - 1)
      copy.insert(static_cast<uint32_t>(i * 64 + static_cast<unsigned>(__builtin_ctzll(w))),
                  doc_count);
  }
  return copy;
}

}  // namespace

Manifest DecodeManifest(std::string_view bytes, const std::string& path,
                        std::shared_ptr<const void> owner) {
  Reader r(bytes, path);
  if (bytes.size() < sizeof(kManifestMagic) + 8 ||
      std::memcmp(bytes.data(), kManifestMagic, sizeof(kManifestMagic)) != 0) {
    r.Fail("not a bitsift manifest");
  }
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (Checksum(bytes.data(), bytes.size() - 8) != stored) r.Fail("checksum mismatch");
  r.Bytes(sizeof(kManifestMagic));
  uint32_t version = r.Get<uint32_t>();
  if (version != kManifestVersion && version != 1) {
    throw Error(ErrorKind::kCorrupt, path + ": manifest version " + std::to_string(version) +
                                         " is not supported by this bitsift (version " +
                                         std::to_string(kManifestVersion) + ")");
  }
  r.Get<uint32_t>();
  Manifest m;
  m.generation = r.Get<uint64_t>();
  m.next_segment = r.Get<uint64_t>();
  uint32_t settings = r.Get<uint32_t>();
  for (uint32_t i = 0; i < settings; ++i) {
    std::string key(r.Bytes(r.Get<uint32_t>()));
    m.settings[key] = std::string(r.Bytes(r.Get<uint32_t>()));
  }
  uint32_t segments = r.Get<uint32_t>();
  for (uint32_t i = 0; i < segments; ++i) {
    ManifestSegment s;
    s.number = r.Get<uint64_t>();
    s.doc_count = r.Get<uint64_t>();
    s.file_size = r.Get<uint64_t>();
    const uint64_t deleted = r.Get<uint64_t>();
    const uint64_t payload = r.Get<uint64_t>();
    uint32_t form = kDeletionsAsGaps;
    if (version >= 2) {
      form = r.Get<uint32_t>();
      const uint32_t padding = r.Get<uint32_t>();
      if (padding >= 8) r.Fail("bad padding");
      for (char c : r.Bytes(padding)) {
        if (c != 0) r.Fail("bad padding");
      }
    }
    const std::string_view deletions = r.Bytes(payload);
    if (s.number >= m.next_segment) r.Fail("segment number out of range");
    if (s.doc_count > UINT32_MAX) r.Fail("document count out of range");
    if (deleted > s.doc_count) r.Fail("more deletions than documents");
    if (form == kDeletionsAsGaps) {
      DecodeGaps(r, deletions, deleted, s.doc_count, &s.deleted);
    } else if (form == kDeletionsAsBitmap) {
      s.deleted = DecodeBitmap(r, deletions, deleted, s.doc_count, owner);
    } else {
      r.Fail("unknown form of deletions");
    }
    m.segments.push_back(std::move(s));
  }
  if (r.pos() != bytes.size() - 8) r.Fail("trailing bytes");
  return m;
}

Manifest ReadManifest(const std::string& index_dir) {
  struct stat st;
  if (::stat(index_dir.c_str(), &st) != 0) {
    const int err = errno;
    throw Error(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                err == ENOENT ? index_dir + ": no bitsift index there (no directory " +
                                    AbsoluteForMessage(index_dir) +
                                    "; 'bitsift index DIR --index PATH' creates one)"
                              : ErrnoMessage(index_dir, "cannot open index", err));
  }
  if (S_ISREG(st.st_mode)) {
    // A 0.1 index was one file beginning with the segment files' magic.
    char magic[sizeof(kMagic)] = {};
    int fd = ::open(index_dir.c_str(), O_RDONLY | O_CLOEXEC);
    const bool old_index = fd >= 0 && ::read(fd, magic, sizeof(magic)) == sizeof(magic) &&
                           std::memcmp(magic, kMagic, sizeof(kMagic)) == 0;
    if (fd >= 0) ::close(fd);
    Ensure(old_index, ErrorKind::kInvalidArgument,
           index_dir +
               ": a file, not a bitsift index (an index is the directory that "
               "'bitsift index' writes, DIR/.bitsift by default)");
    throw Error(ErrorKind::kCorrupt,
                index_dir +
                    ": an index of bitsift 0.1 (one file); this version keeps an index "
                    "as a directory");
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error(ErrorKind::kCorrupt, index_dir + ": not a bitsift index directory");
  }
  const std::string path = index_dir + "/" + kManifestName;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    throw Error(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                err == ENOENT
                    ? index_dir + ": not a bitsift index (no " + AbsoluteForMessage(path) + ")"
                    : ErrnoMessage(path, "cannot open", err));
  }
  // Mapped, not read: a dense deletion bitmap is then used in place, and the pages of the file
  // (112 KB on linux-paras after a 10% update) come by fault-around, 16 at a time, instead of
  // being copied into fresh ones.
  std::shared_ptr<storage::MappedFile> mapping;
  try {
    mapping = std::make_shared<storage::MappedFile>(storage::MappedFile::OfDescriptor(fd, path));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return DecodeManifest(
      std::string_view(reinterpret_cast<const char*>(mapping->data()), mapping->size()), path,
      mapping);
}

Manifest OpenManifestSegments(const std::string& index_dir,
                              const std::function<void(Manifest&)>& open) {
  for (int attempt = 1;; ++attempt) {
    Manifest manifest = ReadManifest(index_dir);
    try {
      open(manifest);
      return manifest;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kNotFound) throw;
      if (attempt == kOpenAttempts) {
        // Not a writer's commit: a segment the manifest names is gone.
        throw Error(ErrorKind::kCorrupt,
                    std::string(e.what()) + " (a segment the index manifest names)");
      }
    }
  }
}

void WriteManifest(const std::string& index_dir, const Manifest& manifest) {
  std::string bytes = EncodeManifest(manifest);
  storage::AtomicFileWriter w(index_dir + "/" + kManifestName);
  w.Append(bytes.data(), bytes.size());
  w.Commit();
}

}  // namespace bitsift::format
