// membw: STREAM-like single-thread memory READ bandwidth probe.
//
// Reads a large buffer (default 1 GiB, well beyond any cache) sequentially, several passes,
// summing 64-bit words into independent accumulators so the loop is bound by memory, not by a
// dependency chain. Reports the best pass and the median pass in GB/s (1 GB = 1e9 bytes).
//
// usage: membw [MiB] [passes]      prints one JSON object on stdout
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static std::uint64_t read_pass(const std::uint64_t* p, std::size_t n) {
  std::uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a0 += p[i];
    a1 += p[i + 1];
    a2 += p[i + 2];
    a3 += p[i + 3];
    a4 += p[i + 4];
    a5 += p[i + 5];
    a6 += p[i + 6];
    a7 += p[i + 7];
  }
  for (; i < n; ++i) a0 += p[i];
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

int main(int argc, char** argv) {
  std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  int passes = argc > 2 ? std::atoi(argv[2]) : 7;
  if (mib == 0 || passes <= 0) {
    std::fprintf(stderr, "usage: membw [MiB>0] [passes>0]\n");
    return 2;
  }
  std::size_t bytes = mib << 20, n = bytes / sizeof(std::uint64_t);
  std::uint64_t* buf = static_cast<std::uint64_t*>(std::aligned_alloc(64, bytes));
  if (!buf) {
    std::perror("aligned_alloc");
    return 2;
  }
  for (std::size_t i = 0; i < n; ++i) buf[i] = i * 0x9E3779B97F4A7C15ull;  // touch every page
  std::vector<double> gbps;
  volatile std::uint64_t sink = 0;
  for (int k = 0; k < passes; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    sink = sink + read_pass(buf, n);
    auto t1 = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(t1 - t0).count();
    gbps.push_back(double(bytes) / s / 1e9);
  }
  std::vector<double> sorted = gbps;
  std::sort(sorted.begin(), sorted.end());
  std::printf(
      "{\"buffer_mib\":%zu,\"passes\":%d,\"best_read_GBps\":%.3f,\"median_read_GBps\":%.3f,"
      "\"checksum\":%llu}\n",
      mib, passes, sorted.back(), sorted[sorted.size() / 2], static_cast<unsigned long long>(sink));
  std::free(buf);
  return 0;
}
