// Finding the documents under a directory and reading one as UTF-8 text.
#ifndef BITSIFT_DOCUMENTS_FILE_WALKER_H_
#define BITSIFT_DOCUMENTS_FILE_WALKER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "documents/options.h"
#include "documents/stage.h"

namespace bitsift::documents {

// Called for every skipped entry with its path relative to the root.
using SkipCallback = std::function<void(const std::string& relative_path, SkipReason reason,
                                        const std::string& detail)>;

// How a search index's directory is recognized inside a tree, to be skipped whole: it holds a
// file named `file_name` whose first bytes are `magic` (the indexer gives its manifest's).
struct IndexMark {
  std::string file_name;
  std::string magic;
};

// Returns the relative paths of the regular files under root, sorted by bytes, without
// following symbolic links. An entry (file or directory; a directory is not entered) is left
// out, and reported through on_skip, when:
//   - it is named ".bitsift" or `exclude(relative_path)` holds (kIndexFile: the index), or it
//     is a directory that `index_mark` recognizes (kIndexFile: another index, reported when
//     listed),
//   - it is a ".git" directory or file (kHidden, even with options.hidden),
//   - the --glob overrides exclude it, or select other files only (kIgnored),
//   - unless a glob selected it: its name starts with "." and !options.hidden (kHidden), or
//     unless options.no_ignore the ignore rules exclude it (kIgnored) (documents/ignore_rules.h;
//     a "!" rule that re-includes a dot file includes it even without options.hidden).
// Throws Error(kNotFound or kInvalidArgument) if root is not a readable directory or the
// options are invalid; problems below root are reported through on_skip and never stop the
// walk.
std::vector<std::string> WalkDirectory(const std::string& root, const DocumentOptions& options,
                                       const IndexMark& index_mark,
                                       const std::function<bool(const std::string&)>& exclude,
                                       const SkipCallback& on_skip);

// Whether every path at or below entry a of a directory sorts (byte by byte) before every path
// at or below its sibling entry b; each is a name (no '/') and whether it is a directory. A
// directory's paths all begin with its name and '/', so a file compares by its name and a
// directory by its name and '/': "a-b" < "a/..." < "a0". WalkDirectory walks each directory's
// entries in this order, which lists the files sorted without sorting the list.
bool EntryBefore(std::string_view a, bool a_is_dir, std::string_view b, bool b_is_dir);

struct FileFacts {
  uint64_t size = 0;       // bytes of UTF-8 text tokenized
  uint64_t file_size = 0;  // st_size when opened
  int64_t mtime_ns = 0;    // modification time
  int64_t ctime_ns = 0;    // status change time
  uint64_t inode = 0;
  std::string encoding;  // the text's encoding as read ("UTF-8", "GB18030", "UTF-16LE", ...)
  std::string format;    // "text", "html", "man", "pdf", or the compression and those: "gzip+man"
};

// Streams root/relative_path through the document stage into `text` as UTF-8, closing it once
// the whole file is read:
// decompression (by the name's suffix: .gz .xz .bz2 .zst), then by the name without the
// compression suffix: a PDF's text (.pdf, documents/pdf.h; options.read_pdf), or decoding to
// UTF-8 (documents/decode.h, options.encoding) and then HTML to text (.html .htm .xhtml .xht
// .shtml) or a man page's text (documents/roff.h: its name and its first line; options.read_man).
// Memory is bounded whatever the file size (1 MiB reads), but for a PDF, held whole. Returns
// kCount on success with *facts filled, otherwise why the file was skipped (with *detail set:
// kBinary, kTooLarge over max_file_size bytes read, kDecompressionLimit, kBadCompressed,
// kBadDocument, kUnreadable, kVanished, kSymlink, kSpecial); text already written then belongs
// to no document (`text` is not closed) and must be discarded by the caller. facts->size is
// the bytes of text written.
SkipReason ReadDocumentFile(const std::string& root, const std::string& relative_path,
                            uint64_t max_file_size, const DocumentOptions& options, ByteSink& text,
                            FileFacts* facts, std::string* detail);

// Reads root/relative_path through the same stage as ReadDocumentFile into *text (the UTF-8
// text indexing reads), for showing a document's matching lines and checking phrases; with
// `origins`, where the text's lines come from in the file (LineOrigins).
// Returns kCount with *text and *facts filled (facts taken with fstat on the descriptor read, so
// they describe exactly the bytes read), otherwise why it cannot be read, as ReadDocumentFile.
// The text is held whole in memory (at most max_file_size bytes, or the decompression limit).
SkipReason ReadDocumentText(const std::string& root, const std::string& relative_path,
                            uint64_t max_file_size, const DocumentOptions& options,
                            std::string* text, FileFacts* facts, std::string* detail,
                            LineOrigins* origins = nullptr);

// Whether ReadDocumentFile would index root/relative_path, without tokenizing it: the same
// open, type and size checks and the same stage, but only over the first bytes of the file
// (those that settle decoding: the encoding choice and the binary probe). Skips that only the
// whole file shows (a compressed file over the decompression limit or truncated, a file growing
// past the size limit) are not seen. Returns kCount if it would be indexed, otherwise the
// reason it would be skipped (with *detail set).
SkipReason ProbeDocumentFile(const std::string& root, const std::string& relative_path,
                             uint64_t max_file_size, const DocumentOptions& options,
                             std::string* detail);

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_FILE_WALKER_H_
