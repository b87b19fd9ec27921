// libFuzzer target: ignore files and globs (documents/ignore_rules.h). The input is a rules file,
// a NUL, then paths one per line. Any rules and paths give an answer, never a crash or a hang
// (the "**" and "*" matcher is bounded); rules parsed whole answer as rules added line by line;
// a glob without special characters matches exactly the path it spells; --glob overrides built
// from the same lines answer too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "documents/ignore_rules.h"

namespace {

using bitsift::documents::GlobMatch;
using bitsift::documents::GlobOverrides;
using bitsift::documents::IgnoreMatch;
using bitsift::documents::IgnoreRules;

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find('\0');
  const std::string_view rules_text = input.substr(0, cut);
  const std::string_view paths_text =
      cut == std::string_view::npos ? std::string_view() : input.substr(cut + 1);
  std::vector<std::string_view> rule_lines = Lines(rules_text);
  if (rule_lines.size() > 64) rule_lines.resize(64);
  std::vector<std::string_view> paths = Lines(paths_text);
  if (paths.size() > 32) paths.resize(32);

  const IgnoreRules parsed = IgnoreRules::Parse(rules_text);
  IgnoreRules added;
  std::vector<std::string> globs;
  for (std::string_view line : rule_lines) {
    // Parse skips a byte-order mark at the start (Add drops a "\r" before "\n" itself).
    if (globs.empty() && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    added.Add(line);
    globs.emplace_back(line);
  }
  const GlobOverrides overrides(globs);

  for (std::string_view path : paths) {
    // Paths as the walk gives them: relative, no leading or trailing '/', no empty segment.
    if (path.empty() || path.front() == '/' || path.back() == '/' ||
        path.find("//") != std::string_view::npos)
      continue;
    for (bool is_dir : {false, true}) {
      const IgnoreMatch m = parsed.Match(path, is_dir);
      if (rule_lines.size() < 64 && m != added.Match(path, is_dir)) std::abort();
      overrides.Match(path, is_dir);
    }
    for (std::string_view glob : rule_lines) {
      const bool match = GlobMatch(glob, path);
      if (!glob.empty() && glob.find_first_of("*?[\\") == std::string_view::npos &&
          match != (glob == path))
        std::abort();
    }
  }
  return 0;
}
