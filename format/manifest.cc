#include "format/manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "format/index_format.h"
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
  uint32_t U32() {
    uint32_t v;
    Need(4);
    std::memcpy(&v, bytes_.data() + pos_, 4);
    pos_ += 4;
    return v;
  }
  uint64_t U64() {
    uint64_t v;
    Need(8);
    std::memcpy(&v, bytes_.data() + pos_, 8);
    pos_ += 8;
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
    throw Error(ErrorKind::kCorrupt, path_ + ": damaged index manifest: " + what +
                                         "; rebuild the index with 'bitsift index --rebuild DIR'");
  }

 private:
  std::string_view bytes_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t Manifest::live_documents() const {
  uint64_t n = 0;
  for (const ManifestSegment& s : segments) n += s.doc_count - s.deleted.size();
  return n;
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
    std::string gaps;
    uint32_t prev = 0;
    for (size_t i = 0; i < s.deleted.size(); ++i) {
      PutVarint(i == 0 ? s.deleted[i] : s.deleted[i] - prev - 1, gaps);
      prev = s.deleted[i];
    }
    PutU64(gaps.size(), out);
    out += gaps;
  }
  PutU64(Checksum(out.data(), out.size()), out);
  return out;
}

Manifest DecodeManifest(std::string_view bytes, const std::string& path) {
  Reader r(bytes, path);
  if (bytes.size() < sizeof(kManifestMagic) + 8 ||
      std::memcmp(bytes.data(), kManifestMagic, sizeof(kManifestMagic)) != 0) {
    r.Fail("not a bitsift manifest");
  }
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (Checksum(bytes.data(), bytes.size() - 8) != stored) r.Fail("checksum mismatch");
  r.Bytes(sizeof(kManifestMagic));
  uint32_t version = r.U32();
  if (version != kManifestVersion) {
    throw Error(ErrorKind::kCorrupt, path + ": manifest version " + std::to_string(version) +
                                         " is not supported by this bitsift (version " +
                                         std::to_string(kManifestVersion) + ")");
  }
  r.U32();
  Manifest m;
  m.generation = r.U64();
  m.next_segment = r.U64();
  uint32_t settings = r.U32();
  for (uint32_t i = 0; i < settings; ++i) {
    std::string key(r.Bytes(r.U32()));
    m.settings[key] = std::string(r.Bytes(r.U32()));
  }
  uint32_t segments = r.U32();
  for (uint32_t i = 0; i < segments; ++i) {
    ManifestSegment s;
    s.number = r.U64();
    s.doc_count = r.U64();
    s.file_size = r.U64();
    uint64_t deleted = r.U64();
    std::string_view gaps = r.Bytes(r.U64());
    if (s.number >= m.next_segment) r.Fail("segment number out of range");
    if (deleted > s.doc_count) r.Fail("more deletions than documents");
    s.deleted.reserve(deleted);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(gaps.data());
    const uint8_t* end = p + gaps.size();
    uint64_t next = 0;
    for (uint64_t d = 0; d < deleted; ++d) {
      uint64_t gap;
      if (!GetVarint(&p, end, &gap)) r.Fail("deletions truncated");
      uint64_t id = next + gap;
      if (id >= s.doc_count) r.Fail("deleted document id out of range");
      s.deleted.push_back(static_cast<uint32_t>(id));
      next = id + 1;
    }
    if (p != end) r.Fail("deletions have trailing bytes");
    m.segments.push_back(std::move(s));
  }
  if (r.pos() != bytes.size() - 8) r.Fail("trailing bytes");
  return m;
}

Manifest ReadManifest(const std::string& index_dir) {
  struct stat st;
  if (::stat(index_dir.c_str(), &st) != 0) {
    throw Error(errno == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                ErrnoMessage(index_dir, "cannot open index", errno));
  }
  if (S_ISREG(st.st_mode)) {
    throw Error(ErrorKind::kCorrupt,
                index_dir +
                    ": an index of bitsift 0.1 (one file); this version keeps an index "
                    "as a directory: rebuild it with 'bitsift index --rebuild DIR'");
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error(ErrorKind::kCorrupt, index_dir + ": not a bitsift index directory");
  }
  const std::string path = index_dir + "/" + kManifestName;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    throw Error(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                err == ENOENT ? index_dir + ": not a bitsift index (no " + kManifestName + ")"
                              : ErrnoMessage(path, "cannot open", err));
  }
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw Error(ErrorKind::kIo, ErrnoMessage(path, "cannot read", err));
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return DecodeManifest(bytes, path);
}

void WriteManifest(const std::string& index_dir, const Manifest& manifest) {
  std::string bytes = EncodeManifest(manifest);
  AtomicFileWriter w(index_dir + "/" + kManifestName);
  w.Append(bytes.data(), bytes.size());
  w.Commit();
}

}  // namespace bitsift::format
