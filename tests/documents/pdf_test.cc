// PDFs as their text (documents/pdf.h), through the Poppler module: pages in order, each
// after the first starting with a form feed; damaged PDFs skipped; the text size limit.
#include "documents/pdf.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "documents/stage.h"

using bitsift::documents::IsPdfName;
using bitsift::documents::PdfText;
using bitsift::documents::SkipDocument;
using bitsift::documents::SkipReason;

namespace {

// A minimal valid PDF with one page per text (as tests/data/make-pdf writes them).
std::string MakePdf(const std::vector<std::string>& pages) {
  std::vector<std::string> objects = {"<< /Type /Catalog /Pages 2 0 R >>"};
  std::string kids;
  for (size_t i = 0; i < pages.size(); ++i) kids += std::to_string(4 + 2 * i) + " 0 R ";
  objects.push_back("<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages.size()) +
                    " >>");
  objects.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (size_t i = 0; i < pages.size(); ++i) {
    const std::string stream = "BT /F1 12 Tf 72 720 Td (" + pages[i] + ") Tj ET";
    objects.push_back(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R "
        ">> >> /Contents " +
        std::to_string(5 + 2 * i) + " 0 R >>");
    objects.push_back("<< /Length " + std::to_string(stream.size()) + " >>\nstream\n" + stream +
                      "\nendstream");
  }
  std::string out = "%PDF-1.4\n";
  std::vector<size_t> offsets;
  for (size_t n = 0; n < objects.size(); ++n) {
    offsets.push_back(out.size());
    out += std::to_string(n + 1) + " 0 obj\n" + objects[n] + "\nendobj\n";
  }
  const size_t xref = out.size();
  out += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t o : offsets) {
    std::string num = std::to_string(o);
    out += std::string(10 - num.size(), '0') + num + " 00000 n \n";
  }
  out += "trailer\n<< /Size " + std::to_string(objects.size() + 1) +
         " /Root 1 0 R >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return out;
}

SkipReason Failure(const std::string& pdf, uint64_t limit = UINT64_MAX) {
  try {
    PdfText(pdf, limit);
  } catch (const SkipDocument& e) {
    return e.reason();
  }
  return SkipReason::kCount;
}

}  // namespace

TEST_CASE("a PDF's text, page by page", "[documents][pdf]") {
  const std::string text = PdfText(MakePdf({"first page words", "second page", "third"}));
  CHECK(text.find("first page words\n") == 0);
  CHECK(text.find("\fsecond page\n") != std::string::npos);
  CHECK(text.find("\fthird\n") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\f') == 2);
  CHECK(text.back() == '\n');
}

TEST_CASE("damaged PDFs are skipped, never a crash", "[documents][pdf]") {
  const std::string good = MakePdf({"some words here"});
  CHECK(Failure(good) == SkipReason::kCount);
  CHECK(Failure("") == SkipReason::kBadDocument);
  CHECK(Failure("%PDF-1.4\nnot really\n") == SkipReason::kBadDocument);
  CHECK(Failure("plain text") == SkipReason::kBadDocument);
  // Cut anywhere, or with bytes flipped: text or a skip, nothing else.
  for (size_t cut = 0; cut < good.size(); cut += 37) {
    const SkipReason r = Failure(good.substr(0, cut));
    CHECK((r == SkipReason::kCount || r == SkipReason::kBadDocument));
  }
  for (size_t at = 0; at < good.size(); at += 29) {
    std::string flipped = good;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5A);
    const SkipReason r = Failure(flipped);
    CHECK((r == SkipReason::kCount || r == SkipReason::kBadDocument));
  }
}

TEST_CASE("a PDF's text over the limit is skipped", "[documents][pdf]") {
  CHECK(Failure(MakePdf({"a few words of text"}), 5) == SkipReason::kDecompressionLimit);
}

TEST_CASE("which files are PDFs", "[documents][pdf]") {
  CHECK(IsPdfName("a.pdf"));
  CHECK(IsPdfName("dir/A.PDF"));
  CHECK_FALSE(IsPdfName("a.pdf.txt"));
  CHECK_FALSE(IsPdfName("pdf"));
}
