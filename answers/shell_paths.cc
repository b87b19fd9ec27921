#include "answers/shell_paths.h"

#include <cstdlib>  // realpath, free

namespace bitsift::answers {

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789/._-+,:@%") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string IndexCommand(const std::string& root, const std::string& index_path, bool rebuild) {
  std::string cmd =
      std::string("bitsift index ") + (rebuild ? "--rebuild " : "") + ShellQuote(root);
  char* real = ::realpath(index_path.c_str(), nullptr);
  const bool is_default =
      real != nullptr && std::string(real) == (root == "/" ? "" : root) + "/.bitsift";
  std::free(real);
  return is_default ? cmd : cmd + " --index " + ShellQuote(index_path);
}

void ShellPathTo(std::string_view root, std::string_view path, std::string_view from_dir,
                 std::string* out) {
  out->clear();
  if (root.empty()) {
    out->append(path);
    return;
  }
  thread_local std::string abs;
  abs.assign(root == "/" ? std::string_view() : root).push_back('/');
  abs.append(path);
  if (from_dir.empty() || from_dir[0] != '/') {
    out->append(abs);
    return;
  }
  // from[0, common) is the longest run of whole components that abs begins with.
  const std::string_view from = from_dir == "/" ? std::string_view() : from_dir;
  size_t common = 0;
  for (size_t i = 1; i <= from.size(); ++i) {
    if (i < from.size() && from[i] != '/') continue;
    if (i >= abs.size() || abs.compare(0, i, from, 0, i) != 0 || abs[i] != '/') break;
    common = i;
  }
  for (size_t i = common; i < from.size(); ++i) {
    if (from[i] == '/') out->append("../");
  }
  if (out->empty() && abs[common + 1] == '-') out->append("./");
  out->append(abs, common + 1);
  if (out->size() >= abs.size()) out->assign(abs);
}

}  // namespace bitsift::answers
