// `bitsift tokenize`: the tokens of a text or a file under the token contract.
#include <bitsift/bitsift.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"

namespace bitsift::cli {

int RunTokenize(const std::vector<std::string>& args) {
  const char* usage =
      "usage: bitsift tokenize [--set] [--keep-diacritics] (--file PATH [--raw] | TEXT...)\n"
      "prints TOKEN<TAB>START<TAB>END<TAB>ROLE per token in text order ([START, END): its source\n"
      "bytes; ROLE: word, whole (a word with parts: a term, not a phrase position) or part;\n"
      "TEXTs are joined with one space), or with --set the sorted distinct terms, one a line";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "file", po::value<std::string>(),
      "tokenize this file as 'bitsift index' reads it: decompressed, decoded to UTF-8, an HTML "
      "file's text (offsets are in that text); '-' = stdin, as UTF-8")(
      "raw", "with --file: the file's bytes as UTF-8, as they are (offsets in the file)")(
      "set",
      "print the sorted distinct terms (what the index stores for a document), one a line, "
      "instead of every token in text order with its byte offsets")(
      "keep-diacritics", "as an index built with --keep-diacritics reads text: José is josé");
  po::options_description all;
  all.add(visible).add_options()("text", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("text", -1);
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, all, pos, vm)) return *code;
  std::string text;
  if (vm.count("file")) {
    if (vm.count("text")) {
      return Fail("tokenize takes --file or TEXT, not both (extra argument '" +
                  vm["text"].as<std::vector<std::string>>()[0] + "')\n" + usage);
    }
    const std::string file = vm["file"].as<std::string>();
    std::ifstream in_file;
    if (file != "-") {
      if (auto code = OpenInput(file, "the file to tokenize", &in_file)) return *code;
    }
    if (file != "-" && !vm.count("raw")) {
      // Through the document stage, as indexing reads it (the open above names a missing or
      // unreadable file as the other inputs do).
      if (Status s = ReadDocumentText(file, IndexOptions{}, &text); !s.ok()) {
        return Fail(s.message());
      }
    } else {
      std::istream& in = file == "-" ? std::cin : in_file;
      std::ostringstream buf;
      errno = 0;
      if (in.peek() != std::char_traits<char>::eof()) buf << in.rdbuf();
      if (in.bad()) {
        return Fail(file +
                    ": cannot read the file to tokenize: " + std::strerror(errno ? errno : EIO));
      }
      text = buf.str();
    }
  } else if (vm.count("raw")) {
    return Fail(std::string("--raw goes with --file\n") + usage);
  } else if (vm.count("text")) {
    for (const std::string& t : vm["text"].as<std::vector<std::string>>()) {
      if (!text.empty()) text += ' ';
      text += t;
    }
  } else {
    return Fail(std::string("nothing to tokenize\n") + usage);
  }
  uint64_t printed = 0;
  IndexOptions rules;
  rules.keep_diacritics = vm.count("keep-diacritics") > 0;
  if (vm.count("set")) {
    std::vector<std::string> terms;
    if (Status s = Tokenize(text, &terms, rules); !s.ok()) return Fail(s.message());
    for (const std::string& t : terms) {
      std::fwrite(t.data(), 1, t.size(), stdout);
      std::fputc('\n', stdout);
    }
    printed = terms.size();
  } else {
    // Printed as found: a large file needs no list of all its tokens.
    Status s = TokenizeInOrder(
        text,
        [&](const TextToken& t) {
          const char* role = t.role == TokenRole::kWhole  ? "whole"
                             : t.role == TokenRole::kPart ? "part"
                                                          : "word";
          std::printf("%s\t%" PRIu64 "\t%" PRIu64 "\t%s\n", t.token.c_str(), t.begin, t.end, role);
          ++printed;
        },
        rules);
    if (!s.ok()) return Fail(s.message());
  }
  if (printed == 0) {
    const char* what = vm.count("file") ? "file" : "text";
    std::fprintf(stderr,
                 text.empty() ? "bitsift: no tokens: the %s is empty\n"
                              : "bitsift: no tokens: the %s holds only spaces, punctuation or "
                                "symbols (tokens are runs of letters, digits, kana or ideographs; "
                                "README \"What is a term\")\n",
                 what);
    return kExitNoMatch;
  }
  return kExitMatch;
}

}  // namespace bitsift::cli
