// Reading a document's text again, as it was indexed: for checking phrases (query_eval) and
// for showing matching lines (answers/lines). Only a file that is still the one indexed is
// read, so positions found in the text are those of the indexed document.
#ifndef BITSIFT_QUERY_DOCUMENT_TEXT_H_
#define BITSIFT_QUERY_DOCUMENT_TEXT_H_

#include <cstdint>
#include <string>

#include "documents/stage.h"
#include "query/index_set.h"

namespace bitsift::query {

enum class TextState {
  kRead,        // *text is the document's text as indexed
  kChanged,     // the file is not the one indexed (size, mtime, ctime, inode or text size differ)
  kVanished,    // no regular file at its path any more
  kUnreadable,  // it could not be read (permissions, I/O error, damaged compressed file, ...)
  kNoFile,      // an in-memory document: the index has no file for it
};

// Reads the text of local document `local` of `segment` (a segment of `set`): the file at its
// index's root joined with its path, through the document stage (documents/file_walker.h
// ReadDocumentText) with the document options and size limit recorded in the index's
// MANIFEST. The file's facts are taken from the descriptor read, so a file replaced while it is
// read is kChanged, never a mix. *detail gets the system's reason for kUnreadable. Safe to
// call from several threads at once.
// With `origins`, also where the text's lines come from in the file (documents::LineOrigins).
TextState ReadIndexedText(const IndexSet& set, const IndexSet::Segment& segment, uint32_t local,
                          std::string* text, std::string* detail,
                          documents::LineOrigins* origins = nullptr);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_DOCUMENT_TEXT_H_
