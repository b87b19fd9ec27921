#include "answers/lines.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace bitsift::answers {

std::vector<LineGroup> MatchingLines(std::string_view text, query::QueryMatcher& matcher,
                                     const LineOptions& options,
                                     const documents::LineOrigins* origins) {
  // Where each line starts; a final '\n' does not start a line.
  std::vector<size_t> starts;
  for (size_t at = 0; at < text.size();) {
    starts.push_back(at);
    const void* nl = std::memchr(text.data() + at, '\n', text.size() - at);
    if (nl == nullptr) break;
    at = static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1;
  }
  auto line_end = [&](size_t l) {
    if (l + 1 < starts.size()) return starts[l + 1] - 1;
    return text.size() > 0 && text.back() == '\n' ? text.size() - 1 : text.size();
  };

  query::QueryMatcher::Result found;
  matcher.Scan(text, true, std::vector<bool>(matcher.pattern_count(), true), &found);
  std::map<size_t, std::vector<LineSpan>> by_line;
  std::map<size_t, std::vector<uint32_t>> patterns;  // line -> the patterns on it, as first_alike
  // Each span lies on one line (QueryMatcher cuts an occurrence at the line breaks between its
  // tokens), from a token's begin to a token's end.
  for (const query::MatchSpan& s : found.spans) {
    const size_t l = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), s.begin) -
                                         starts.begin()) -
                     1;
    const size_t e = std::min<size_t>(s.end, line_end(l));
    if (s.begin < e) {
      by_line[l].push_back(LineSpan{s.begin - starts[l], e - starts[l]});
      if (options.best > 0) patterns[l].push_back(matcher.first_alike(s.pattern));
    }
  }
  // The lines that bring their groups: every matching line, or the best ones.
  std::vector<size_t> chosen;
  for (const auto& [l, spans] : by_line) chosen.push_back(l);
  if (options.best > 0 && chosen.size() > options.best) {
    std::vector<std::pair<size_t, size_t>> ranked;  // (distinct patterns, line)
    for (auto& [l, ps] : patterns) {
      std::sort(ps.begin(), ps.end());
      ranked.emplace_back(static_cast<size_t>(std::unique(ps.begin(), ps.end()) - ps.begin()), l);
    }
    // Most patterns first, then the earlier line (stable over the lines in order).
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    ranked.resize(options.best);
    chosen.clear();
    for (const auto& [n, l] : ranked) chosen.push_back(l);
    std::sort(chosen.begin(), chosen.end());
  }
  for (auto& [l, spans] : by_line) {
    std::sort(spans.begin(), spans.end(), [](const LineSpan& a, const LineSpan& b) {
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    std::vector<LineSpan> merged;
    for (const LineSpan& s : spans) {
      if (!merged.empty() && s.start <= merged.back().end) {
        merged.back().end = std::max(merged.back().end, s.end);
      } else {
        merged.push_back(s);
      }
    }
    spans.swap(merged);
  }

  // A PDF's pages: the line where each starts (a line starting with '\f' starts the next).
  std::vector<size_t> page_starts;
  if (origins != nullptr && origins->paged) {
    page_starts.push_back(0);
    for (size_t l = 1; l < starts.size(); ++l) {
      if (text[starts[l]] == '\f') page_starts.push_back(l);
    }
  }
  auto place = [&](size_t k, Line* line) {
    if (origins == nullptr) return;
    if (origins->paged) {
      const size_t p = static_cast<size_t>(
          std::upper_bound(page_starts.begin(), page_starts.end(), k) - page_starts.begin());
      line->page = static_cast<uint32_t>(p);
      line->source_line = k - page_starts[p - 1] + 1;
      if (line->begin < line->end && text[line->begin] == '\f') ++line->begin;
    } else if (k < origins->source_lines.size()) {
      line->source_line = origins->source_lines[k];
    } else if (!origins->source_lines.empty()) {
      line->source_line = origins->source_lines.back();
    }
  };

  std::vector<LineGroup> groups;
  size_t next = 0;  // the first line not yet printed
  for (const size_t l : chosen) {
    const size_t first = l >= options.before ? l - options.before : 0;
    const size_t last = std::min<uint64_t>(starts.size() - 1, l + options.after);
    if (groups.empty() || first > next) groups.emplace_back();
    for (size_t k = std::max(first, next); k <= last; ++k) {
      Line line;
      line.number = k + 1;
      line.begin = starts[k];
      line.end = line_end(k);
      place(k, &line);
      auto it = by_line.find(k);
      line.match = it != by_line.end();
      if (line.match) {
        line.spans = it->second;
        // Spans are relative to begin, which a page's '\f' moved by one byte.
        const size_t shift = line.begin - starts[k];
        for (LineSpan& sp : line.spans) {
          sp.start -= std::min(sp.start, shift);
          sp.end -= std::min(sp.end, shift);
        }
      }
      groups.back().lines.push_back(std::move(line));
    }
    next = std::max(next, last + 1);
  }
  return groups;
}

TrimmedLine TrimLine(std::string_view line, const std::vector<LineSpan>& spans,
                     size_t max_columns) {
  TrimmedLine out;
  out.end = line.size();
  out.spans = spans;
  std::vector<size_t> cps;  // the byte where each code point starts
  for (size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) cps.push_back(i);
  }
  if (max_columns == 0 || cps.size() <= max_columns) return out;
  size_t first = 0;  // the code point where the first span starts
  if (!spans.empty()) {
    first =
        static_cast<size_t>(std::upper_bound(cps.begin(), cps.end(), spans[0].start) - cps.begin());
    first = first > 0 ? first - 1 : 0;
  }
  size_t from = first > max_columns / 4 ? first - max_columns / 4 : 0;
  from = std::min(from, cps.size() - max_columns);
  out.start = cps[from];
  out.end = from + max_columns < cps.size() ? cps[from + max_columns] : line.size();
  out.cut_before = out.start > 0;
  out.cut_after = out.end < line.size();
  out.spans.clear();
  for (const LineSpan& s : spans) {
    const size_t b = std::max(s.start, out.start), e = std::min(s.end, out.end);
    if (b < e) out.spans.push_back(LineSpan{b - out.start, e - out.start});
  }
  return out;
}

}  // namespace bitsift::answers
