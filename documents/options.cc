#include "documents/options.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "documents/decode.h"
#include "util/error.h"

namespace bitsift::documents {
namespace {

constexpr const char* kEncoding = "documents.encoding";
constexpr const char* kHidden = "documents.hidden";
constexpr const char* kNoIgnore = "documents.no_ignore";
constexpr const char* kGlobs = "documents.globs";
constexpr const char* kMaxDecompressed = "documents.max_decompressed_bytes";
constexpr const char* kReaders = "documents.readers";
constexpr const char* kShard = "documents.shard";

bool ParseBool(const std::string& key, const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  throw Error(ErrorKind::kCorrupt, "setting " + key + ": not true or false: " + v);
}

}  // namespace

void DocumentOptions::Validate() const {
  Ensure(encoding.empty() || !CanonicalEncodingName(encoding).empty(), ErrorKind::kInvalidArgument,
         "--encoding " + encoding + ": unknown encoding");
  for (const std::string& g : globs) {
    Ensure(!g.empty() && g != "!" && g.find('\n') == std::string::npos, ErrorKind::kInvalidArgument,
           "--glob '" + g + "': empty or holds a newline");
  }
  Ensure(max_decompressed_bytes > 0, ErrorKind::kInvalidArgument,
         "the decompressed size limit must be positive");
  Ensure(
      shard_count == 0 || shard < shard_count, ErrorKind::kInvalidArgument,
      "shard " + std::to_string(shard) + " of " + std::to_string(shard_count) + ": no such shard");
}

uint32_t ShardOfPath(std::string_view relative_path, uint32_t shards) {
  return static_cast<uint32_t>(XXH3_64bits(relative_path.data(), relative_path.size()) % shards);
}

std::map<std::string, std::string> DocumentOptions::ToSettings() const {
  std::string joined;
  for (size_t i = 0; i < globs.size(); ++i) joined += (i ? "\n" : "") + globs[i];
  std::map<std::string, std::string> out = {
      {kEncoding, encoding},
      {kHidden, hidden ? "true" : "false"},
      {kNoIgnore, no_ignore ? "true" : "false"},
      {kGlobs, joined},
      {kMaxDecompressed, std::to_string(max_decompressed_bytes)},
      {kReaders, std::string(read_man ? "man" : "") + (read_man && read_pdf ? "," : "") +
                     (read_pdf ? "pdf" : "")}};
  if (shard_count > 0) out[kShard] = std::to_string(shard) + "/" + std::to_string(shard_count);
  return out;
}

DocumentOptions DocumentOptions::FromSettings(const std::map<std::string, std::string>& settings) {
  DocumentOptions o;
  o.read_man = o.read_pdf = false;  // unless the settings name them
  for (const auto& [key, value] : settings) {
    if (key.compare(0, 10, "documents.") != 0) continue;
    if (key == kEncoding) {
      o.encoding = value;
    } else if (key == kHidden) {
      o.hidden = ParseBool(key, value);
    } else if (key == kNoIgnore) {
      o.no_ignore = ParseBool(key, value);
    } else if (key == kGlobs) {
      o.globs.clear();
      size_t start = 0;
      while (start < value.size()) {
        size_t nl = value.find('\n', start);
        if (nl == std::string::npos) nl = value.size();
        o.globs.push_back(value.substr(start, nl - start));
        start = nl + 1;
      }
    } else if (key == kMaxDecompressed) {
      errno = 0;
      char* end = nullptr;
      unsigned long long v = std::strtoull(value.c_str(), &end, 10);
      Ensure(!value.empty() && value[0] != '-' && *end == '\0' && errno == 0 && v > 0,
             ErrorKind::kCorrupt, "setting " + key + ": not a positive number: " + value);
      o.max_decompressed_bytes = v;
    } else if (key == kReaders) {
      size_t start = 0;
      while (start < value.size()) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        const std::string reader = value.substr(start, comma - start);
        if (reader == "man") {
          o.read_man = true;
        } else if (reader == "pdf") {
          o.read_pdf = true;
        } else {
          throw Error(ErrorKind::kCorrupt, "setting " + key + ": unknown reader " + reader +
                                               " (written by a newer bitsift?)");
        }
        start = comma + 1;
      }
    } else if (key == kShard) {
      unsigned long long shard = 0, count = 0;
      char tail = 0;
      Ensure(std::sscanf(value.c_str(), "%llu/%llu%c", &shard, &count, &tail) == 2 && count > 0 &&
                 shard < count && count <= UINT32_MAX,
             ErrorKind::kCorrupt, "setting " + key + ": not SHARD/COUNT: " + value);
      o.shard = static_cast<uint32_t>(shard);
      o.shard_count = static_cast<uint32_t>(count);
    } else {
      throw Error(ErrorKind::kCorrupt, "unknown setting " + key + " (written by a newer bitsift?)");
    }
  }
  return o;
}

}  // namespace bitsift::documents
