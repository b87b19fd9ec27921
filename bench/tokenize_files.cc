// tokenize_files DIR: the oracle's tokenizer in one process for many documents.
//
// Reads relative paths (one a line) on standard input and prints, for each, the line
// `PATH<TAB>TOKEN TOKEN ...`: the document's sorted distinct terms, exactly what
// `bitsift tokenize --set --file DIR/PATH` prints one a line (the text indexing reads,
// ReadDocumentText: decompressed, decoded, a man page or HTML file's text; then the library's
// public Tokenize). bench/oracle.py started one such process per document; 8 ms of process
// start-up each made linux-paras' 1.2M documents a 2.6-hour oracle. Exit 0, or 2 with a
// message naming the first file that cannot be read.
#include <bitsift/bitsift.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tokenize_files DIR < relative-paths\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::string rel, line, text;
  std::vector<std::string> terms;
  while (std::getline(std::cin, rel)) {
    if (rel.empty()) continue;
    if (bitsift::Status s = bitsift::ReadDocumentText(dir + "/" + rel, {}, &text); !s.ok()) {
      std::fprintf(stderr, "tokenize_files: %s\n", s.message().c_str());
      return 2;
    }
    if (bitsift::Status s = bitsift::Tokenize(text, &terms); !s.ok()) {
      std::fprintf(stderr, "tokenize_files: %s: %s\n", rel.c_str(), s.message().c_str());
      return 2;
    }
    line = rel;
    line += '\t';
    for (size_t i = 0; i < terms.size(); ++i) {
      if (i != 0) line += ' ';
      line += terms[i];
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  return std::fflush(stdout) == 0 ? 0 : 2;
}
