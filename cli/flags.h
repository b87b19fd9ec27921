// Reading a command line: options parsed with Boost.Program_options and checked, numbers and
// byte counts, the index a command works on, input files. Each flag that several commands take
// is defined once here.
#ifndef BITSIFT_CLI_FLAGS_H_
#define BITSIFT_CLI_FLAGS_H_

#include <bitsift/bitsift.h>

#include <boost/program_options.hpp>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bitsift::cli {

namespace po = boost::program_options;

// Parses args into vm; returns an exit code if the command should stop: --help (printed: usage,
// the visible options, then `help_extra`), an unknown option (reported, then `unknown_hint` of
// its name if given, then usage), a malformed one, or an empty --index/--in path.
std::optional<int> Parse(const std::vector<std::string>& args, const char* usage,
                         const po::options_description& visible, const po::options_description& all,
                         const po::positional_options_description& positional,
                         po::variables_map& vm,
                         const std::function<std::string(const std::string&)>& unknown_hint = {},
                         const char* help_extra = "");

// --index: one index directory (kOne) or several answered as one (kSeveral, repeatable).
enum class IndexFlag { kOne, kSeveral };
void AddIndexFlag(po::options_description& d, IndexFlag kind);
// --threads N (default 0: one per core), read with ThreadsOption.
void AddThreadsFlag(po::options_description& d);

// The working directory (physical, as getcwd gives it), or "" if it cannot be found (then
// paths are printed absolute and no folder scope applies).
std::string WorkingDirectory();

// Reports that `path` could not be opened as `what` (errno tells why), naming a relative path's
// absolute form too; returns the error exit status.
int CannotOpen(const std::string& path, const std::string& what);

// Opens the file `path` (read as `what`) into *in; returns the error exit status, reported with
// the reason, if it cannot be opened or is a directory.
std::optional<int> OpenInput(const std::string& path, const std::string& what, std::ifstream* in);

// The index of a one-index command (IndexFlag::kOne): its --index flag, or the one Index::Find
// finds from the working directory.
Status IndexPathOption(const po::variables_map& vm, std::string* path);

// The --index flags of a command that takes several (IndexFlag::kSeveral), in order.
std::vector<std::string> IndexFlags(const po::variables_map& vm);

// Opens the indexes named by --index flags, or the one Index::Find finds from the working
// directory; *opened (if not null) receives their paths in order.
Status OpenIndex(const std::vector<std::string>& flags, std::unique_ptr<Index>* index,
                 std::vector<std::string>* opened = nullptr,
                 const OpenOptions& options = OpenOptions{});

// For a command whose only option is --index (kSeveral): parses args and opens the index.
// Returns the exit status when the command is over (help printed, bad arguments, no usable
// index).
std::optional<int> ParseAndOpenIndex(const std::vector<std::string>& args, const char* usage,
                                     std::unique_ptr<Index>* index);

// Numeric options. Each is read as text and checked here: Boost's unsigned parsing reads "-1"
// as 2^64 - 1, so a negative number would pass as a huge one.
inline constexpr uint64_t kMaxLimit = UINT32_MAX;  // document ids are 32-bit
inline constexpr uint64_t kMaxThreads = 1024;
inline constexpr uint64_t kMaxBytes = 1ULL << 40;  // 1024G for --memory and --max-file-size

// Reports on stderr that option `name` must be `what`, quoting what it got; returns nullopt.
std::nullopt_t BadNumber(const char* name, const std::string& what, const std::string& text);

// A byte count with an optional unit: 300000000, 512K, 256M, 256MiB, 1G, 1GB (powers of 1024);
// nullopt if `text` is not one.
std::optional<uint64_t> ParseBytes(const std::string& text);

// A whole number written with decimal digits only (no sign, space or unit); nullopt if `text`
// is not one or does not fit in 64 bits.
std::optional<uint64_t> ParseWhole(const std::string& text);

// The whole-number option `name` of vm, in [min, max]; nullopt (reported) otherwise. `what`
// says what the number means, for the message.
std::optional<uint64_t> WholeOption(const po::variables_map& vm, const char* name, uint64_t min,
                                    uint64_t max, const std::string& what);

// The byte-count option `name` of vm (units K, M, G), in [min, kMaxBytes]; nullopt (reported)
// otherwise.
std::optional<uint64_t> BytesOption(const po::variables_map& vm, const char* name, uint64_t min,
                                    const std::string& min_text);

// --fp-rate: a decimal number in [1e-9, 1); nullopt (reported) otherwise.
std::optional<double> FpRateOption(const po::variables_map& vm);

// The cores this process may run on (its CPU affinity, as TBB counts them).
unsigned AvailableCores();

// --threads: 0 (one per core) or a count, capped at AvailableCores() with a note; nullopt
// (reported) for a bad value.
std::optional<unsigned> ThreadsOption(const po::variables_map& vm);

}  // namespace bitsift::cli

#endif  // BITSIFT_CLI_FLAGS_H_
