// The child process of fault_injection_test.cc's kill -9 walk: runs one operation on an index
// with the N-th call that changes the disk replaced by SIGKILL (storage/file_system.h).
// Usage: bitsift_fault_child build|update|compact|build-spill|update-merge TREE INDEX N, with
// the options of the test's walk of that name. Exits 0 when the operation succeeded (N past its
// last call), 1 when it failed, 2 on bad arguments.
#include <bitsift/bitsift.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "storage/file_system.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s build|update|compact|build-spill|update-merge TREE INDEX N\n",
                 argv[0]);
    return 2;
  }
  const std::string op = argv[1], tree = argv[2], index = argv[3];
  bitsift::IndexOptions options;
  options.threads = 2;
  options.merge = false;
  if (op == "build-spill") {
    options.threads = 1;
    options.memory_budget = 64 << 10;  // (kSpillBudget)
  }
  if (op == "update-merge") {
    options.threads = 1;
    options.merge = true;
  }
  bitsift::storage::FaultInjection::Arm(std::strtoull(argv[4], nullptr, 10),
                                        bitsift::storage::Fault::kKill);
  bitsift::Status s;
  if (op == "build" || op == "update" || op == "build-spill" || op == "update-merge") {
    s = bitsift::BuildIndex(tree, index, options);
  } else if (op == "compact") {
    s = bitsift::CompactIndex(index, options);
  } else {
    return 2;
  }
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
  return s.ok() ? 0 : 1;
}
