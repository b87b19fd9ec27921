// PDF documents as their text, with Poppler's C++ API (poppler-cpp): each page's text in
// reading order (Poppler's non-raw, non-physical layout: what `pdftotext` writes), each page
// ending in a newline and each page after the first starting with a form feed, so that a line
// of the text knows its page (LineOrigins::paged). A PDF is read whole into memory (Poppler
// parses from a buffer); the file size limit bounds it. A damaged PDF, or one that needs a
// password to open, is skipped (SkipDocument(kBadDocument)); one encrypted with an empty user
// password opens as in any viewer and is read.
//
// Poppler is called through a module of its own, bitsift-pdf.so (documents/pdf_module.h),
// loaded at the first PDF a process reads: from $BITSIFT_PDF_MODULE, beside the program or
// library, in ../lib/bitsift from it, or in the installation's lib/bitsift. Without it, PDFs
// are skipped (kBadDocument, saying so).
#ifndef BITSIFT_DOCUMENTS_PDF_H_
#define BITSIFT_DOCUMENTS_PDF_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "documents/stage.h"

namespace bitsift::documents {

// Pages read from one PDF; the text of later pages is not indexed.
constexpr int kMaxPdfPages = 10000;

// Whether a file name (without any compression suffix) names a PDF: .pdf (any case).
bool IsPdfName(std::string_view name);

// A ByteSink that takes a PDF file's bytes and, at Close, writes its text (UTF-8) to `out`.
// Throws SkipDocument(kBadDocument) for a damaged or locked PDF (or without the module), and
// SkipDocument(kDecompressionLimit) when the text passes max_text_bytes. Poppler's own
// messages are silenced. Documents are read one at a time in a process (a mutex): Poppler's
// global state is not documented as safe for parallel use.
class PdfToText : public ByteSink {
 public:
  PdfToText(ByteSink& out, uint64_t max_text_bytes);
  void Write(std::string_view bytes) override;
  void Close() override;

 private:
  ByteSink& out_;
  uint64_t max_text_bytes_;
  std::string data_;
};

// Whole-file convenience: the text of a PDF's bytes. Throws SkipDocument as PdfToText.
std::string PdfText(std::string_view pdf, uint64_t max_text_bytes = UINT64_MAX);

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_PDF_H_
