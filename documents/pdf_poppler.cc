// The PDF reader module (bitsift-pdf.so): Poppler's C++ API behind one C function, loaded by
// documents/pdf.cc at the first PDF. Poppler and the two dozen libraries it needs (fonts,
// colour, images, crypto) are then loaded only by a process that reads a PDF: linked into the
// program, the dynamic loader spent ~5 ms on them at every start, more than a whole one-shot
// query takes.
#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "documents/pdf_module.h"

extern "C" __attribute__((visibility("default"))) int bitsift_pdf_text(const char* pdf, size_t size,
                                                                       int max_pages,
                                                                       BitsiftPdfWrite write,
                                                                       void* context, char* error,
                                                                       size_t error_size) {
  auto fail = [&](const char* what) {
    if (error_size > 0) {
      std::strncpy(error, what, error_size - 1);
      error[error_size - 1] = '\0';
    }
    return -1;
  };
  if (size > static_cast<size_t>(INT_MAX)) return fail("PDF: over 2 GiB");
  // Poppler's global state is not documented as safe for parallel use: one PDF at a time.
  static std::mutex poppler_mutex;
  std::lock_guard<std::mutex> lock(poppler_mutex);
  static std::once_flag quiet;
  std::call_once(quiet, [] {
    // Damaged files make Poppler write to stderr; a skipped file is reported once, by bitsift.
    poppler::set_debug_error_function([](const std::string&, void*) {}, nullptr);
  });
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(pdf, static_cast<int>(size)));
  if (doc == nullptr) return fail("PDF: damaged or not a PDF");
  if (doc->is_locked()) return fail("PDF: encrypted, needs a password");
  const int pages = std::min(doc->pages(), max_pages);
  for (int p = 0; p < pages; ++p) {
    std::unique_ptr<poppler::page> page(doc->create_page(p));
    poppler::byte_array utf8;
    if (page != nullptr) {
      utf8 = page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout).to_utf8();
    }
    if (write(context, utf8.data(), utf8.size()) != 0) return 1;
  }
  return 0;
}
