// Internal error handling: code inside the library throws bitsift::Error; the public API
// (api/bitsift.cc) catches it and returns a Status. No exception crosses the public API.
#ifndef BITSIFT_UTIL_ERROR_H_
#define BITSIFT_UTIL_ERROR_H_

#include <cstdint>
#include <stdexcept>
#include <string>

namespace bitsift {

// Kinds mirror bitsift::Status::Code in the public header.
enum class ErrorKind { kInvalidArgument, kIo, kCorrupt, kNotFound, kBusy };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// Throws Error(kind, message) unless condition holds. The message is an argument, so it is
// made before the call whether or not it is needed: a literal costs nothing (the const char*
// overload makes no std::string), but a message built by concatenation is built every time.
// Inside a loop, test first: `if (!condition) [[unlikely]] throw Error(kind, a + b);` (a
// concatenated message per candidate was 0.8 ms of a 10.7k-candidate query).
inline void Ensure(bool condition, ErrorKind kind, const char* message) {
  if (!condition) [[unlikely]]
    throw Error(kind, message);
}
inline void Ensure(bool condition, ErrorKind kind, const std::string& message) {
  if (!condition) [[unlikely]]
    throw Error(kind, message);
}

// "path: what: strerror(errno)" for a failed system call.
std::string ErrnoMessage(const std::string& path, const std::string& what, int err);

// "1 byte", "2 bytes": a count and its noun for messages.
inline std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace bitsift

#endif  // BITSIFT_UTIL_ERROR_H_
