// xapian_driver: the Xapian peer for bench/run. Written for bitsift's benchmark harness.
//
//   xapian_driver index DBDIR DOCDIR LISTFILE [--cjk]
//       Indexes the files named in LISTFILE (one path relative to DOCDIR per line) in that order,
//       so docid i+1 is line i. TermGenerator with no stemmer, no positions
//       (index_text_without_positions), FLAG_CJK_NGRAM with --cjk. Document data = the path.
//       Prints one JSON line: documents, seconds.
//
//   xapian_driver query DBDIR QUERYFILE OUTFILE TIMINGFILE [--cjk] [--repeat N]
//       Opens the database once, then for each query line (terms separated by spaces): turns
//       the line into terms with the same TermGenerator settings as indexing, builds
//       Query(OP_AND, terms), BoolWeight, docid order, asks for every match. Each query is
//       timed in-process (steady_clock) from term generation to the complete docid list.
//       With --repeat N the whole set runs N times (warm-up); only the last pass is reported.
//       OUTFILE: "LINENO<TAB>PATH" per match; TIMINGFILE: "LINENO<TAB>MATCHES<TAB>MICROSECONDS".
//       A line without terms is reported with MATCHES = -1.
#include <xapian.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

Xapian::TermGenerator make_generator(bool cjk) {
  Xapian::TermGenerator tg;  // no stemmer set: Xapian::Stem() (none), STEM_NONE
  tg.set_stemming_strategy(Xapian::TermGenerator::STEM_NONE);
  if (cjk) tg.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
  return tg;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

int do_index(const std::string& db_dir, const std::string& doc_dir, const std::string& list,
             bool cjk) {
  auto t0 = Clock::now();
  Xapian::WritableDatabase db(db_dir, Xapian::DB_CREATE_OR_OVERWRITE);
  Xapian::TermGenerator tg = make_generator(cjk);
  std::ifstream lf(list);
  if (!lf) {
    std::cerr << "cannot open list " << list << "\n";
    return 2;
  }
  std::string rel, text;
  std::size_t n = 0, bytes = 0;
  while (std::getline(lf, rel)) {
    if (rel.empty()) continue;
    if (!read_file(doc_dir + "/" + rel, text)) {
      std::cerr << "cannot read " << rel << "\n";
      return 2;
    }
    Xapian::Document doc;
    doc.set_data(rel);
    tg.set_document(doc);
    tg.index_text_without_positions(text);
    db.add_document(doc);
    ++n;
    bytes += text.size();
  }
  db.commit();
  db.close();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("{\"documents\":%zu,\"bytes\":%zu,\"seconds\":%.3f}\n", n, bytes, s);
  return 0;
}

int do_query(const std::string& db_dir, const std::string& qfile, const std::string& outfile,
             const std::string& timefile, bool cjk, int repeat) {
  Xapian::Database db(db_dir);
  Xapian::doccount ndocs = db.get_doccount();
  // docid -> path, loaded once before timing starts.
  std::vector<std::string> paths(db.get_lastdocid() + 1);
  for (Xapian::PostingIterator it = db.postlist_begin(""); it != db.postlist_end(""); ++it)
    paths[*it] = db.get_document(*it).get_data();

  std::vector<std::string> queries;
  {
    std::ifstream qf(qfile);
    if (!qf) {
      std::cerr << "cannot open queries " << qfile << "\n";
      return 2;
    }
    std::string line;
    while (std::getline(qf, line)) queries.push_back(line);
  }
  Xapian::TermGenerator tg = make_generator(cjk);
  Xapian::Enquire enquire(db);
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  enquire.set_docid_order(Xapian::Enquire::ASCENDING);

  std::vector<std::vector<Xapian::docid>> results(queries.size());
  std::vector<double> micros(queries.size());
  std::vector<long> counts(queries.size());
  for (int pass = 0; pass < repeat; ++pass) {
    for (std::size_t i = 0; i < queries.size(); ++i) {
      auto t0 = Clock::now();
      Xapian::Document qdoc;  // the query line's terms, generated exactly like a document's
      tg.set_document(qdoc);
      tg.index_text_without_positions(queries[i]);
      std::vector<std::string> terms;
      for (Xapian::TermIterator t = qdoc.termlist_begin(); t != qdoc.termlist_end(); ++t)
        terms.push_back(*t);
      std::vector<Xapian::docid>& r = results[i];
      r.clear();
      if (terms.empty()) {
        counts[i] = -1;
      } else {
        Xapian::Query q(Xapian::Query::OP_AND, terms.begin(), terms.end());
        enquire.set_query(q);
        Xapian::MSet mset = enquire.get_mset(0, ndocs);
        for (Xapian::MSetIterator m = mset.begin(); m != mset.end(); ++m) r.push_back(*m);
        counts[i] = static_cast<long>(r.size());
      }
      micros[i] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    }
  }
  std::FILE* out = std::fopen(outfile.c_str(), "w");
  std::FILE* tim = std::fopen(timefile.c_str(), "w");
  if (!out || !tim) {
    std::cerr << "cannot write output files\n";
    return 2;
  }
  for (std::size_t i = 0; i < queries.size(); ++i) {
    for (Xapian::docid d : results[i]) std::fprintf(out, "%zu\t%s\n", i + 1, paths[d].c_str());
    std::fprintf(tim, "%zu\t%ld\t%.2f\n", i + 1, counts[i], micros[i]);
  }
  std::fclose(out);
  std::fclose(tim);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> pos;
    bool cjk = false;
    int repeat = 1;
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--cjk"))
        cjk = true;
      else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
        repeat = std::atoi(argv[++i]);
      else
        pos.push_back(argv[i]);
    }
    if (repeat < 1) repeat = 1;
    if (pos.size() == 4 && pos[0] == "index") return do_index(pos[1], pos[2], pos[3], cjk);
    if (pos.size() == 5 && pos[0] == "query")
      return do_query(pos[1], pos[2], pos[3], pos[4], cjk, repeat);
    std::cerr
        << "usage: xapian_driver index DBDIR DOCDIR LISTFILE [--cjk]\n"
           "       xapian_driver query DBDIR QUERYFILE OUTFILE TIMINGFILE [--cjk] [--repeat N]\n";
    return 2;
  } catch (const Xapian::Error& e) {
    std::cerr << "xapian: " << e.get_description() << "\n";
    return 2;
  }
}
