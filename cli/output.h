// What every command prints alike: exit statuses, error lines, counts, sizes, JSON strings.
#ifndef BITSIFT_CLI_OUTPUT_H_
#define BITSIFT_CLI_OUTPUT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace bitsift::cli {

// The exit statuses of every command: success or matches found, no match, error.
inline constexpr int kExitMatch = 0, kExitNoMatch = 1, kExitError = 2;

// Prints "bitsift: error: MESSAGE" on stderr; returns kExitError.
int Fail(const std::string& message);

// "1 file", "2 files".
std::string Plural(uint64_t n, const char* one, const char* many);

// A byte count for people, in powers of 1000: "812 B", "16.3 KB", "1.3 GB".
std::string HumanBytes(double bytes);

// A string as a JSON string literal. Bytes that are not valid UTF-8 become U+FFFD.
std::string JsonString(std::string_view s);

}  // namespace bitsift::cli

#endif  // BITSIFT_CLI_OUTPUT_H_
