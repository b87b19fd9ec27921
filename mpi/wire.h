// The bytes ranks send each other: a little-endian-agnostic (same machine type on every rank)
// append-and-read buffer of integers, doubles and strings, and the collectives that move such
// buffers (MPI_Bcast of one, MPI_Gatherv of one per rank).
#ifndef BITSIFT_MPI_WIRE_H_
#define BITSIFT_MPI_WIRE_H_

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace bitsift::mpi {

// Usage: (Put*)* then send bytes(); on the other side a Reader over them, (Get*)* in the same
// order. Not thread-safe.
class Writer {
 public:
  void PutU64(uint64_t v) { Raw(&v, sizeof v); }
  void PutDouble(double v) { Raw(&v, sizeof v); }
  void PutString(const std::string& s) {
    PutU64(s.size());
    bytes_.append(s);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  void Raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

// Throws std::runtime_error if it reads past the end (a message cut short: a bug, never data).
class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  uint64_t GetU64() {
    uint64_t v;
    Raw(&v, sizeof v);
    return v;
  }
  double GetDouble() {
    double v;
    Raw(&v, sizeof v);
    return v;
  }
  std::string GetString() {
    const uint64_t n = GetU64();
    Need(n);
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }

 private:
  void Need(uint64_t n) const {
    if (n > bytes_.size() - at_) throw std::runtime_error("bitsift-mpi: a message cut short");
  }
  void Raw(void* p, size_t n) {
    Need(n);
    std::memcpy(p, bytes_.data() + at_, n);
    at_ += n;
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

// Rank `root`'s *bytes on every rank (collective).
inline void BroadcastBytes(std::string* bytes, int root, MPI_Comm comm) {
  uint64_t n = bytes->size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, root, comm);
  bytes->resize(n);
  if (n > 0) MPI_Bcast(bytes->data(), static_cast<int>(n), MPI_BYTE, root, comm);
}

// Every rank's `mine`, in rank order, on rank `root` (elsewhere: empty). Collective. A rank's
// bytes must fit in an int (2 GiB): an answer is ids and scores, 12 bytes a document.
inline std::vector<std::string> GatherBytes(const std::string& mine, int root, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(mine.size());
  std::vector<int> sizes(rank == root ? size : 0);
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, root, comm);
  std::vector<int> offsets(sizes.size(), 0);
  std::string all;
  if (rank == root) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[r] = total;
      total += sizes[r];
    }
    all.resize(total);
  }
  MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, root,
              comm);
  std::vector<std::string> out;
  for (size_t r = 0; r < sizes.size(); ++r) out.push_back(all.substr(offsets[r], sizes[r]));
  return out;
}

}  // namespace bitsift::mpi

#endif  // BITSIFT_MPI_WIRE_H_
