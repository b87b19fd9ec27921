// `bitsift check`: verify an index completely.
#include <bitsift/bitsift.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"

namespace bitsift::cli {

int RunCheck(const std::vector<std::string>& args) {
  std::unique_ptr<Index> index;
  if (auto code = ParseAndOpenIndex(args, "usage: bitsift check [--index PATH]", &index)) {
    return *code;
  }
  Status s = index->Check();
  if (!s.ok()) return Fail(s.message());
  std::printf("%s: ok (%s)\n", index->path().c_str(),
              Plural(index->live_document_count(), "document", "documents").c_str());
  return kExitMatch;
}

}  // namespace bitsift::cli
