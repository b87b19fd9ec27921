// A document of an index, how a shell opens its file, and what became of that file.
#ifndef BITSIFT_DOCUMENT_H_
#define BITSIFT_DOCUMENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "bitsift/status.h"

namespace bitsift {

struct DocumentInfo {
  std::string path;      // relative to the indexed directory (or the Document name)
  std::string root;      // the indexed directory of its index (empty for in-memory documents)
  uint32_t index = 0;    // which of the opened indexes holds it (0 for a single index)
  uint64_t size = 0;     // bytes indexed
  int64_t mtime_ns = 0;  // modification time when indexed
  uint32_t terms = 0;    // distinct terms
  // The file's facts when indexed (an update compares them; Index::file_state too).
  uint64_t file_size = 0;  // st_size (the text size for in-memory documents)
  int64_t ctime_ns = 0;    // status change time (0 for in-memory documents)
  uint64_t inode = 0;      // st_ino (0 for in-memory documents)
  // The encoding its text was read in: "UTF-8" (also for in-memory documents), "GB18030",
  // "Shift_JIS", "UTF-16LE", "windows-1252", ... (ICU's canonical names).
  std::string encoding;
};

// The path by which a process whose working directory is `from_dir` (absolute) opens document
// `d`'s file: relative to from_dir ("../tree/a.txt" from a sibling folder) when that is shorter
// than the absolute path (d.root + "/" + d.path), the absolute path otherwise or when from_dir
// is empty. A relative path that would start with "-" is written "./-..." so that a command it
// is passed to does not read it as an option. An in-memory document's path is returned as is.
// Bytes are kept as they are (no UTF-8 validation).
std::string ShellPath(const DocumentInfo& d, const std::string& from_dir);

// `s` with every byte that does not belong to a well-formed UTF-8 sequence replaced by U+FFFD:
// for showing a path (bytes, not always UTF-8) where text is required (JSON, a terminal).
std::string ToValidUtf8(std::string_view s);
// The same for a document's root and relative path (Index::document_path), written into *out
// (replacing its contents): printing many paths reuses one string.
void ShellPathTo(std::string_view root, std::string_view path, std::string_view from_dir,
                 std::string* out);

// Where a document's file is, without copying: views into an open Index, valid while it is.
struct DocumentPath {
  std::string_view root;  // DocumentInfo::root
  std::string_view path;  // DocumentInfo::path
};

// `s` as one word for a POSIX shell: unchanged if made only of letters, digits and
// /._-+,:@%, else in single quotes (a ' inside written '\'').
std::string ShellQuote(const std::string& s);

// The command line that updates the index directory `index_path` of the tree `root` (absolute,
// as TreeStatus::root and DocumentInfo::root give it), or with `rebuild` builds it again:
// "bitsift index [--rebuild] ROOT", with "--index INDEX_PATH" unless index_path is the default
// ROOT/.bitsift; each path quoted for the shell when it needs it.
std::string IndexCommand(const std::string& root, const std::string& index_path, bool rebuild);

// What became of a document's file since it was indexed.
enum class FileState {
  kCurrent,   // a regular file with the size, mtime, ctime and inode recorded
  kChanged,   // a regular file, but one of those differs (its answer may be out of date)
  kVanished,  // no regular file at its path any more (the next update removes the document)
  kUnknown,   // an in-memory document: there is no file to look at
};

// Reads the text of a document as it was indexed into *text, returning false if it cannot.
// Called from several threads at once.
using DocumentText = std::function<bool(const DocumentInfo& document, std::string* text)>;

}  // namespace bitsift

#endif  // BITSIFT_DOCUMENT_H_
