// The document stage between finding files and the tokenizer: bytes in, UTF-8 text out. Each
// step (decompression, decoding, HTML, man pages, PDF) is a ByteSink that writes what it makes to
// the next one; a step that finds the document cannot be indexed throws SkipDocument. Nothing here
// knows about indexes.
#ifndef BITSIFT_DOCUMENTS_STAGE_H_
#define BITSIFT_DOCUMENTS_STAGE_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::documents {

// Why a directory entry was not indexed. Reported in summaries; stored nowhere on disk.
enum class SkipReason {
  kHidden,              // name starts with "." (without --hidden), or a .git directory
  kSymlink,             // symbolic links are never followed
  kSpecial,             // FIFO, socket, device: never opened
  kBinary,              // a NUL character in the first 8 KiB of decoded text
  kTooLarge,            // larger than --max-file-size
  kUnreadable,          // permission denied or an I/O error
  kVanished,            // removed between listing and reading
  kIndexFile,           // the index being written (or its temporary file), any .bitsift
  kIgnored,             // excluded by .gitignore, .ignore, .git/info/exclude or --glob
  kDecompressionLimit,  // decompresses to more than the limit (a decompression bomb)
  kBadCompressed,       // a compressed file that is damaged or truncated
  kBadDocument,         // a PDF that is damaged or needs a password
  kCount
};

// The reason's name as the CLI and the API report it ("binary", "decompression-limit", ...).
const char* SkipReasonName(SkipReason reason);

// Where the lines of a document's text come from in its file, so that a line can be shown with
// the number an editor opens (`vim +N`) while its text is the one the reader sees.
struct LineOrigins {
  // Empty: line N of the text is line N of the file as stored (plain text; a compressed
  // file's decompressed text). Otherwise one entry per line of the text: the line of the file
  // (from 1) where it starts (HTML, man pages).
  std::vector<uint32_t> source_lines;
  // A PDF's text: a line starting with '\f' starts the next page.
  bool paged = false;
};

// Thrown by a step of the stage when the document must be skipped.
class SkipDocument : public std::runtime_error {
 public:
  SkipDocument(SkipReason reason, const std::string& detail)
      : std::runtime_error(detail), reason_(reason) {}
  SkipReason reason() const { return reason_; }

 private:
  SkipReason reason_;
};

// Receives a stream of bytes in pieces of any size. Write may be called any number of times,
// then Close once (which flushes and closes whatever this sink writes to). May throw
// SkipDocument.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void Write(std::string_view bytes) = 0;
  virtual void Close() = 0;
};

// Collects everything written into a string (tests, small documents).
class StringSink : public ByteSink {
 public:
  void Write(std::string_view bytes) override { text += bytes; }
  void Close() override { closed = true; }
  std::string text;
  bool closed = false;
};

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_STAGE_H_
