// The interface between documents/pdf.cc and the PDF reader module (documents/pdf_poppler.cc,
// built as bitsift-pdf.so): one C function, so that the module is loaded with dlopen.
#ifndef BITSIFT_DOCUMENTS_PDF_MODULE_H_
#define BITSIFT_DOCUMENTS_PDF_MODULE_H_

#include <cstddef>

extern "C" {

// Receives the text of one page (UTF-8, as Poppler gives it); returns nonzero to stop.
typedef int (*BitsiftPdfWrite)(void* context, const char* utf8, size_t size);

// Calls write once per page of the PDF pdf[0, size), in order, for its first max_pages pages.
// Returns 0 when every page was given, 1 when write stopped it, -1 when the PDF cannot be read
// (damaged, needs a password), with the reason in error (NUL-terminated, cut to error_size).
typedef int (*BitsiftPdfText)(const char* pdf, size_t size, int max_pages, BitsiftPdfWrite write,
                              void* context, char* error, size_t error_size);

// The module's file name and the name of its function.
#define BITSIFT_PDF_MODULE "bitsift-pdf.so"
#define BITSIFT_PDF_FUNCTION "bitsift_pdf_text"
}

#endif  // BITSIFT_DOCUMENTS_PDF_MODULE_H_
