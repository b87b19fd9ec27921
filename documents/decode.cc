#include "documents/decode.h"

#include <unicode/ucnv.h>
#include <unicode/ucsdet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "util/utf8.h"

namespace bitsift::documents {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

struct Utf8Scan {
  size_t multibyte = 0;  // valid sequences of 2..4 bytes
  size_t invalid = 0;    // bytes that start no valid sequence
};

// Counts the valid multi-byte sequences and the invalid bytes of `bytes` as UTF-8 (shortest
// forms, no surrogates, at most U+10FFFF). When `complete` is false a sequence cut by the end
// of bytes is not counted as invalid if it is a valid prefix.
Utf8Scan ScanUtf8(std::string_view bytes, bool complete) {
  Utf8Scan scan;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* end = p + bytes.size();
  while (p < end) {
    p += FindNonAscii(std::string_view(reinterpret_cast<const char*>(p), end - p), 0);
    if (p == end) break;
    bool cut = false;
    const size_t len = Utf8SequenceLength(p, end, &cut);
    if (len > 1) {
      ++scan.multibyte;
      p += len;
    } else if (len == 1) {
      ++p;
    } else if (cut && !complete) {
      break;  // a valid prefix cut by the end of the probe
    } else {
      ++scan.invalid;
      ++p;
    }
  }
  return scan;
}

struct Bom {
  const char* bytes;
  size_t size;
  const char* encoding;
};
// UTF-32LE before UTF-16LE: FF FE 00 00 starts both.
constexpr Bom kBoms[] = {{"\xEF\xBB\xBF", 3, "UTF-8"},
                         {"\xFF\xFE\x00\x00", 4, "UTF-32LE"},
                         {"\x00\x00\xFE\xFF", 4, "UTF-32BE"},
                         {"\xFF\xFE", 2, "UTF-16LE"},
                         {"\xFE\xFF", 2, "UTF-16BE"}};

const Bom* FindBom(std::string_view probe) {
  for (const Bom& b : kBoms) {
    if (StartsWith(probe, std::string_view(b.bytes, b.size))) return &b;
  }
  return nullptr;
}

bool IsUnicodeFamily(std::string_view name) {
  return StartsWith(name, "UTF-16") || StartsWith(name, "UTF-32");
}

// The charset named by a <meta> tag before <body>, or "".
std::string MetaCharset(std::string_view probe) {
  std::string lower(probe.size(), '\0');
  std::transform(probe.begin(), probe.end(), lower.begin(), Lower);
  size_t body = lower.find("<body");
  for (size_t pos = lower.find("<meta"); pos < body && pos != std::string::npos;
       pos = lower.find("<meta", pos + 5)) {
    size_t end = lower.find('>', pos);
    if (end == std::string::npos) break;
    size_t cs = lower.find("charset", pos);
    if (cs == std::string::npos || cs > end) continue;
    size_t i = cs + 7;
    while (i < end && (lower[i] == ' ' || lower[i] == '\t' || lower[i] == '\n')) ++i;
    if (i >= end || lower[i] != '=') continue;
    ++i;
    while (i < end && (lower[i] == ' ' || lower[i] == '"' || lower[i] == '\'')) ++i;
    size_t start = i;
    while (i < end && (std::isalnum(static_cast<unsigned char>(lower[i])) || lower[i] == '-' ||
                       lower[i] == '_' || lower[i] == '.' || lower[i] == ':')) {
      ++i;
    }
    if (i > start) return std::string(probe.substr(start, i - start));
  }
  return "";
}

// A <meta charset> label as browsers read it (the WHATWG Encoding Standard's labels): pages
// labelled with a legacy subset hold its superset's characters (a "gb2312" page with GBK's 喆,
// an "iso-8859-1" page with windows-1252's curly quotes and œ), and decoding them by the
// subset's table would lose or garble the rest. Other labels are returned as they are.
std::string BrowserLabel(std::string_view label) {
  std::string l(label);
  std::transform(l.begin(), l.end(), l.begin(), Lower);
  static const char* const kGbk[] = {"gb2312",  "gbk",        "x-gbk",
                                     "chinese", "csgb2312",   "csiso58gb231280",
                                     "gb_2312", "gb_2312-80", "iso-ir-58"};
  static const char* const kWindows1252[] = {
      "iso-8859-1", "iso8859-1",      "iso88591", "iso_8859-1", "iso_8859-1:1987", "latin1",
      "l1",         "cp819",          "ibm819",   "iso-ir-100", "csisolatin1",     "us-ascii",
      "ascii",      "ansi_x3.4-1968", "cp1252",   "x-cp1252"};
  static const char* const kWindows1254[] = {"iso-8859-9", "iso8859-9",       "iso88599",
                                             "iso_8859-9", "iso_8859-9:1989", "latin5",
                                             "l5",         "iso-ir-148",      "csisolatin5"};
  auto in = [&](const auto& names) {
    return std::find(std::begin(names), std::end(names), l) != std::end(names);
  };
  if (in(kGbk)) return "GB18030";
  if (in(kWindows1252)) return "windows-1252";
  if (in(kWindows1254)) return "windows-1254";
  return std::string(label);
}

// Whether the NUL bytes of `head` fall as in Latin text in UTF-16 (every other byte) or UTF-32
// (three bytes of four): a cheap test before asking ICU, so a binary file costs no detection.
bool NulsLikeUtf16Or32(std::string_view head) {
  const size_t n = std::min<size_t>(head.size(), 1024) & ~size_t{3};
  if (n < 16) return false;
  size_t nul[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; ++i) nul[i % 4] += head[i] == '\0';
  const size_t q = n / 4;  // bytes per residue class
  const size_t even = nul[0] + nul[2], odd = nul[1] + nul[3];
  if ((odd * 10 >= 2 * q * 3 && even * 20 <= 2 * q) ||
      (even * 10 >= 2 * q * 3 && odd * 20 <= 2 * q)) {
    return true;  // UTF-16: >= 30% NULs at one parity, <= 5% at the other
  }
  for (size_t r = 0; r < 4; ++r) {
    bool others = true;
    for (size_t k = 1; k < 4; ++k) others &= nul[(r + k) % 4] * 10 >= q * 6;
    if (others && nul[r] * 20 <= q) return true;  // UTF-32
  }
  return false;
}

struct Match {
  std::string name;
  int confidence = 0;
};

// ucsdet's matches for the first kDetectBytes of the probe, best first.
std::vector<Match> DetectAll(std::string_view probe, bool html) {
  probe = probe.substr(0, std::min(probe.size(), kDetectBytes));
  std::vector<Match> out;
  UErrorCode err = U_ZERO_ERROR;
  UCharsetDetector* csd = ucsdet_open(&err);
  if (U_FAILURE(err)) return out;
  ucsdet_setText(csd, probe.data(), static_cast<int32_t>(probe.size()), &err);
  ucsdet_enableInputFilter(csd, html);
  int32_t n = 0;
  const UCharsetMatch** matches = ucsdet_detectAll(csd, &n, &err);
  for (int32_t i = 0; U_SUCCESS(err) && i < n; ++i) {
    const char* name = ucsdet_getName(matches[i], &err);
    int32_t conf = ucsdet_getConfidence(matches[i], &err);
    if (U_SUCCESS(err) && name != nullptr) out.push_back({name, conf});
  }
  ucsdet_close(csd);
  return out;
}

// ICU's converter name for a detected or canonical name ("IBM424_rtl" -> "IBM424").
std::string ConverterName(const std::string& name) {
  if (name.size() > 4 && (name.ends_with("_rtl") || name.ends_with("_ltr"))) {
    return name.substr(0, name.size() - 4);
  }
  return name;
}

}  // namespace

std::string CanonicalEncodingName(std::string_view label) {
  std::string l(label);
  if (l.empty()) return "";
  UErrorCode err = U_ZERO_ERROR;
  UConverter* c = ucnv_open(ConverterName(l).c_str(), &err);
  if (U_FAILURE(err) || c == nullptr) return "";
  const char* icu = ucnv_getName(c, &err);
  std::string name = U_SUCCESS(err) && icu ? icu : l;
  ucnv_close(c);
  for (const char* standard : {"MIME", "IANA", "WINDOWS"}) {
    UErrorCode e = U_ZERO_ERROR;
    const char* s = ucnv_getStandardName(name.c_str(), standard, &e);
    // IANA's primary names for a few encodings are long descriptions; prefer short ones.
    if (U_SUCCESS(e) && s != nullptr && std::strlen(s) <= 20) return s;
  }
  return name;
}

EncodingChoice ChooseEncoding(std::string_view probe, bool complete, bool html,
                              const std::string& forced_encoding) {
  EncodingChoice c;
  const Bom* bom = FindBom(probe);
  if (!forced_encoding.empty()) {
    c.encoding = CanonicalEncodingName(forced_encoding);
    if (c.encoding.empty()) throw std::invalid_argument("unknown encoding " + forced_encoding);
    c.how = "forced";
    if (bom != nullptr && c.encoding == bom->encoding) c.bom_bytes = bom->size;
    return c;
  }
  if (bom != nullptr) {
    c.encoding = bom->encoding;
    c.how = "bom";
    c.bom_bytes = bom->size;
    return c;
  }
  std::string_view head = probe.substr(0, std::min(probe.size(), kBinaryProbeBytes));
  if (std::memchr(head.data(), '\0', head.size()) != nullptr) {
    // UTF-16/32 without a byte-order mark, or binary.
    if (!NulsLikeUtf16Or32(head)) return c;  // binary
    for (const Match& m : DetectAll(probe, false)) {
      if (IsUnicodeFamily(m.name) && m.confidence >= kMinUnicodeConfidence) {
        c.encoding = m.name;
        c.how = "detected";
        c.confidence = m.confidence;
        return c;
      }
    }
    return c;  // binary
  }
  const Utf8Scan utf8 = ScanUtf8(probe, complete);
  if (utf8.invalid == 0) {
    if (std::memchr(probe.data(), 0x1B, probe.size()) != nullptr) {
      std::vector<Match> m = DetectAll(probe, html);
      if (!m.empty() && StartsWith(m[0].name, "ISO-2022") && m[0].confidence >= kMinConfidence) {
        c.encoding = m[0].name;
        c.how = "detected";
        c.confidence = m[0].confidence;
        return c;
      }
    }
    c.encoding = "UTF-8";
    c.how = "utf-8";
    return c;
  }
  if (utf8.multibyte >= kMostlyUtf8Ratio * utf8.invalid) {
    c.encoding = "UTF-8";  // a damaged UTF-8 file: its few bad bytes become U+FFFD
    c.how = "utf-8";
    return c;
  }
  if (html) {
    std::string declared = CanonicalEncodingName(BrowserLabel(MetaCharset(probe)));
    if (!declared.empty()) {
      // As the HTML standard says: a UTF-16/32 label without a BOM means UTF-8.
      c.encoding = IsUnicodeFamily(declared) ? "UTF-8" : declared;
      c.how = "meta";
      return c;
    }
  }
  int best = 0;
  for (const Match& m : DetectAll(probe, html)) {
    // EBCDIC (IBM420 Arabic, IBM424 Hebrew) is not kept in files on the systems we index, and
    // ucsdet proposes it for short texts in other encodings.
    if (StartsWith(m.name, "IBM42")) continue;
    best = std::max(best, m.confidence);
    if (m.confidence >= kMinConfidence && !CanonicalEncodingName(m.name).empty()) {
      c.encoding = m.name;
      c.how = "detected";
      c.confidence = m.confidence;
      return c;
    }
    break;  // matches come best first
  }
  c.encoding = kFallbackEncoding;
  c.how = "fallback";
  c.confidence = best;
  return c;
}

struct Decoder::Converter {
  static constexpr size_t kPivot = 4096;
  explicit Converter(const std::string& name) {
    UErrorCode err = U_ZERO_ERROR;
    source = ucnv_open(ConverterName(name).c_str(), &err);
    if (U_SUCCESS(err)) utf8 = ucnv_open("UTF-8", &err);
    if (U_FAILURE(err)) {
      Close();
      throw std::invalid_argument("no converter for " + name + ": " + u_errorName(err));
    }
    buffer.resize(64 << 10);
  }
  ~Converter() { Close(); }
  void Close() {
    if (source != nullptr) ucnv_close(source);
    if (utf8 != nullptr) ucnv_close(utf8);
    source = utf8 = nullptr;
  }
  UConverter* source = nullptr;
  UConverter* utf8 = nullptr;
  UChar pivot[kPivot];
  UChar* pivot_source = pivot;
  UChar* pivot_target = pivot;
  bool reset = true;
  std::string buffer;
};

Decoder::Decoder(const std::string& forced_encoding, bool html, ByteSink& out)
    : forced_(forced_encoding), html_(html), out_(out) {}

Decoder::~Decoder() = default;

void Decoder::CheckBinary(std::string_view decoded) {
  if (checked_ >= kBinaryProbeBytes) return;
  size_t n = std::min(decoded.size(), kBinaryProbeBytes - checked_);
  if (std::memchr(decoded.data(), '\0', n) != nullptr) {
    throw SkipDocument(SkipReason::kBinary, "a NUL character in " + choice_.encoding + " text");
  }
  checked_ += n;
}

void Decoder::Choose(std::string_view probe, bool complete) {
  choice_ = ChooseEncoding(probe, complete, html_, forced_);
  chosen_ = true;
  if (choice_.encoding.empty()) throw SkipDocument(SkipReason::kBinary, "");
  if (choice_.encoding == "UTF-8") {
    passthrough_ = true;
  } else {
    converter_ = std::make_unique<Converter>(choice_.encoding);
  }
}

void Decoder::Emit(std::string_view bytes, bool flush) {
  if (passthrough_) {
    CheckBinary(bytes);
    if (!bytes.empty()) out_.Write(bytes);
    return;
  }
  Converter& c = *converter_;
  static const char kNothing = 0;  // ICU refuses a null source pointer, even for no bytes
  const char* s = bytes.empty() ? &kNothing : bytes.data();
  const char* s_end = s + bytes.size();
  for (;;) {
    char* t = c.buffer.data();
    UErrorCode err = U_ZERO_ERROR;
    ucnv_convertEx(c.utf8, c.source, &t, c.buffer.data() + c.buffer.size(), &s, s_end, c.pivot,
                   &c.pivot_source, &c.pivot_target, c.pivot + Converter::kPivot, c.reset, flush,
                   &err);
    c.reset = false;
    std::string_view done(c.buffer.data(), static_cast<size_t>(t - c.buffer.data()));
    if (!done.empty()) {
      CheckBinary(done);
      out_.Write(done);
    }
    if (err == U_BUFFER_OVERFLOW_ERROR) continue;
    if (U_FAILURE(err)) {
      // Invalid input is substituted (U+FFFD), so only an internal ICU failure gets here.
      throw SkipDocument(SkipReason::kUnreadable,
                         "cannot decode " + choice_.encoding + ": " + u_errorName(err));
    }
    return;
  }
}

void Decoder::Write(std::string_view bytes) {
  if (chosen_) {
    Emit(bytes, false);
    return;
  }
  if (probe_.empty() && bytes.size() >= kProbeBytes) {
    Choose(bytes, false);  // no copy: the common case of a first read of 1 MiB
    Emit(bytes.substr(choice_.bom_bytes), false);
    return;
  }
  probe_.append(bytes);
  if (probe_.size() >= kProbeBytes) {
    Choose(probe_, false);
    std::string probe = std::move(probe_);
    probe_.clear();
    Emit(std::string_view(probe).substr(choice_.bom_bytes), false);
  }
}

void Decoder::Close() {
  if (!chosen_) {
    Choose(probe_, true);
    std::string probe = std::move(probe_);
    probe_.clear();
    Emit(std::string_view(probe).substr(choice_.bom_bytes), true);
  } else if (!passthrough_) {
    Emit({}, true);
  }
  out_.Close();
}

std::string DecodeToUtf8(std::string_view bytes, const std::string& forced_encoding, bool html,
                         std::string* encoding) {
  StringSink sink;
  Decoder d(forced_encoding, html, sink);
  d.Write(bytes);
  d.Close();
  if (encoding != nullptr) *encoding = d.encoding();
  return std::move(sink.text);
}

}  // namespace bitsift::documents
