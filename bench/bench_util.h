// What the bench/ programs share: reading a whole file, and their one-argument command line.
#ifndef BITSIFT_BENCH_BENCH_UTIL_H_
#define BITSIFT_BENCH_BENCH_UTIL_H_

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace bitsift::bench {

// The bytes of the file at `path` (empty if it cannot be read).
inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// argv[1 .. args] if the program got exactly `args` arguments; otherwise prints `usage` and
// returns false.
inline bool Arguments(int argc, int args, const char* usage) {
  if (argc == args + 1) return true;
  std::fprintf(stderr, "usage: %s\n", usage);
  return false;
}

}  // namespace bitsift::bench

#endif  // BITSIFT_BENCH_BENCH_UTIL_H_
