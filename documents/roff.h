// Manual pages (roff source: the man and mdoc macro packages) to the text `man` shows, by a
// converter of our own, line by line: what a reader sees of each source line, on one line of
// its own. Requests and macros give their text arguments, not their names (".SH NAME" is
// "NAME", ".BR ls (1)" is "ls(1)", mdoc's ".Fl v" is "-v"); escapes give their characters
// ("\fBgrep\fR" is "grep", "\(em" an em dash, "\*(lq" a quote, "\e" a backslash); comments,
// macro definitions, ".ig" blocks and preprocessor layout (tbl's format lines, eqn and pic
// blocks) give nothing; ".so" is not followed. Conditions are read as nroff reads them under
// groff (`n` true, `t` false, "\n(.g" 1). Since man fills lines and we keep the source's
// lines, the words are the same and each output line comes from one source line (the line
// map of --lines).
//
// A file is read as a man page when both hold:
//   - its name (without a compression suffix) says so (IsManPageName): it ends in a section
//     suffix, ".1" to ".9", ".n", ".l" or ".man", the digits optionally followed by letters
//     (".3pm", ".1ssl", ".8x"), unless a part of digits comes before it ("libfoo.so.1.2" is a
//     version; "bzip2.1" is a page), or it lies in a directory named man1..man9, mann or manl
//     (man3p, ...), the indexed tree's root folder included;
//   - its text says so (LooksLikeRoff): its first line that is not blank is a roff control
//     line (starts with '.' or '\'', as ".TH", ".Dd", ".\\\"" and "'\\\"" do) or a comment
//     ("\\\"" at its start).
// A file whose name says so and whose text does not is read as plain text.
#ifndef BITSIFT_DOCUMENTS_ROFF_H_
#define BITSIFT_DOCUMENTS_ROFF_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "documents/stage.h"

namespace bitsift::documents {

// Whether a file's path (without any compression suffix) names a man page, by the rule above.
bool IsManPageName(std::string_view path);

// Whether the text's first line that is not blank is a roff control line or comment. `complete`:
// the text is the whole document; otherwise kUnknown while no such line has begun (and the text is
// shorter than kRoffSniffBytes).
enum class RoffVerdict { kRoff, kNotRoff, kUnknown };
RoffVerdict LooksLikeRoff(std::string_view utf8, bool complete);

// Bytes of blank lines LooksLikeRoff reads before it decides the text is not roff.
constexpr size_t kRoffSniffBytes = 64 << 10;

// A ByteSink that takes UTF-8 text and writes the text a man page reader sees to `out`, if the
// text is roff (LooksLikeRoff; without `sniff`, whatever it is); other text passes through
// unchanged. With `source_lines`, the number (from 1) of the source line each line written
// comes from is appended to it, one per line. Memory grows only with the longest source line
// and the strings the page defines (both capped). Not thread-safe; one per document.
class RoffToText : public ByteSink {
 public:
  explicit RoffToText(ByteSink& out, std::vector<uint32_t>* source_lines = nullptr,
                      bool sniff = true);
  ~RoffToText() override;
  void Write(std::string_view utf8) override;
  void Close() override;
  // Whether the text was read as roff (known after the first non-blank line, or Close).
  bool is_roff() const;

 private:
  struct Converter;
  void Decide(bool complete);
  void Feed(std::string_view utf8);

  ByteSink& out_;
  std::vector<uint32_t>* source_lines_;
  RoffVerdict verdict_ = RoffVerdict::kUnknown;
  std::string held_;            // text before the verdict, or a source line not yet complete
  std::string logical_;         // source lines joined by escaped newlines, not yet complete
  uint32_t line_number_ = 0;    // source lines read
  uint32_t logical_start_ = 0;  // the source line where logical_ starts
  std::unique_ptr<Converter> converter_;
};

// Whole-text convenience: the text of roff source (read as roff whatever its first line);
// *source_lines as RoffToText gives them.
std::string RoffText(std::string_view utf8, std::vector<uint32_t>* source_lines = nullptr);

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_ROFF_H_
