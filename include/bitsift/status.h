// Status: the outcome of every call of the library (no exception crosses it).
#ifndef BITSIFT_STATUS_H_
#define BITSIFT_STATUS_H_

#include <string>
#include <utility>

namespace bitsift {

// The outcome of a call: ok, or a code and a one-line message naming the path and the cause.
// A damaged index's status (kCorrupt) also names its repair: the message ends with it, for
// people, and repair() gives the command alone, for programs.
class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // bad options, a query without terms
    kNotFound,         // a missing directory or index
    kCorrupt,          // an index that is damaged, truncated, or of another format/version
    kIoError,          // the operating system refused (permissions, full disk, ...)
    kInternal,         // out of memory or a bug
    kBusy,             // another writer holds the index (try again later)
    kStale,            // a document's file changed or vanished since it was indexed
  };
  Status() = default;
  Status(Code code, std::string message, std::string repair = {})
      : code_(code), message_(std::move(message)), repair_(std::move(repair)) {}
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The shell command that repairs what failed ("bitsift index --rebuild ROOT --index PATH"
  // for a damaged index), or "" when there is none (an index of in-memory documents is rebuilt
  // from its documents: BuildIndexFromDocuments).
  const std::string& repair() const { return repair_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::string repair_;
};

}  // namespace bitsift

#endif  // BITSIFT_STATUS_H_
