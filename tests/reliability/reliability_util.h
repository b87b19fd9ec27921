// Helpers for the reliability tests: forging checksums after a deliberate mutation, running the
// `bitsift` program as a child process with its exit status, output and peak memory.
#ifndef BITSIFT_TESTS_RELIABILITY_RELIABILITY_UTIL_H_
#define BITSIFT_TESTS_RELIABILITY_RELIABILITY_UTIL_H_

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "format/index_format.h"
#include "format/manifest.h"
#include "reseal.h"
#include "test_util.h"

namespace bitsift::testing {

// Where section `id` of a well-formed image lies: {offset, length}.
inline std::pair<uint64_t, uint64_t> SectionSpan(const std::string& image, format::SectionId id) {
  format::FileHeader h;
  std::memcpy(&h, image.data(), sizeof(h));
  // The table is in file order (format::kSectionOrder), not id order.
  for (uint32_t i = 0; i < h.section_count; ++i) {
    format::SectionEntry e;
    std::memcpy(&e, image.data() + h.section_table_offset + i * sizeof(format::SectionEntry),
                sizeof(e));
    if (e.id == static_cast<uint32_t>(id)) return {e.offset, e.length};
  }
  return {0, 0};
}

struct ProcessResult {
  int exit_code = -1;  // -1 if killed by a signal
  int signal = 0;      // the signal that ended it, if any
  std::string out, err;
  long max_rss_kb = 0;  // peak resident set of the child
};

// Runs argv (argv[0] is a path) with stdin from /dev/null and returns its status, output and
// peak memory (wait4's rusage of that one child).
inline ProcessResult RunProcess(const std::vector<std::string>& argv) {
  TempDir io;
  const std::string out_path = io / "out", err_path = io / "err";
  ProcessResult r;
  // Everything the child needs is prepared before fork: only async-signal-safe calls follow.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.max_rss_kb = usage.ru_maxrss;
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

// The bytes of the one segment file of the index directory `index_dir`.
inline std::string SegmentImage(const std::string& index_dir) {
  return ReadFile(OnlySegment(index_dir));
}

// Makes `bad` a copy of the one-segment index directory `good` whose segment file holds
// `image` instead; the MANIFEST records the image's size, so it is the segment reader that
// meets the damage.
inline void WriteIndexWithSegment(const std::string& good, const std::string& bad,
                                  const std::string& image) {
  std::filesystem::remove_all(bad);
  std::filesystem::copy(good, bad, std::filesystem::copy_options::recursive);
  const std::string segment = OnlySegment(bad);
  WriteFile(segment, image);
  format::Manifest m = format::ReadManifest(bad);
  m.segments.at(0).file_size = image.size();
  WriteFile(bad + "/" + format::kManifestName, format::EncodeManifest(m));
}

// The path of the `bitsift` program under test.
inline std::string BitsiftProgram() { return BITSIFT_CLI; }

// Concatenates strings and integers (GCC 12 warns falsely, -Wrestrict, on "literal" +
// std::to_string(n) at -O3).
inline void AppendPart(std::string& out, std::string_view part) { out.append(part); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
inline void AppendPart(std::string& out, T n) {
  out += std::to_string(n);
}
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (AppendPart(out, parts), ...);
  return out;
}

// A positive integer from the environment, or `fallback`.
inline uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

}  // namespace bitsift::testing

#endif  // BITSIFT_TESTS_RELIABILITY_RELIABILITY_UTIL_H_
