#include "cli/output.h"

#include <bitsift/bitsift.h>

#include <cstdio>

namespace bitsift::cli {

int Fail(const std::string& message) {
  std::fprintf(stderr, "bitsift: error: %s\n", message.c_str());
  return kExitError;
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

// A string as a JSON string literal. Bytes that are not valid UTF-8 become U+FFFD.
std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // A run of bytes past ASCII, as valid UTF-8 (the library's ToValidUtf8).
      size_t end = i;
      while (end < s.size() && static_cast<unsigned char>(s[end]) >= 0x80) ++end;
      out += ToValidUtf8(s.substr(i, end - i));
      i = end;
    }
  }
  return out + "\"";
}

// ---------------------------------------------------------------------------------------------
// Query output: paths a shell can use, stale hits.

}  // namespace bitsift::cli
