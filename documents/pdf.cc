#include "documents/pdf.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "documents/pdf_module.h"

namespace bitsift::documents {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// The module's function, loaded once per process; nullptr (and *error) if it cannot be.
BitsiftPdfText LoadModule(std::string* error) {
  static BitsiftPdfText function = nullptr;
  static std::string load_error;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* path = std::getenv("BITSIFT_PDF_MODULE"); path != nullptr && *path != '\0') {
      candidates.push_back(path);
    }
    // Beside the program or library holding this code (the build tree), and where the
    // installation puts it (PREFIX/lib/bitsift, also found from PREFIX/bin).
    std::vector<std::string> dirs;
    Dl_info info;
    if (::dladdr(reinterpret_cast<void*>(&LoadModule), &info) != 0 && info.dli_fname != nullptr) {
      const std::string d = DirectoryOf(info.dli_fname);
      if (!d.empty()) dirs.push_back(d);
    }
    char exe[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) dirs.push_back(DirectoryOf(std::string(exe, static_cast<size_t>(n))));
    for (const std::string& d : dirs) {
      candidates.push_back(d + "/" BITSIFT_PDF_MODULE);
      candidates.push_back(d + "/../lib/bitsift/" BITSIFT_PDF_MODULE);
    }
#ifdef BITSIFT_PDF_MODULE_DIR
    candidates.push_back(BITSIFT_PDF_MODULE_DIR "/" BITSIFT_PDF_MODULE);
#endif
    candidates.push_back(BITSIFT_PDF_MODULE);  // the loader's own search (LD_LIBRARY_PATH)
    for (const std::string& c : candidates) {
      void* handle = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) continue;
      function = reinterpret_cast<BitsiftPdfText>(::dlsym(handle, BITSIFT_PDF_FUNCTION));
      if (function != nullptr) return;
      ::dlclose(handle);
    }
    load_error = "PDF: the PDF reader " BITSIFT_PDF_MODULE " was not found";
  });
  if (function == nullptr) *error = load_error;
  return function;
}

}  // namespace

bool IsPdfName(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || name.size() - dot != 4) return false;
  std::string ext(name.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(c | 0x20); });
  return ext == "pdf";
}

PdfToText::PdfToText(ByteSink& out, uint64_t max_text_bytes)
    : out_(out), max_text_bytes_(max_text_bytes) {}

void PdfToText::Write(std::string_view bytes) {
  if (data_.size() + bytes.size() > static_cast<size_t>(INT_MAX)) {
    throw SkipDocument(SkipReason::kTooLarge, "PDF: over 2 GiB");
  }
  data_.append(bytes);
}

void PdfToText::Close() {
  std::string load_error;
  const BitsiftPdfText text_of = LoadModule(&load_error);
  if (text_of == nullptr) throw SkipDocument(SkipReason::kBadDocument, load_error);
  struct Pages {
    std::string text;
    uint64_t max_bytes;
    bool over = false;
  } pages{std::string(), max_text_bytes_};
  auto write = [](void* context, const char* utf8, size_t size) -> int {
    Pages& p = *static_cast<Pages*>(context);
    if (!p.text.empty()) p.text += '\f';  // the next page
    const size_t start = p.text.size();
    p.text.append(utf8, size);
    // A form feed belongs to page breaks only; a NUL would make the text binary.
    std::replace(p.text.begin() + static_cast<long>(start), p.text.end(), '\f', ' ');
    std::replace(p.text.begin() + static_cast<long>(start), p.text.end(), '\0', ' ');
    if (p.text.empty() || p.text.back() != '\n') p.text += '\n';
    p.over = p.text.size() > p.max_bytes;
    return p.over ? 1 : 0;
  };
  char error[256] = "";
  const int r =
      text_of(data_.data(), data_.size(), kMaxPdfPages, write, &pages, error, sizeof(error));
  std::string().swap(data_);
  if (r < 0) throw SkipDocument(SkipReason::kBadDocument, error);
  if (pages.over) {
    throw SkipDocument(SkipReason::kDecompressionLimit,
                       "PDF: text over " + std::to_string(max_text_bytes_) + " bytes");
  }
  out_.Write(pages.text);
  out_.Close();
}

std::string PdfText(std::string_view pdf, uint64_t max_text_bytes) {
  StringSink sink;
  PdfToText p(sink, max_text_bytes);
  p.Write(pdf);
  p.Close();
  return std::move(sink.text);
}

}  // namespace bitsift::documents
