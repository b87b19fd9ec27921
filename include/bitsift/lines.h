// Matching lines: where a document matches, as grep -n shows it.
#ifndef BITSIFT_LINES_H_
#define BITSIFT_LINES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bitsift/document.h"
#include "bitsift/status.h"

namespace bitsift {

// Matching lines (Index::MatchingLines): where a document matches, as grep -n shows it.

// A byte range [start, end) of a line's text.
struct LineSpan {
  size_t start = 0;
  size_t end = 0;
  bool operator==(const LineSpan& o) const { return start == o.start && end == o.end; }
};

struct MatchLine {
  // The line's number in the file as stored, counted from 1, as an editor opens it (`vim
  // +N`): for plain text (and a compressed file's decompressed text) the line of the text;
  // for HTML and man pages the line of the source where the text's line starts; for a PDF the
  // line within its page. Lines of the text end at '\n' (a final '\n' starts no line).
  uint64_t number = 0;
  // For a document whose text is extracted (HTML, man page, PDF): the line's number in that
  // text, counted from 1; 0 for others (whose text's lines are the file's: `number`).
  uint64_t text_line = 0;
  uint32_t page = 0;   // a PDF's page, counted from 1; 0 for other documents
  std::string text;    // the line's bytes of the document's text, without its '\n'
  bool match = false;  // false: a context line
  // Each occurrence of a positive term, prefix or phrase of the query (not under an
  // exclusion), as the index tokenizes (so `strasse` finds `Straße`): sorted, overlapping and
  // touching ones merged. A phrase across line breaks marks each line holding its words, from
  // its first word there to its last (a line between them without one of its words is no
  // match line).
  std::vector<LineSpan> spans;
};

// Consecutive lines; a gap lies between two groups (grep prints "--" there).
struct LineGroup {
  std::vector<MatchLine> lines;
};

struct LineOptions {
  uint64_t before = 0;  // context lines before each matching line (grep -B)
  uint64_t after = 0;   // context lines after each matching line (grep -A)
  // 0: every matching line (grep's answer). N > 0: a snippet, the N matching lines that hold
  // the most distinct terms, prefixes and phrases of the query (one the query names twice
  // counts once; ties: the earlier line), in the document's order; before/after then apply
  // around these lines only (a matching line among their context lines stays a match line).
  uint64_t best_lines = 0;
  // Where the text comes from, as QueryOptions::document_text (empty: the file, re-read).
  DocumentText document_text;
  // Whether MatchingLinesOf may share its documents with the process's helper thread (then
  // document_text may be called from two threads at once).
  bool parallel = true;
};

// A line cut to at most max_columns code points around its first span.
struct LineWindow {
  size_t start = 0, end = 0;    // the bytes of the line's text kept: [start, end)
  bool cut_before = false;      // text before `start` was cut
  bool cut_after = false;       // text after `end` was cut
  std::vector<LineSpan> spans;  // the spans within the window, relative to `start`
};

// The whole line if it has at most max_columns code points (or max_columns is 0); otherwise a
// window of max_columns code points starting a quarter of the window before the first span (or
// at the line's start, or ending at its end). Cuts fall between UTF-8 code points.
LineWindow TrimLine(const MatchLine& line, size_t max_columns);

}  // namespace bitsift

#endif  // BITSIFT_LINES_H_
