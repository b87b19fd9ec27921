// lstat_paths: the time one process takes to lstat a list of paths, the check a query makes of
// every printed hit (bitsift's stale-hit check, util::LookAtFiles), on its own.
//
// usage: lstat_paths FILE [THREADS]
//   FILE: paths each ended by a NUL byte (`bitsift query -0`), relative to the current directory
//   THREADS: 1 (default) or 2; the second thread is started first thing, before FILE is read,
//            and polls until the loop starts (the best a query's helper thread could do)
// Prints one JSON object: {"paths": N, "found": F, "lstat_us": T}, T the wall time of the loop
// alone (the paths are read into memory first). bench/stat-floor adds it to a `--count`
// process's time: the least a one-shot query printing those paths can take with the check.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// lstat's paths[begin, end); returns how many exist.
size_t LstatAll(const std::vector<std::string>& paths, size_t begin, size_t end) {
  size_t found = 0;
  struct stat st;
  for (size_t i = begin; i < end; ++i) found += ::lstat(paths[i].c_str(), &st) == 0 ? 1 : 0;
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: lstat_paths FILE [THREADS]\n");
    return 2;
  }
  const int threads = argc == 3 ? std::atoi(argv[2]) : 1;
  if (threads != 1 && threads != 2) {
    std::fprintf(stderr, "lstat_paths: THREADS is 1 or 2, not %s\n", argv[2]);
    return 2;
  }
  std::vector<std::string> paths;
  std::atomic<bool> go{false};
  std::atomic<size_t> helper_found{0};
  std::thread helper;
  if (threads == 2) {
    helper = std::thread([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      helper_found = LstatAll(paths, paths.size() / 2, paths.size());
    });
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "lstat_paths: cannot open %s\n", argv[1]);
    go = true;
    if (helper.joinable()) helper.join();
    return 1;
  }
  for (std::string line; std::getline(in, line, '\0');) {
    if (!line.empty()) paths.push_back(line);
  }
  const auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  size_t found = LstatAll(paths, 0, threads == 2 ? paths.size() / 2 : paths.size());
  if (helper.joinable()) helper.join();
  found += helper_found;
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"paths\": %zu, \"found\": %zu, \"lstat_us\": %.1f}\n", paths.size(), found, us);
  return 0;
}
