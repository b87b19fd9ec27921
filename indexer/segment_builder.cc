#include "indexer/segment_builder.h"

#include <malloc.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <unicode/uversion.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "format/bloom.h"
#include "format/dictionary.h"
#include "format/doc_bands.h"
#include "format/doc_table.h"
#include "format/forward_store.h"
#include "format/index_format.h"
#include "format/rank_bounds.h"
#include "format/sparse_rows.h"
#include "indexer/bands.h"
#include "indexer/signature_rows.h"
#include "indexer/sparse_lists.h"
#include "tokenizer/stemmer.h"
#include "util/error.h"
#include "util/varint.h"

namespace bitsift::indexer {
namespace {

// Collects a document's distinct tokens, each with its HashTerm (computed once: interning takes
// it too): an open-addressing table of indexes into the tokens, whose bytes share one arena. It
// keeps its memory from document to document (a thread's collector serves many) and Clear
// empties only the slots in use, so a small document after a large one costs no more than
// itself.
class DistinctTokens : public tokenizer::TokenSink {
 public:
  struct Token {
    uint64_t hash;
    uint32_t begin, size;  // in bytes()
    uint32_t slot;         // in the table
    uint32_t tf;           // occurrences
  };

  // With `stems`, every stemmable token also adds its stem term (tokenizer/stemmer.h); with
  // `sequence`, the phrase positions are recorded (sequence()).
  explicit DistinctTokens(bool stems = false, bool sequence = true)
      : stems_(stems), record_sequence_(sequence) {}

  void OnToken(std::string_view token, tokenizer::TokenRole role) override {
    if (role != tokenizer::TokenRole::kPart) ++words_;
    const uint32_t k = Add(token);
    if (record_sequence_ && tokenizer::IsPosition(role))
      PutVarint(uint64_t{k} * 2 + run_start_, sequence_);
    run_start_ = false;
    if (stems_ && tokenizer::Stemmable(token)) Add(tokenizer::StemTerm(token));
  }

  void OnRunStart() override { run_start_ = true; }

  // Counts one occurrence of the term `token`; returns its index in tokens().
  uint32_t Add(std::string_view token) {
    const uint64_t hash = format::HashTerm(token);
    if ((tokens_.size() + 1) * 2 > table_.size()) Grow();
    const size_t mask = table_.size() - 1;
    size_t i = hash & mask;
    for (; table_[i] != kEmpty; i = (i + 1) & mask) {
      Token& t = tokens_[table_[i]];
      if (t.hash == hash && Text(t) == token) {
        t.tf += t.tf < UINT32_MAX;
        repeated_ = true;
        return table_[i];
      }
    }
    Ensure(bytes_.size() + token.size() <= UINT32_MAX, ErrorKind::kInvalidArgument,
           "a document with more than 4 GiB of distinct tokens");
    table_[i] = static_cast<uint32_t>(tokens_.size());
    tokens_.push_back(Token{hash, static_cast<uint32_t>(bytes_.size()),
                            static_cast<uint32_t>(token.size()), static_cast<uint32_t>(i), 1});
    bytes_.append(token);
    return table_[i];
  }

  const std::vector<Token>& tokens() const { return tokens_; }
  // The document's words: tokens that are not parts (BM25's document length).
  uint64_t words() const { return words_; }
  // Whether a token occurred more than once.
  bool repeated() const { return repeated_; }
  // The phrase positions in order, each a varint: the index in tokens() of its token * 2, + 1
  // if it starts a kana/ideographic run (tokenizer::TokenSink::OnRunStart).
  const std::string& sequence() const { return sequence_; }
  std::string_view Text(const Token& t) const {
    return std::string_view(bytes_.data() + t.begin, t.size);
  }

  void Clear() {
    for (const Token& t : tokens_) table_[t.slot] = kEmpty;
    tokens_.clear();
    bytes_.clear();
    sequence_.clear();
    words_ = 0;
    repeated_ = false;
    run_start_ = false;
  }

 private:
  bool run_start_ = false;  // the next token starts a run (OnRunStart)
  static constexpr uint32_t kEmpty = UINT32_MAX;

  // Doubles the table (at most half full), placing every token again.
  void Grow() {
    table_.assign(std::max<size_t>(table_.size() * 2, 256), kEmpty);
    const size_t mask = table_.size() - 1;
    for (uint32_t k = 0; k < tokens_.size(); ++k) {
      size_t i = tokens_[k].hash & mask;
      while (table_[i] != kEmpty) i = (i + 1) & mask;
      table_[i] = k;
      tokens_[k].slot = static_cast<uint32_t>(i);
    }
  }

  std::vector<uint32_t> table_;  // kEmpty or an index into tokens_
  std::vector<Token> tokens_;
  std::string bytes_;
  std::string sequence_;
  uint64_t words_ = 0;
  bool repeated_ = false;
  bool stems_ = false;
  bool record_sequence_ = true;
};

// The dictionary of a segment: df and hash by final term id, and the encoded sections.
struct TermArrays {
  std::vector<uint32_t> df;
  std::vector<uint64_t> hashes;
  std::string dict_blocks;
  std::vector<format::DictBlockRecord> dict_index;
  std::vector<uint32_t> term_filter;
};

// The documents' part of the file.
struct DocumentTable {
  std::vector<format::DocRecord> records;
  std::string paths;
  std::vector<std::string> encodings;  // by DocRecord::encoding: "UTF-8", then by first use
  uint64_t postings = 0;
  uint64_t input_bytes = 0;
};

}  // namespace

std::string NewSegmentMeta(format::MetaRecord m, const std::string& root) {
  m.build_time_unix = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  m.contract_version = format::kContractVersion;
  std::memset(m.icu_version, 0, sizeof(m.icu_version));
  std::strncpy(m.icu_version, U_ICU_VERSION, sizeof(m.icu_version) - 1);
  std::string meta(reinterpret_cast<const char*>(&m), sizeof(m));
  return meta + root;
}

SegmentBuilder::SegmentBuilder(double fp_rate, uint32_t sparse_max_df, tokenizer::TokenRules rules,
                               bool positions, uint64_t every_position_bytes)
    : rules_(rules),
      positions_(positions),
      every_position_bytes_(every_position_bytes),
      fp_rate_(fp_rate),
      sparse_max_df_(sparse_max_df),
      interner_(std::make_unique<TermInterner>()) {}

SegmentBuilder::~SegmentBuilder() = default;

void SegmentBuilder::AddBatch(const std::vector<std::string>& names, const DocumentReader& read,
                              const SkipCallback& on_skip,
                              const std::function<void(uint64_t)>& done) {
  const size_t n = names.size();
  std::vector<Doc> batch(n);
  std::vector<uint8_t> ok(n, 0);
  std::mutex skip_mu;
  tbb::enumerable_thread_specific<tokenizer::Tokenizer> tokenizers(rules_);
  tbb::enumerable_thread_specific<DistinctTokens> collectors(rules_.stem_english, positions_);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1), [&](const tbb::blocked_range<size_t>& r) {
    tokenizer::Tokenizer& tok = tokenizers.local();
    DistinctTokens& tokens = collectors.local();
    for (size_t i = r.begin(); i != r.end(); ++i) {
      tokens.Clear();
      std::string detail;
      SkipReason why = read(i, tok, tokens, &batch[i].facts, &detail);
      if (why != SkipReason::kCount) {
        {
          std::lock_guard<std::mutex> lock(skip_mu);
          if (on_skip) on_skip(names[i], why, detail);
        }
        if (done) done(0);
        continue;
      }
      ok[i] = 1;
      batch[i].ids.reserve(tokens.tokens().size());
      for (const DistinctTokens::Token& t : tokens.tokens())
        batch[i].ids.push_back(interner_->Intern(tokens.Text(t), t.hash));
      batch[i].counts.length =
          static_cast<uint32_t>(std::min<uint64_t>(tokens.words(), UINT32_MAX));
      if (tokens.repeated()) {
        batch[i].counts.tf.reserve(tokens.tokens().size());
        for (const DistinctTokens::Token& t : tokens.tokens()) batch[i].counts.tf.push_back(t.tf);
      }
      batch[i].sequence = tokens.sequence();
      if (done) done(batch[i].facts.size);
    }
  });
  for (size_t i = 0; i < n; ++i) {
    if (!ok[i]) continue;
    batch[i].name = names[i];
    postings_ += batch[i].ids.size();
    tf_entries_ += batch[i].counts.tf.size();
    sequence_bytes_ += batch[i].sequence.size();
    if (!batch[i].ids.empty() && batch[i].ids.size() <= format::kMaxSignatureTerms)
      term_counts_.Add(batch[i].ids.size());
    name_bytes_ += names[i].size();
    docs_.push_back(std::move(batch[i]));
  }
  Ensure(docs_.size() < std::numeric_limits<uint32_t>::max(), ErrorKind::kInvalidArgument,
         "too many documents for one segment");
}

uint64_t SegmentBuilder::EstimatedBytes() const {
  // Held now: the interner, 4 bytes per posting, a Doc and its name per document.
  // Write adds, at its peak: per term 16 (sort record) + 8 (final id maps) + 4 (df) + 8 (hash)
  // + 8 (offset) + 8 (table) + 8 (sparse list start) bytes and the term bytes again; per
  // posting about 3 bytes of sparse rows and 1.5 bytes of forward store; per document 64
  // bytes of DocRecord, 4 of its column (DOC_BANDS' input), ~16 and its path of DOC_FACTS and 4 of
  // band column; and
  // the signature rows, planned here as Write plans them (without exact rows, which only make them
  // smaller): a per-posting rate misjudges segments of few documents with very many terms each,
  // whose bands are mostly padding.
  const uint64_t terms = interner_->size();
  const uint64_t interner = interner_->MemoryBytes();
  const uint64_t held = interner + postings_ * 4 + tf_entries_ * 4 + sequence_bytes_ +
                        docs_.size() * (sizeof(Doc) + 16) + name_bytes_;
  uint64_t row_bytes = 0;
  for (const BandPlan& b : PlanBands(
           term_counts_.size(), [&](uint64_t i) { return term_counts_.At(i); }, fp_rate_)) {
    row_bytes += (uint64_t{b.shape.width} * ((b.count + 63) / 64) * 8 + 63) / 64 * 64;
  }
  // The sparse rows add 8 bytes per term (list starts) and about 6.5 per sparse posting (a
  // 4-byte transposition and ~2.5 encoded); about half of all postings are sparse (linux-files
  // 51%, kjv 9%), while the rows planned above, counting every term, are about that much too
  // large.
  // DOC_FACTS holds the paths once more while it is written.
  const uint64_t writing = terms * 60 + interner / 3 + postings_ * 45 / 10 + docs_.size() * 100 +
                           name_bytes_ + row_bytes;
  return held + writing;
}

namespace {

// The first 8 bytes of term as a big-endian number, 0-padded: for terms whose numbers differ,
// the numbers order them as their bytes do (memcmp's order).
uint64_t BigEndianPrefix(std::string_view term) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) {
    v = (v << 8) | (i < term.size() ? static_cast<uint8_t>(term[i]) : 0);
  }
  return v;
}

// Phase 1: final term ids by decreasing document frequency (ties by bytes, so builds are
// reproducible and the terms of one document, which often share prefixes, get close ids).
// Rewrites every document's ids to final ids, sorted; frees the interner.
template <typename Docs>
TermArrays AssignTermIds(Docs& docs, std::unique_ptr<TermInterner>& interner) {
  std::vector<std::vector<uint32_t>> df_by_shard(1u << TermInterner::kShardBits);
  interner->ForEach([&](uint32_t pid, std::string_view, uint64_t) {
    auto& v = df_by_shard[TermInterner::ShardOf(pid)];
    if (v.size() <= TermInterner::LocalOf(pid)) v.resize(TermInterner::LocalOf(pid) + 1, 0);
  });
  for (const auto& d : docs) {
    for (uint32_t pid : d.ids)
      ++df_by_shard[TermInterner::ShardOf(pid)][TermInterner::LocalOf(pid)];
  }
  struct TermInfo {   // 16 bytes a term: part of the peak memory with millions of terms
    uint64_t prefix;  // the term's first 8 bytes as a big-endian number (0-padded)
    uint32_t pid;
    uint32_t df;
  };
  std::vector<TermInfo> terms;
  terms.reserve(interner->size());
  interner->ForEach([&](uint32_t pid, std::string_view term, uint64_t) {
    terms.push_back({BigEndianPrefix(term), pid,
                     df_by_shard[TermInterner::ShardOf(pid)][TermInterner::LocalOf(pid)]});
  });
  // One sort by bytes (the dictionary's order); ids then follow by decreasing df, ties in
  // that order, placed by counting the terms of each df (no second sort of strings). Prefixes
  // that differ order two terms as their bytes do; only equal ones need the terms themselves.
  tbb::parallel_sort(terms.begin(), terms.end(), [&](const TermInfo& a, const TermInfo& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return interner->Term(a.pid) < interner->Term(b.pid);
  });
  std::map<uint32_t, uint64_t, std::greater<>> next_id;  // df -> the next id of that df
  for (const TermInfo& t : terms) ++next_id[t.df];
  uint64_t first = 0;
  for (auto& [df, n] : next_id) first += std::exchange(n, first);
  TermArrays out;
  const uint64_t term_count = terms.size();
  out.df.resize(term_count);
  out.hashes.resize(term_count);
  const auto singles = next_id.find(1);
  format::DictionaryWriter dict(
      static_cast<uint32_t>(singles == next_id.end() ? term_count : singles->second), term_count);
  std::vector<std::vector<uint32_t>> final_id(df_by_shard.size());
  for (size_t s = 0; s < df_by_shard.size(); ++s) final_id[s].resize(df_by_shard[s].size());
  std::vector<std::vector<uint32_t>>().swap(df_by_shard);
  for (const TermInfo& t : terms) {
    const auto id = static_cast<uint32_t>(next_id[t.df]++);
    out.df[id] = t.df;
    out.hashes[id] = interner->Hash(t.pid);
    final_id[TermInterner::ShardOf(t.pid)][TermInterner::LocalOf(t.pid)] = id;
    dict.Add(interner->Term(t.pid), id);
  }
  std::vector<TermInfo>().swap(terms);
  out.dict_blocks = dict.TakeBlocks();
  out.dict_index = dict.index();
  out.term_filter = dict.filter();
  tbb::parallel_for(size_t{0}, docs.size(), [&](size_t i) {
    auto& doc = docs[i];
    for (uint32_t& id : doc.ids)
      id = final_id[TermInterner::ShardOf(id)][TermInterner::LocalOf(id)];
    if (doc.sequence.empty()) {
      format::SortRecord(&doc.ids, &doc.counts, nullptr);
      return;
    }
    // The sequence's indexes follow their ids to their sorted places.
    std::vector<uint32_t> order(doc.ids.size());  // order[r]: the index of the r-th smallest
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return doc.ids[a] < doc.ids[b]; });
    std::vector<uint32_t> rank(order.size());
    for (uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
    std::string sequence;
    sequence.reserve(doc.sequence.size());
    const auto* p = reinterpret_cast<const uint8_t*>(doc.sequence.data());
    const uint8_t* end = p + doc.sequence.size();
    for (uint64_t v = 0; p < end && GetVarint(&p, end, &v);)
      PutVarint(uint64_t{rank[v >> 1]} * 2 + (v & 1), sequence);
    doc.sequence.swap(sequence);
    format::SortRecord(&doc.ids, &doc.counts, nullptr);
  });
  interner.reset();
  malloc_trim(0);  // give the interner back to the system (glibc keeps it otherwise)
  return out;
}

// Phase 2: the document records, in the (sorted) order of docs, and the names of their
// encodings (an empty one, as in-memory documents have, is UTF-8).
template <typename Docs>
DocumentTable BuildDocumentTable(const Docs& docs) {
  DocumentTable t;
  t.records.resize(docs.size());
  t.encodings = {format::kUtf8EncodingName};
  // Keys view the documents' own strings (and the constant), which outlive the map.
  std::unordered_map<std::string_view, uint32_t> encoding_ids = {{format::kUtf8EncodingName, 0}};
  for (const auto& doc : docs) {
    const std::string& name = doc.facts.encoding;
    if (name.empty() || encoding_ids.count(name)) continue;
    // ICU's canonical converter names are short printable ASCII; the format requires it.
    if (name.size() > 255 || !std::all_of(name.begin(), name.end(),
                                          [](char c) { return c > 0x20 && c < 0x7f; })) [[unlikely]]
      throw Error(ErrorKind::kInvalidArgument, "unusable encoding name '" + name + "'");
    encoding_ids.emplace(name, static_cast<uint32_t>(t.encodings.size()));
    t.encodings.push_back(name);
  }
  for (size_t d = 0; d < docs.size(); ++d) {
    const auto& doc = docs[d];
    const FileFacts& f = doc.facts;
    const uint32_t encoding = f.encoding.empty() ? 0 : encoding_ids.at(f.encoding);
    t.records[d] = format::DocRecord{t.paths.size(),
                                     static_cast<uint32_t>(doc.name.size()),
                                     static_cast<uint32_t>(doc.ids.size()),
                                     f.size,
                                     f.file_size,
                                     f.mtime_ns,
                                     f.ctime_ns,
                                     f.inode,
                                     encoding,
                                     format::kNoColumn};
    t.paths += doc.name;
    t.postings += doc.ids.size();
    t.input_bytes += f.size;
  }
  return t;
}

}  // namespace

namespace {

// Phase 0: the documents in name order (the segment's document ids), each name once.
template <typename Docs>
void SortByName(Docs& docs) {
  std::sort(docs.begin(), docs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 1; i < docs.size(); ++i) {
    if (docs[i - 1].name == docs[i].name) [[unlikely]]
      throw Error(ErrorKind::kInvalidArgument, "two documents named '" + docs[i].name + "'");
  }
}

// Which terms take which row kind (format/index_format.h): ids below exact_terms have exact
// rows, ids from sparse_first on have sparse rows (lists), the ones between Bloom rows.
struct TermClasses {
  uint32_t exact_terms = 0;
  uint32_t sparse_max_df = 0;
  uint32_t sparse_first = 0;
};

// Phase 3: the term classes of a segment of `docs` whose terms have document frequencies df.
template <typename Docs>
TermClasses ClassifyTerms(const Docs& docs, const std::vector<uint32_t>& df,
                          uint32_t sparse_max_df_option) {
  uint64_t nonempty = 0;
  for (const auto& d : docs) nonempty += !d.ids.empty();
  const std::vector<format::DfRun> df_runs = format::EncodeDfRuns(df);
  TermClasses c;
  c.exact_terms = CountExactTerms(df_runs, df.size(), nonempty);
  c.sparse_max_df = format::SegmentSparseMaxDf(sparse_max_df_option, docs.size());
  c.sparse_first = format::SparseFirst(df_runs, df.size(), c.exact_terms, c.sparse_max_df);
  return c;
}

// Phase 4: the signature bands, planned from each document's count of Bloom terms; records
// each document's column in its band into table.
template <typename Docs>
RowPlan PlanSegmentRows(const Docs& docs, const TermClasses& c, double fp_rate,
                        DocumentTable& table) {
  std::vector<uint64_t> bloom_counts(docs.size(), 0);
  for (size_t d = 0; d < docs.size(); ++d)
    bloom_counts[d] = BloomTermCount(docs[d].ids, c.exact_terms, c.sparse_first);
  RowPlan plan = PlanRows(bloom_counts, fp_rate, c.exact_terms);
  for (size_t col = 0; col < plan.band_docs.size(); ++col)
    table.records[plan.band_docs[col]].column = static_cast<uint32_t>(col);
  return plan;
}

// The lists of the Bloom and sparse terms (SPARSE_DATA and SPARSE_INDEX).
struct SparseSections {
  std::string data;
  std::vector<uint64_t> index;
};

// Phase 6: the lists, transposed from the documents' ids (indexer/sparse_lists.h;
// format::ListFirst).
template <typename Docs>
SparseSections BuildSparseSections(const Docs& docs, const std::vector<uint32_t>& df,
                                   const TermClasses& c) {
  SparseSections out;
  out.index = WriteSparseLists(
      docs.size(), c.exact_terms, c.sparse_first - c.exact_terms,
      std::vector<uint32_t>(df.begin() + c.exact_terms, df.end()),
      [&](uint64_t d, std::vector<uint32_t>&) -> const std::vector<uint32_t>& {
        return docs[d].ids;
      },
      [&](std::string_view bytes) { out.data.append(bytes); });
  return out;
}

// The forward store (FORWARD_OFFSETS and FORWARD_DATA).
struct ForwardSections {
  std::vector<uint64_t> offsets;  // one per document, then the end
  std::string data;
  uint64_t total_length = 0;    // of the documents (MetaRecord::total_length)
  uint64_t position_bytes = 0;  // MetaRecord::position_bytes
  std::string rank_bounds;      // RANK_BOUNDS
};

// The positions of a document's positioned terms (format::IsPositionedTerm; every term if
// `all`) and where its kana/ideographic runs start, from its sequence (DistinctTokens::sequence:
// indexes into its sorted `ids`, one per phrase position), with the hashes of its pair terms
// (format::IsPairTerm) for the record's pair filter; list_of is scratch.
void DocumentPositions(const std::vector<uint32_t>& ids, const std::string& sequence,
                       const std::vector<uint32_t>& df, const std::vector<uint64_t>& hashes,
                       uint64_t docs, bool all, std::vector<uint32_t>* list_of,
                       format::ForwardPositions* out) {
  out->clear();
  if (sequence.empty()) return;
  list_of->assign(ids.size(), 0);
  for (uint32_t k = 0; k < ids.size(); ++k) {
    if (!all && !format::IsPositionedTerm(df[ids[k]], docs)) continue;
    out->which.push_back(k);
    (*list_of)[k] = static_cast<uint32_t>(out->which.size());
  }
  if (out->which.empty()) return;
  // Counted, then placed: the lists in the order of `which`.
  out->begin.assign(out->which.size() + 1, 0);
  const auto* begin = reinterpret_cast<const uint8_t*>(sequence.data());
  const uint8_t* end = begin + sequence.size();
  uint64_t k = 0;
  for (const uint8_t* p = begin; p < end && GetVarint(&p, end, &k);) {
    if (k & 1) out->run_starts.push_back(out->count);
    ++out->count;
    if ((*list_of)[k >> 1] != 0) ++out->begin[(*list_of)[k >> 1]];
  }
  // A term held only as a whole word (tokenizer::TokenRole::kWhole) has no positions.
  size_t kept = 0;
  for (size_t j = 0; j < out->which.size(); ++j) {
    if (out->begin[j + 1] == 0) {
      (*list_of)[out->which[j]] = 0;
      continue;
    }
    out->which[kept] = out->which[j];
    out->begin[kept + 1] = out->begin[j + 1];
    (*list_of)[out->which[j]] = static_cast<uint32_t>(++kept);
  }
  out->which.resize(kept);
  out->begin.resize(kept + 1);
  if (kept == 0) {
    out->clear();
    return;
  }
  // Every pair term here has its list where it stands at a position (one held only as a whole
  // word stands at none): nothing is unlisted.
  out->pair_hash.assign(out->which.size(), 0);
  for (size_t j = 0; j < out->which.size(); ++j) {
    const uint32_t id = ids[out->which[j]];
    if (format::IsPairTerm(df[id], docs)) out->pair_hash[j] = hashes[id];
  }
  for (size_t j = 1; j < out->begin.size(); ++j) out->begin[j] += out->begin[j - 1];
  out->at.resize(out->begin.back());
  std::vector<uint32_t> next(out->begin.begin(), out->begin.end() - 1);
  uint32_t position = 0;
  for (const uint8_t* p = begin; p < end && GetVarint(&p, end, &k); ++position) {
    if ((*list_of)[k >> 1] != 0) out->at[next[(*list_of)[k >> 1] - 1]++] = position;
  }
}

// Phase 7: each document's sorted ids encoded (format/forward_store.h); frees them as it goes.
// RANK_BOUNDS (format/rank_bounds.h) is made from the same records. With all_positions, the
// records keep the positions of every term (SegmentBuilder::Write's to_be_merged).
template <typename Docs>
ForwardSections EncodeForwardStore(Docs& docs, const std::vector<uint32_t>& df,
                                   const std::vector<uint64_t>& hashes, bool all_positions) {
  ForwardSections out;
  out.offsets.assign(docs.size() + 1, 0);
  uint64_t total_length = 0;  // the champions are chosen at the segment's average length
  for (const auto& doc : docs) total_length += doc.counts.length;
  const double a0 = docs.empty() ? 1 : static_cast<double>(total_length) / docs.size();
  format::RankBoundsWriter bounds(docs.size(), format::BoundedTerms(df, docs.size()), a0);
  format::ForwardPositions positions;
  std::vector<uint32_t> list_of;  // by index in the document's ids: its list + 1, or 0
  for (size_t d = 0; d < docs.size(); ++d) {
    out.offsets[d] = out.data.size();
    DocumentPositions(docs[d].ids, docs[d].sequence, df, hashes, docs.size(), all_positions,
                      &list_of, &positions);
    std::string().swap(docs[d].sequence);
    out.position_bytes +=
        format::EncodeForwardRecord(docs[d].ids, docs[d].counts, out.data, &positions);
    bounds.Add(d, docs[d].ids, docs[d].counts.tf, docs[d].counts.length);
    out.total_length += docs[d].counts.length;
    std::vector<uint32_t>().swap(docs[d].ids);
    std::vector<uint32_t>().swap(docs[d].counts.tf);
  }
  out.offsets[docs.size()] = out.data.size();
  out.rank_bounds = bounds.Finish();
  return out;
}

// Everything a segment file holds, as the phases made it.
struct SegmentParts {
  TermArrays terms;
  DocumentTable table;
  TermClasses classes;
  RowPlan plan;
  std::vector<uint64_t> rows;
  SparseSections sparse;
  ForwardSections forward;
};

// Phase 8: META (completed by NewSegmentMeta) and the file, section by section; returns the
// file's size.
uint64_t WriteSegmentFile(const std::string& path, const std::string& root, double fp_rate,
                          const SegmentParts& p) {
  format::MetaRecord m{};
  m.doc_count = p.table.records.size();
  m.term_count = p.terms.df.size();
  m.band_count = p.plan.bands.size();
  m.term_fingerprint = format::TermFingerprint(p.terms.hashes);
  m.fp_rate = fp_rate;
  m.input_bytes = p.table.input_bytes;
  m.exact_terms = p.classes.exact_terms;
  m.sparse_max_df = p.classes.sparse_max_df;
  m.sparse_first = p.classes.sparse_first;
  m.total_length = p.forward.total_length;
  m.position_bytes = p.forward.position_bytes;
  const std::string meta = NewSegmentMeta(m, root);

  using format::SectionId;
  format::IndexFileWriter w(path);
  w.AddSection(SectionId::kDictBlocks, p.terms.dict_blocks);
  w.AddSection(SectionId::kDictIndex, p.terms.dict_index);
  w.AddSection(SectionId::kDictTop, format::DictTopKeys(p.terms.dict_index));
  w.AddSection(SectionId::kDfRuns, format::EncodeDfRuns(p.terms.df));
  w.AddSection(SectionId::kTermFilter, p.terms.term_filter);
  w.AddSection(SectionId::kMeta, meta);
  w.AddSection(SectionId::kBands, p.plan.bands);
  w.AddSection(SectionId::kBandDocs, p.plan.band_docs);
  w.AddSection(SectionId::kRows, p.rows);
  {
    std::vector<uint32_t> columns;
    columns.reserve(p.table.records.size());
    format::DocFactsWriter facts;
    for (const format::DocRecord& d : p.table.records) {
      columns.push_back(d.column);
      facts.Add(d, std::string_view(p.table.paths).substr(d.path_offset, d.path_length));
    }
    w.AddSection(SectionId::kDocBands, format::EncodeDocBands(columns, p.plan.bands));
    const std::vector<uint64_t> index = facts.Finish();
    w.AddSection(SectionId::kDocFacts, facts.pending());
    w.AddSection(SectionId::kDocFactsIndex, index);
  }
  w.AddSection(SectionId::kForwardOffsets, format::EncodeForwardOffsets(p.forward.offsets));
  w.AddSection(SectionId::kForwardData, p.forward.data);
  w.AddSection(SectionId::kSparseData, p.sparse.data);
  w.AddSection(SectionId::kSparseIndex, p.sparse.index);
  const std::string encodings = format::EncodeEncodingTable(p.table.encodings);
  w.AddSection(SectionId::kEncodings, encodings);
  w.AddSection(SectionId::kRankBounds, p.forward.rank_bounds);
  return w.Finish();
}

}  // namespace

SegmentSummary SegmentBuilder::Write(const std::string& path, const std::string& root,
                                     bool to_be_merged) {
  Ensure(fp_rate_ > 0 && fp_rate_ < 1, ErrorKind::kInvalidArgument,
         "--fp-rate must be between 0 and 1 (exclusive), got " + std::to_string(fp_rate_));
  SortByName(docs_);
  SegmentParts p;
  p.terms = AssignTermIds(docs_, interner_);
  p.table = BuildDocumentTable(docs_);
  p.classes = ClassifyTerms(docs_, p.terms.df, sparse_max_df_);
  p.plan = PlanSegmentRows(docs_, p.classes, fp_rate_, p.table);
  // Phase 5 (indexer/signature_rows.h).
  p.rows = BuildSignatureRows(
      p.plan.bands, p.classes.exact_terms, p.classes.sparse_first, p.terms.hashes,
      [&](uint64_t band, uint64_t column) -> const std::vector<uint32_t>& {
        return docs_[p.plan.band_docs[p.plan.bands[band].first_column + column]].ids;
      });
  p.sparse = BuildSparseSections(docs_, p.terms.df, p.classes);
  p.forward = EncodeForwardStore(docs_, p.terms.df, p.terms.hashes,
                                 to_be_merged || p.table.input_bytes < every_position_bytes_);

  SegmentSummary s;
  s.file_bytes = WriteSegmentFile(path, root, fp_rate_, p);
  s.documents = docs_.size();
  s.terms = p.terms.df.size();
  s.postings = p.table.postings;
  s.bands = p.plan.bands.size();
  s.input_bytes = p.table.input_bytes;
  Reset();
  return s;
}

void SegmentBuilder::Reset() {
  std::vector<Doc>().swap(docs_);
  postings_ = tf_entries_ = name_bytes_ = 0;
  term_counts_.Clear();
  interner_ = std::make_unique<TermInterner>();
  malloc_trim(0);
}

}  // namespace bitsift::indexer
