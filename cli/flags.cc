#include "cli/flags.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "cli/output.h"

namespace bitsift::cli {
namespace {

// The first path option (--index, --in) given as an empty string, or nullptr: '' names no file,
// and would otherwise be reported later as the current directory, which exists.
const char* EmptyPathOption(const po::variables_map& vm) {
  for (const char* name : {"index", "in"}) {
    if (!vm.count(name)) continue;
    const boost::any& value = vm[name].value();
    if (const auto* one = boost::any_cast<std::string>(&value); one != nullptr && one->empty()) {
      return name;
    }
    if (const auto* many = boost::any_cast<std::vector<std::string>>(&value); many != nullptr) {
      for (const std::string& v : *many) {
        if (v.empty()) return name;
      }
    }
  }
  return nullptr;
}

}  // namespace

// Parses args into vm; returns an exit code if the command should stop (help or a bad flag).
// `unknown_hint`, if given, is printed after the message for an unknown option; `help_extra`
// after the options in --help.
std::optional<int> Parse(const std::vector<std::string>& args, const char* usage,
                         const po::options_description& visible, const po::options_description& all,
                         const po::positional_options_description& positional,
                         po::variables_map& vm,
                         const std::function<std::string(const std::string&)>& unknown_hint,
                         const char* help_extra) {
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n" << visible << help_extra;
      return kExitMatch;
    }
    po::notify(vm);
    if (const char* empty = EmptyPathOption(vm)) {
      std::fprintf(stderr, "bitsift: error: --%s: an empty path (an unset shell variable?)\n%s\n",
                   empty, usage);
      return kExitError;
    }
  } catch (const po::unknown_option& e) {
    const std::string hint = unknown_hint ? unknown_hint(e.get_option_name()) : "";
    std::fprintf(stderr, "bitsift: error: unknown option '%s'\n%s%s\n", e.get_option_name().c_str(),
                 hint.c_str(), usage);
    return kExitError;
  } catch (const po::error& e) {
    std::fprintf(stderr, "bitsift: error: %s\n%s\n", e.what(), usage);
    return kExitError;
  }
  return std::nullopt;
}

// The working directory (physical, as getcwd gives it), or "" if it cannot be found (then
// paths are printed absolute and no folder scope applies).
std::string WorkingDirectory() {
  std::vector<char> buf(4096);
  while (::getcwd(buf.data(), buf.size()) == nullptr) {
    if (errno != ERANGE) return "";
    buf.resize(buf.size() * 2);
  }
  return buf.data();
}

// Reports that `path` could not be opened as `what` (errno tells why), naming a relative path's
// absolute form too; returns the error exit code.
int CannotOpen(const std::string& path, const std::string& what) {
  const int err = errno;
  std::string where;
  const std::string cwd = WorkingDirectory();
  if (!path.empty() && path[0] != '/' && !cwd.empty()) {
    where = " (" + (cwd == "/" ? "" : cwd) + "/" + path + ")";
  }
  return Fail(path + ": cannot open " + what + where + ": " + std::strerror(err));
}

// Opens the file `path` (read as `what`) into *in; returns the error exit code, reported with
// the reason, if it cannot be opened or is a directory (which opens, then fails to read).
std::optional<int> OpenInput(const std::string& path, const std::string& what, std::ifstream* in) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return CannotOpen(path, what);
  }
  in->open(path, std::ios::binary);
  if (!*in) return CannotOpen(path, what);
  return std::nullopt;
}

// The index of a one-index command: its --index flag, or the one Index::Find finds from the
// working directory.
Status IndexPathOption(const po::variables_map& vm, std::string* path) {
  if (vm.count("index")) {
    *path = Index::Resolve(vm["index"].as<std::string>());
    return Status();
  }
  return Index::Find(".", path);
}

// Opens the indexes named by --index flags, or the one Index::Find finds from the working
// directory; *opened (if not null) receives their paths in order.
Status OpenIndex(const std::vector<std::string>& flags, std::unique_ptr<Index>* index,
                 std::vector<std::string>* opened, const OpenOptions& options) {
  std::vector<std::string> paths = flags;
  if (paths.empty()) {
    std::string path;
    Status s = Index::Find(".", &path);
    if (!s.ok()) return s;
    paths.push_back(path);
  }
  Status s = Index::Open(paths, options, index);
  if (s.ok() && opened != nullptr) *opened = (*index)->paths();
  return s;
}

std::vector<std::string> IndexFlags(const po::variables_map& vm) {
  std::vector<std::string> paths;
  if (vm.count("index")) {
    for (const std::string& p : vm["index"].as<std::vector<std::string>>()) {
      paths.push_back(Index::Resolve(p));
    }
  }
  return paths;
}

// Parses a byte count with an optional unit: 300000000, 512K, 256M, 256MiB, 1G, 1GB (powers of
// 1024). Returns nullopt if it is not one.
std::optional<uint64_t> ParseBytes(const std::string& text) {
  size_t end = 0;
  uint64_t v = 0;
  try {
    if (text.empty() || text[0] == '-') return std::nullopt;
    v = std::stoull(text, &end);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string unit = text.substr(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  uint64_t mult = 1;
  if (unit.empty() || unit == "B") {
    mult = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    mult = 1ULL << 10;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    mult = 1ULL << 20;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    mult = 1ULL << 30;
  } else {
    return std::nullopt;
  }
  if (v > UINT64_MAX / mult) return std::nullopt;
  return v * mult;
}

// ---------------------------------------------------------------------------------------------
// Numeric options. Each is read as text and checked here: Boost's unsigned parsing reads "-1"
// as 2^64 - 1, so a negative number would pass as a huge one.

// Reports on stderr that option `name` must be `what`, quoting what it got; returns nullopt.
std::nullopt_t BadNumber(const char* name, const std::string& what, const std::string& text) {
  Fail(std::string("--") + name + " must be " + what + ", got '" + text + "'");
  return std::nullopt;
}

// Parses a whole number written with decimal digits only (no sign, space or unit); nullopt if
// `text` is not one or does not fit in 64 bits.
std::optional<uint64_t> ParseWhole(const std::string& text) {
  if (text.empty() || text.size() > 20 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  errno = 0;
  uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

// The whole-number option `name` of vm, in [min, max]; nullopt (reported) otherwise. `what`
// says what the number means, for the message.
std::optional<uint64_t> WholeOption(const po::variables_map& vm, const char* name, uint64_t min,
                                    uint64_t max, const std::string& what) {
  const std::string text = vm[name].as<std::string>();
  std::optional<uint64_t> v = ParseWhole(text);
  if (!v || *v < min || *v > max) {
    return BadNumber(name,
                     "a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                         " (" + what + ")",
                     text);
  }
  return v;
}

// The byte-count option `name` of vm (units K, M, G), in [min, kMaxBytes]; nullopt (reported)
// otherwise.
std::optional<uint64_t> BytesOption(const po::variables_map& vm, const char* name, uint64_t min,
                                    const std::string& min_text) {
  const std::string text = vm[name].as<std::string>();
  std::optional<uint64_t> v = ParseBytes(text);
  if (!v || *v < min || *v > kMaxBytes) {
    return BadNumber(
        name, "a byte count from " + min_text + " to 1024G (e.g. 300000, 512K, 256M, 1G)", text);
  }
  return v;
}

// --fp-rate: a decimal number in [1e-9, 1) (below that the signatures grow without use).
std::optional<double> FpRateOption(const po::variables_map& vm) {
  const std::string text = vm["fp-rate"].as<std::string>();
  char* end = nullptr;
  errno = 0;
  double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                 ? 0
                 : std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < 1e-9 ||
      v >= 1) {
    return BadNumber("fp-rate", "a false-positive rate from 1e-9 to below 1 (e.g. 0.01)", text);
  }
  return v;
}

// The cores this process may run on (its CPU affinity, as TBB counts them).
unsigned AvailableCores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<unsigned>(CPU_COUNT(&set));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// --threads: 0 (one per core) to kMaxThreads; above the cores available it is capped with a
// note on stderr (more threads than cores only add contention).
std::optional<unsigned> ThreadsOption(const po::variables_map& vm) {
  std::optional<uint64_t> v = WholeOption(vm, "threads", 0, kMaxThreads, "0 = one per core");
  if (!v) return std::nullopt;
  const unsigned cores = AvailableCores();
  if (*v > cores) {
    std::fprintf(stderr,
                 "bitsift: note: --threads %" PRIu64 " is more than the %s available; using %u\n",
                 *v, Plural(cores, "core", "cores").c_str(), cores);
    return cores;
  }
  return static_cast<unsigned>(*v);
}

// For a command whose only option is --index: parses args and opens the index. Returns the
// exit code when the command is over (help printed, bad arguments, no usable index).
std::optional<int> ParseAndOpenIndex(const std::vector<std::string>& args, const char* usage,
                                     std::unique_ptr<Index>* index) {
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help");
  AddIndexFlag(visible, IndexFlag::kSeveral);
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, visible, pos, vm)) return code;
  OpenOptions open;
  open.map_ahead = false;  // one pass, then exit: mapping ahead would only add to it
  Status s = OpenIndex(IndexFlags(vm), index, nullptr, open);
  if (!s.ok()) return Fail(s.message());
  return std::nullopt;
}

void AddIndexFlag(po::options_description& d, IndexFlag kind) {
  if (kind == IndexFlag::kOne) {
    d.add_options()("index", po::value<std::string>(),
                    "index directory (default: .bitsift here or in a parent)");
  } else {
    d.add_options()("index", po::value<std::vector<std::string>>(),
                    "index directory (default: .bitsift here or in a parent); repeat to search "
                    "several as one");
  }
}

void AddThreadsFlag(po::options_description& d) {
  d.add_options()("threads", po::value<std::string>()->default_value("0"),
                  "worker threads (0 = one per core; capped at the cores available)");
}

}  // namespace bitsift::cli
