// Paths and commands a shell can use: a document's path as a process in some directory opens
// it, a word quoted for a POSIX shell, the command that updates or rebuilds an index. The
// public API (include/bitsift/bitsift.h: ShellPathTo, ShellQuote, IndexCommand) forwards here.
#ifndef BITSIFT_ANSWERS_SHELL_PATHS_H_
#define BITSIFT_ANSWERS_SHELL_PATHS_H_

#include <string>
#include <string_view>

namespace bitsift::answers {

// Into *out (replacing its contents), the path by which a process whose working directory is
// `from_dir` (absolute) opens the file `path` under `root`: relative to from_dir
// ("../tree/a.txt" from a sibling folder) when that is shorter than the absolute path
// root + "/" + path, the absolute path otherwise or when from_dir is empty or relative. A
// relative path that would start with "-" is written "./-..." so that a command it is passed
// to does not read it as an option. With an empty root (an in-memory document) `path` as it
// is. Bytes are kept as they are (no UTF-8 validation).
void ShellPathTo(std::string_view root, std::string_view path, std::string_view from_dir,
                 std::string* out);

// `s` as one word for a POSIX shell: unchanged if made only of letters, digits and
// /._-+,:@%, else in single quotes (a ' inside written '\'').
std::string ShellQuote(const std::string& s);

// "bitsift index [--rebuild] ROOT", with "--index INDEX_PATH" unless index_path is the default
// ROOT/.bitsift (compared after realpath); each path quoted for the shell when it needs it.
std::string IndexCommand(const std::string& root, const std::string& index_path, bool rebuild);

}  // namespace bitsift::answers

#endif  // BITSIFT_ANSWERS_SHELL_PATHS_H_
