// xapian_driver: the Xapian peer for bench/run. Written for bitsift's benchmark harness.
//
//   xapian_driver index DBDIR DOCDIR LISTFILE [--cjk] [--idterms]
//       Indexes the files named in LISTFILE (one path relative to DOCDIR per line) in that order,
//       so docid i+1 is line i. TermGenerator with no stemmer, no positions
//       (index_text_without_positions), FLAG_CJK_NGRAM with --cjk. Document data = the path.
//       --idterms also adds Xapian's conventional unique-id term ("Q" + path) to each document,
//       so that `update` can replace or delete a document by its path (bench/living uses it;
//       bench/run does not). Prints one JSON line: documents, seconds.
//
//   xapian_driver update DBDIR DOCDIR CHANGES [--cjk]
//       Applies one batch of changes to a database built with --idterms, in one transaction
//       (one commit): CHANGES has one line per operation, "-<TAB>PATH" (the document is gone or
//       changed) or "+<TAB>PATH" (index the file DOCDIR/PATH). A path with both is a changed
//       document: replace_document("Q" + path, new document). "-" alone: delete_document(term);
//       "+" alone: replace_document(term, doc), which adds it. Prints one JSON line: documents
//       after the update, deleted, replaced, added, seconds.
//
//   xapian_driver oneshot DBDIR QUERY [--cjk]
//       One query in one process, as a command-line search would run it (bench/living's control
//       beside `quest`): opens the database, turns QUERY into terms exactly as `query` does
//       (TermGenerator, no stemmer, no stopwords), OP_AND, BoolWeight, docid order, every match,
//       and prints each match's path (document data), one per line. Exit 0 matches, 1 none.
//
//   xapian_driver query DBDIR QUERYFILE OUTFILE TIMINGFILE [--cjk] [--repeat N]
//       Opens the database once, then for each query line (terms separated by spaces): turns
//       the line into terms with the same TermGenerator settings as indexing, builds
//       Query(OP_AND, terms), BoolWeight, docid order, asks for every match. Each query is
//       timed in-process (steady_clock) from term generation to the complete docid list.
//       With --repeat N the whole set runs N times (warm-up); only the last pass is reported.
//       OUTFILE: "LINENO<TAB>PATH" per match; TIMINGFILE: "LINENO<TAB>MATCHES<TAB>MICROSECONDS".
//       A line without terms is reported with MATCHES = -1.
//
//   --positions (index): index_text with positions, so phrase queries work (bench/phrases).
//   --parse (query): each line goes through Xapian::QueryParser (FLAG_PHRASE | FLAG_BOOLEAN |
//       FLAG_LOVEHATE | FLAG_WILDCARD, default operator AND, no stemming): "a b" phrases,
//       a OR b, -x, pre*; the time includes parsing. A line that does not parse: MATCHES = -1.
#include <xapian.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

bool g_positions = false;  // --positions
bool g_parse = false;      // --parse

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

// Xapian's unique-id term for a path. Terms are limited to 245 bytes: longer paths are replaced
// by an FNV-1a hash (no corpus here has such paths; the hash keeps the driver total).
std::string id_term(const std::string& rel) {
  if (rel.size() <= 200) return "Q" + rel;
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : rel) h = (h ^ c) * 1099511628211ull;
  char buf[32];
  std::snprintf(buf, sizeof buf, "QH%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool make_document(Xapian::TermGenerator& tg, const std::string& doc_dir, const std::string& rel,
                   bool idterms, Xapian::Document& doc, std::string& text) {
  if (!read_file(doc_dir + "/" + rel, text)) return false;
  doc.set_data(rel);
  if (idterms) doc.add_boolean_term(id_term(rel));
  tg.set_document(doc);
  if (g_positions) {
    tg.index_text(text);
  } else {
    tg.index_text_without_positions(text);
  }
  return true;
}

int do_index(const std::string& db_dir, const std::string& doc_dir, const std::string& list,
             bool cjk, bool idterms) {
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
    Xapian::Document doc;
    if (!make_document(tg, doc_dir, rel, idterms, doc, text)) {
      std::cerr << "cannot read " << rel << "\n";
      return 2;
    }
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

int do_update(const std::string& db_dir, const std::string& doc_dir, const std::string& changes,
              bool cjk) {
  auto t0 = Clock::now();
  std::ifstream cf(changes);
  if (!cf) {
    std::cerr << "cannot open changes " << changes << "\n";
    return 2;
  }
  std::set<std::string> removed, added;
  std::string line;
  while (std::getline(cf, line)) {
    if (line.size() < 3 || line[1] != '\t' || (line[0] != '-' && line[0] != '+')) continue;
    (line[0] == '-' ? removed : added).insert(line.substr(2));
  }
  Xapian::WritableDatabase db(db_dir, Xapian::DB_OPEN);
  Xapian::TermGenerator tg = make_generator(cjk);
  std::size_t n_del = 0, n_rep = 0, n_add = 0;
  std::string text;
  db.begin_transaction();
  for (const std::string& rel : removed) {
    if (added.count(rel)) continue;
    db.delete_document(id_term(rel));
    ++n_del;
  }
  for (const std::string& rel : added) {
    Xapian::Document doc;
    if (!make_document(tg, doc_dir, rel, true, doc, text)) {
      std::cerr << "cannot read " << rel << "\n";
      return 2;
    }
    db.replace_document(id_term(rel), doc);
    ++(removed.count(rel) ? n_rep : n_add);
  }
  db.commit_transaction();
  Xapian::doccount n = db.get_doccount();
  db.close();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "{\"documents\":%u,\"deleted\":%zu,\"replaced\":%zu,\"added\":%zu,"
      "\"seconds\":%.3f}\n",
      n, n_del, n_rep, n_add, s);
  return 0;
}

int do_oneshot(const std::string& db_dir, const std::string& query, bool cjk) {
  Xapian::Database db(db_dir);
  Xapian::TermGenerator tg = make_generator(cjk);
  Xapian::Document qdoc;
  tg.set_document(qdoc);
  tg.index_text_without_positions(query);
  std::vector<std::string> terms;
  for (Xapian::TermIterator t = qdoc.termlist_begin(); t != qdoc.termlist_end(); ++t)
    terms.push_back(*t);
  if (terms.empty()) {
    std::cerr << "query without terms\n";
    return 2;
  }
  Xapian::Enquire enquire(db);
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  enquire.set_docid_order(Xapian::Enquire::ASCENDING);
  enquire.set_query(Xapian::Query(Xapian::Query::OP_AND, terms.begin(), terms.end()));
  Xapian::MSet mset = enquire.get_mset(0, db.get_doccount());
  for (Xapian::MSetIterator m = mset.begin(); m != mset.end(); ++m) {
    const std::string data = m.get_document().get_data();
    std::fwrite(data.data(), 1, data.size(), stdout);
    std::fputc('\n', stdout);
  }
  return mset.empty() ? 1 : 0;
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
  Xapian::QueryParser qp;
  qp.set_database(db);
  qp.set_default_op(Xapian::Query::OP_AND);
  qp.set_stemming_strategy(Xapian::QueryParser::STEM_NONE);
  const unsigned qp_flags = Xapian::QueryParser::FLAG_PHRASE | Xapian::QueryParser::FLAG_BOOLEAN |
                            Xapian::QueryParser::FLAG_LOVEHATE |
                            Xapian::QueryParser::FLAG_WILDCARD |
                            (cjk ? unsigned{Xapian::QueryParser::FLAG_CJK_NGRAM} : 0u);

  std::vector<std::vector<Xapian::docid>> results(queries.size());
  std::vector<double> micros(queries.size());
  std::vector<long> counts(queries.size());
  for (int pass = 0; pass < repeat; ++pass) {
    for (std::size_t i = 0; i < queries.size(); ++i) {
      auto t0 = Clock::now();
      if (g_parse) {
        std::vector<Xapian::docid>& r = results[i];
        r.clear();
        try {
          enquire.set_query(qp.parse_query(queries[i], qp_flags));
          Xapian::MSet mset = enquire.get_mset(0, ndocs);
          for (Xapian::MSetIterator m = mset.begin(); m != mset.end(); ++m) r.push_back(*m);
          counts[i] = static_cast<long>(r.size());
        } catch (const Xapian::QueryParserError&) {
          counts[i] = -1;
        }
        micros[i] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        continue;
      }
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
    bool cjk = false, idterms = false;
    int repeat = 1;
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--cjk"))
        cjk = true;
      else if (!std::strcmp(argv[i], "--idterms"))
        idterms = true;
      else if (!std::strcmp(argv[i], "--positions"))
        g_positions = true;
      else if (!std::strcmp(argv[i], "--parse"))
        g_parse = true;
      else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
        repeat = std::atoi(argv[++i]);
      else
        pos.push_back(argv[i]);
    }
    if (repeat < 1) repeat = 1;
    if (pos.size() == 4 && pos[0] == "index") return do_index(pos[1], pos[2], pos[3], cjk, idterms);
    if (pos.size() == 4 && pos[0] == "update") return do_update(pos[1], pos[2], pos[3], cjk);
    if (pos.size() == 3 && pos[0] == "oneshot") return do_oneshot(pos[1], pos[2], cjk);
    if (pos.size() == 5 && pos[0] == "query")
      return do_query(pos[1], pos[2], pos[3], pos[4], cjk, repeat);
    std::cerr
        << "usage: xapian_driver index DBDIR DOCDIR LISTFILE [--cjk] [--idterms]\n"
           "       xapian_driver update DBDIR DOCDIR CHANGES [--cjk]\n"
           "       xapian_driver oneshot DBDIR QUERY [--cjk]\n"
           "       xapian_driver query DBDIR QUERYFILE OUTFILE TIMINGFILE [--cjk] [--repeat N]\n";
    return 2;
  } catch (const Xapian::Error& e) {
    std::cerr << "xapian: " << e.get_description() << "\n";
    return 2;
  }
}
