// `bitsift status`: compare an index with its tree.
#include <bitsift/bitsift.h>

#include <cinttypes>
#include <cstdio>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"

namespace bitsift::cli {

int RunStatus(const std::vector<std::string>& args) {
  const char* usage = "usage: bitsift status [--index PATH] [--verbose]";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")("verbose,v",
                                                    "list the added, changed and removed paths");
  AddIndexFlag(visible, IndexFlag::kOne);
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, visible, pos, vm)) return *code;
  std::string path;
  if (Status s = IndexPathOption(vm, &path); !s.ok()) return Fail(s.message());
  TreeStatus st;
  Status s = CompareWithTree(path, &st);
  if (!s.ok()) return Fail(s.message());
  const uint64_t behind = st.added.size() + st.changed.size() + st.removed.size();
  std::printf("index %s of %s: %s\n", path.c_str(), st.root.c_str(),
              Plural(st.documents, "document", "documents").c_str());
  if (behind == 0) {
    std::printf("up to date: %s unchanged\n", Plural(st.unchanged, "file", "files").c_str());
    return kExitMatch;
  }
  std::printf("behind the tree: %zu added, %zu changed, %zu removed (%" PRIu64 " unchanged)\n",
              st.added.size(), st.changed.size(), st.removed.size(), st.unchanged);
  if (vm.count("verbose")) {
    const std::string cwd = WorkingDirectory();
    for (const auto& [paths, what] :
         {std::pair{&st.added, "added:  "}, {&st.changed, "changed:"}, {&st.removed, "removed:"}}) {
      for (const std::string& p : *paths) {
        DocumentInfo d;
        d.root = st.root;
        d.path = p;
        const std::string shown = ShellPath(d, cwd);
        std::printf("  %s ", what);
        std::fwrite(shown.data(), 1, shown.size(), stdout);
        std::fputc('\n', stdout);
      }
    }
  }
  std::printf("run '%s' to update it\n", IndexCommand(st.root, path, /*rebuild=*/false).c_str());
  return kExitNoMatch;
}

}  // namespace bitsift::cli
