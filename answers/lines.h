// Matching lines: for a document's text and a query, the lines that hold its matches, each with
// the byte spans of every match, grouped with context lines as grep -n -C shows them.
#ifndef BITSIFT_ANSWERS_LINES_H_
#define BITSIFT_ANSWERS_LINES_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "bitsift/lines.h"
#include "documents/stage.h"
#include "query/query_matcher.h"

namespace bitsift::answers {

// A byte range [start, end) within one line.
// A byte range within one line: the public API's (include/bitsift/lines.h).
using LineSpan = bitsift::LineSpan;

struct Line {
  uint64_t number = 0;  // counted from 1; lines are split on '\n'
  // Where the line comes from in the file (documents::LineOrigins): the line of the file where
  // it starts, or for a PDF its line within its page (counted from 1); 0 when the text's lines
  // are the file's own (then `number` is both).
  uint64_t source_line = 0;
  uint32_t page = 0;  // a PDF's page, from 1; 0 for other documents
  size_t begin = 0;   // the line's bytes in the text: [begin, end), without its '\n' (nor the
                      // '\f' that starts a page)
  size_t end = 0;
  bool match = false;  // false: a context line
  // The matches in the line, relative to `begin`: sorted, neither overlapping nor touching
  // (such matches are merged into one span). Empty for a context line.
  std::vector<LineSpan> spans;
};

// Lines printed together; groups are separated (grep's "--") because lines lie between them.
struct LineGroup {
  std::vector<Line> lines;
};

struct LineOptions {
  uint64_t before = 0;  // context lines before each matching line (grep -B)
  uint64_t after = 0;   // context lines after each matching line (grep -A)
  uint64_t best = 0;    // 0: every matching line; N: the N best (bitsift::LineOptions::best_lines)
};

// The lines of `text` holding at least one match of the query `matcher` was built for: an
// occurrence of a term, prefix or phrase that is not under an exclusion (so a phrase counts
// where the phrase occurs, never for its words alone). A phrase across line breaks marks the
// lines of its words, each from its first word there to its last (not a line between them that
// holds none of its words, nor what follows its words at a break). With options.best = N > 0,
// only the N matching lines that hold the most distinct patterns (QueryMatcher::first_alike;
// ties: the earlier line) are chosen, and returned in text order. With context, a chosen line
// brings the lines around it (a matching line among them is still a match line, with its
// spans); overlapping or adjacent ranges form one group. A final '\n' ends the last line (it
// does not start an empty one). With `origins` (the document stage's, for this text), each line
// gets its source_line and page. Throws std::runtime_error only if ICU fails.
std::vector<LineGroup> MatchingLines(std::string_view text, query::QueryMatcher& matcher,
                                     const LineOptions& options,
                                     const documents::LineOrigins* origins = nullptr);

// A line cut to at most `max_columns` code points around its first match: the public API's
// LineWindow (the part of the line kept, whether bytes were cut on either side, the spans
// clipped to the part, relative to its start).
using TrimmedLine = bitsift::LineWindow;

// Keeps all of `line` if it has at most max_columns code points (or max_columns is 0), else a
// window of max_columns code points that starts a quarter of the window before the first span
// (or at the line's start, or ends at its end). Cuts fall between code points (a byte that is
// not a UTF-8 continuation byte).
TrimmedLine TrimLine(std::string_view line, const std::vector<LineSpan>& spans, size_t max_columns);

}  // namespace bitsift::answers

#endif  // BITSIFT_ANSWERS_LINES_H_
