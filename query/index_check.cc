#include "query/index_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "format/bloom.h"
#include "format/doc_bands.h"
#include "format/doc_table.h"
#include "format/forward_store.h"
#include "format/rank_bounds.h"
#include "format/sparse_rows.h"
#include "format/term_filter.h"
#include "util/error.h"
#include "util/utf8.h"

namespace bitsift::query {
namespace {

using format::SectionId;

[[noreturn]] void Fail(const format::SegmentReader& index, const std::string& what) {
  format::CorruptIndex(index.path(), what);
}

template <typename T>
std::vector<T> SectionArray(const format::SegmentReader& index, SectionId id) {
  std::string_view bytes = index.Section(id);
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// The structure that opening leaves to access time (records are bounds-checked when read):
// every document's record (and path) inside its DOC_FACTS block, every encoding index inside
// ENCODINGS (which opening parsed), forward and term offsets ascending and inside their data, every
// band column naming a document. Reports the first violation. Runs after VerifyAll, so raw reads
// are verified ones.
// DOC_BANDS (format/doc_bands.h): every block's counts are those of the codes before it, every
// code names a band or none (none past the last document), and each band gets its doc_count
// documents. (That each document's column is right is checked with the bands, through
// format::SegmentReader::column.)
void CheckDocBands(const format::SegmentReader& index) {
  const uint64_t docs = index.doc_count(), bands = index.band_count();
  const std::string_view bytes = index.Section(SectionId::kDocBands);
  const uint64_t block_bytes = format::DocBandsBlockBytes(bands);
  const uint64_t none = format::NoBandCode(bands);
  std::vector<uint32_t> before(bands, 0);
  for (uint64_t b = 0; b < format::DocBandsBlocks(docs); ++b) {
    const auto* block = reinterpret_cast<const uint8_t*>(bytes.data()) + b * block_bytes;
    const std::string name = "document bands block " + std::to_string(b);
    if (bands != 0 && std::memcmp(block, before.data(), 4 * bands) != 0)
      Fail(index, name + ": a band's count of the documents before it is wrong");
    for (uint64_t pos = 0; pos < format::kDocBandsBlock; ++pos) {
      const uint64_t code = format::DocBandCode(block, pos, bands);
      if (code == none) continue;
      if (b * format::kDocBandsBlock + pos >= docs)
        Fail(index, name + ": a band code past the last document");
      if (code >= bands)
        Fail(index, name + ": the band code at " + std::to_string(pos) + " names no band");
      ++before[code];
    }
  }
  for (uint64_t band = 0; band < bands; ++band) {
    if (before[band] != index.band(band).doc_count)
      Fail(index, "document bands: band " + std::to_string(band) + " gets " +
                      std::to_string(before[band]) + " documents, not its " +
                      std::to_string(index.band(band).doc_count));
  }
}

void CheckStructure(const format::SegmentReader& index) {
  const uint64_t docs = index.doc_count();
  // DOC_FACTS: every block starts where the last ended and holds exactly its documents' records.
  const std::vector<uint64_t> facts_index =
      SectionArray<uint64_t>(index, SectionId::kDocFactsIndex);
  const std::string_view facts = index.Section(SectionId::kDocFacts);
  if (facts_index.empty() || facts_index.front() != 0 || facts_index.back() != facts.size()) {
    Fail(index, "document facts index does not span DOC_FACTS");
  }
  for (uint64_t b = 0; b + 1 < facts_index.size(); ++b) {
    const auto* p = reinterpret_cast<const uint8_t*>(facts.data());
    const uint64_t count =
        std::min<uint64_t>(format::kDocFactsBlock, docs - b * format::kDocFactsBlock);
    if (facts_index[b] > facts_index[b + 1] ||
        !format::ValidDocFactsBlock(p + facts_index[b], p + facts_index[b + 1],
                                    static_cast<uint32_t>(count))) {
      Fail(index, "document facts of block " + std::to_string(b) + " (documents " +
                      std::to_string(b * format::kDocFactsBlock) + " on)");
    }
  }
  for (uint64_t d = 0; d < docs; ++d) {
    const format::DocRecord doc = index.doc(static_cast<uint32_t>(d));
    if (doc.encoding >= index.encodings().size()) {
      Fail(index, "encoding " + std::to_string(doc.encoding) + " of document " + std::to_string(d) +
                      " is not in the encoding table (" + std::to_string(index.encodings().size()) +
                      " names)");
    }
  }
  std::vector<uint64_t> forward;
  if (!format::DecodeForwardOffsets(index.Section(SectionId::kForwardOffsets), docs, &forward))
    Fail(index, "forward store offsets are not in their blocks' form");
  const uint64_t forward_size = index.Section(SectionId::kForwardData).size();
  for (uint64_t d = 0; d < docs; ++d) {
    if (forward[d] > forward[d + 1] || forward[d + 1] > forward_size) {
      Fail(index, "forward store offsets of document " + std::to_string(d));
    }
  }
  const std::vector<uint32_t> band_docs = SectionArray<uint32_t>(index, SectionId::kBandDocs);
  for (uint64_t i = 0; i < band_docs.size(); ++i) {
    if (band_docs[i] >= docs)
      Fail(index, "band column " + std::to_string(i) + " names no document");
  }
  CheckDocBands(index);
}

// The forward records of an index, decoded strictly (CheckIndex's reading of them).
class ForwardRecords {
 public:
  // pair_hash: by term id, HashTerm of each pair term (none beyond); every record's pair filter
  // must be the one its positions make of them.
  ForwardRecords(const format::SegmentReader& index, std::vector<uint64_t> pair_hash)
      : index_(index),
        data_(reinterpret_cast<const uint8_t*>(index.Section(SectionId::kForwardData).data())),
        offsets_(Offsets(index)),
        pair_hash_(std::move(pair_hash)) {
    if (offsets_[0] != 0 ||
        offsets_[index.doc_count()] != index.Section(SectionId::kForwardData).size()) {
      Fail(index, "forward offsets do not cover the forward store");
    }
  }

  static std::vector<uint64_t> Offsets(const format::SegmentReader& index) {
    std::vector<uint64_t> offsets;
    if (!format::DecodeForwardOffsets(index.Section(SectionId::kForwardOffsets), index.doc_count(),
                                      &offsets))
      Fail(index, "forward store offsets are not in their blocks' form");
    return offsets;
  }

  // Decodes the record of document `d` into *ids (its term ids, ascending); fails the check if
  // it does not decode completely.
  void Decode(uint64_t d, std::vector<uint32_t>* ids, format::ForwardCounts* counts = nullptr,
              format::ForwardPositions* positions = nullptr) const {
    std::string why;
    const format::StrictForward strict{index_.meta().term_count, &why, &pair_hash_};
    if (!format::DecodeForwardRecord(data_ + offsets_[d], data_ + offsets_[d + 1], ids, &strict,
                                     counts, positions)) {
      Fail(index_, "forward record of document " + std::to_string(d) + ": " + why);
    }
  }

 private:
  const format::SegmentReader& index_;
  const uint8_t* data_;
  std::vector<uint64_t> offsets_;
  std::vector<uint64_t> pair_hash_;
};

// HashTerm of each pair term (SegmentReader::pair_terms) by id, from `hashes` (every term's).
std::vector<uint64_t> PairHashes(const format::SegmentReader& index,
                                 const std::vector<uint64_t>& hashes) {
  return {hashes.begin(), hashes.begin() + std::min<size_t>(hashes.size(), index.pair_terms())};
}

// The dictionary: the blocks decode completely (ids in range, lengths inside the block), terms
// are non-empty UTF-8 in strictly ascending byte order, every block's key and count of df-1
// terms before it are right, every term is in TERM_FILTER, every id appears once, ids order
// terms by decreasing document frequency then bytes, and Find finds every term under its own
// id. Returns HashTerm of every term, by id.
std::vector<uint64_t> CheckDictionary(const format::SegmentReader& index) {
  const format::MetaRecord& meta = index.meta();
  const uint64_t docs = meta.doc_count, terms = meta.term_count;
  const format::DictionaryView& dict = index.dictionary();
  const std::vector<format::DictBlockRecord> blocks =
      SectionArray<format::DictBlockRecord>(index, SectionId::kDictIndex);
  std::vector<uint64_t> hashes(terms);
  // Every term's bits in TERM_FILTER (opening checked its size: whole blocks, at least one).
  const std::vector<uint32_t> filter_words = SectionArray<uint32_t>(index, SectionId::kTermFilter);
  const uint32_t* filter = filter_words.data();
  const uint64_t filter_blocks = filter_words.size() / format::kTermFilterBlockWords;
  std::vector<uint32_t> byte_rank(terms, UINT32_MAX);
  std::string prev;
  uint64_t listed = 0, singles = 0;
  dict.ForEachWithPrefix("", [&](std::string_view term, uint32_t id) {
    const std::string name = "term " + std::to_string(id);
    if (term.empty() || !IsUtf8(term)) Fail(index, name + " is not a token");
    if (listed > 0 && !(prev < term)) Fail(index, name + " is out of byte order");
    if (byte_rank[id] != UINT32_MAX) Fail(index, name + " is listed twice");
    if (listed % format::kDictBlockTerms == 0) {
      const format::DictBlockRecord& b = blocks[listed / format::kDictBlockTerms];
      if (b.key != format::DictKey(term) || b.singles_before != singles)
        Fail(index,
             "dictionary block " + std::to_string(listed / format::kDictBlockTerms) + " record");
    }
    const uint64_t h = format::HashTerm(term);
    const uint64_t filter_block = format::TermFilterBlock(h, filter_blocks);
    if (!format::TermFilterMayContain(filter + filter_block * format::kTermFilterBlockWords, h))
      Fail(index, name + " is missing from TERM_FILTER (a lookup would call it absent)");
    std::optional<uint32_t> found = dict.Find(term);
    if (!found || *found != id) Fail(index, name + " is not found under its id");
    byte_rank[id] = static_cast<uint32_t>(listed++);
    singles += dict.Df(id) == 1;
    hashes[id] = h;
    prev.assign(term);
    return true;
  });
  if (listed != terms)
    Fail(index, "the dictionary lists " + Plural(listed, "term", "terms") + ", META says " +
                    std::to_string(terms));
  if (SectionArray<uint64_t>(index, SectionId::kDictTop) != format::DictTopKeys(blocks))
    Fail(index, "DICT_TOP does not sample the block keys");
  if (format::TermFingerprint(hashes) != meta.term_fingerprint)
    Fail(index, "the dictionary's terms do not match its fingerprint");
  for (uint64_t t = 0; t < terms; ++t) {
    const uint32_t id = static_cast<uint32_t>(t);
    if (dict.Df(id) > docs)
      Fail(index, "document frequency of term " + std::to_string(t) + " out of range");
    if (t > 0 && dict.Df(id - 1) == dict.Df(id) && byte_rank[t - 1] > byte_rank[t])
      Fail(index, "terms " + std::to_string(t - 1) + " and " + std::to_string(t) + " out of order");
  }
  return hashes;
}

// What CheckDocuments counts from the forward records.
struct DocumentCounts {
  std::vector<uint32_t> df;  // document frequency by term id
  uint64_t non_empty = 0;    // documents with at least one term
};

// The documents: sorted by path; forward records decode completely and agree with the term
// counts; the sizes add up to META's input bytes; document frequencies agree with the records.
DocumentCounts CheckDocuments(const format::SegmentReader& index, const ForwardRecords& forward) {
  const format::MetaRecord& meta = index.meta();
  const uint64_t docs = meta.doc_count, terms = meta.term_count;
  const format::DictionaryView& dict = index.dictionary();
  DocumentCounts counts;
  std::vector<uint32_t>& df = counts.df;
  df.assign(terms, 0);
  std::vector<uint32_t> ids;
  uint64_t input_bytes = 0;
  for (uint64_t d = 0; d < docs; ++d) {
    const format::DocRecord doc = index.doc(static_cast<uint32_t>(d));
    if (d > 0 && index.path(static_cast<uint32_t>(d)) < index.path(static_cast<uint32_t>(d - 1))) {
      Fail(index, "documents " + std::to_string(d - 1) + " and " + std::to_string(d) +
                      " out of path order");
    }
    input_bytes += doc.size;
    forward.Decode(d, &ids);
    if (ids.size() != doc.term_count) Fail(index, "term count of document " + std::to_string(d));
    for (uint32_t id : ids) ++df[id];
    if (!ids.empty()) ++counts.non_empty;
  }
  if (input_bytes != meta.input_bytes) Fail(index, "document sizes do not add up");
  for (uint64_t t = 0; t < terms; ++t) {
    if (df[t] != dict.Df(static_cast<uint32_t>(t)))
      Fail(index, "document frequency of term " + std::to_string(t));
  }
  return counts;
}

// Whether every term of `ids` (a document's, ascending) has its bits set in column `c` of
// `band` (the exact row of a frequent term, else its k Bloom rows; a sparse term has none).
// Returns how many Bloom terms the document has. `name` names the band in messages.
uint64_t CheckColumnBits(const format::SegmentReader& index, const format::BandRecord& band,
                         const std::string& name, uint64_t c, uint32_t d,
                         const std::vector<uint32_t>& ids, const std::vector<uint64_t>& hashes) {
  const uint64_t exact = index.exact_terms();
  const uint64_t word = c / 64, bit = uint64_t{1} << (c % 64);
  uint64_t bloom_terms = 0;
  for (uint32_t id : ids) {
    if (index.IsSparse(id)) break;  // ids ascend; sparse terms have no bits (CheckLists)
    if (id < exact) {
      if ((index.Row(band, format::ExactRow(band, id))[word] & bit) == 0) {
        Fail(index, name + ": the exact-row bit of a term of document " + std::to_string(d) +
                        " is missing");
      }
      continue;
    }
    ++bloom_terms;
    if (band.width == 0) continue;  // the band of huge documents has no Bloom rows
    format::ForEachPosition(hashes[id], band.width, band.k, [&](uint64_t r) {
      if ((index.Row(band, r)[word] & bit) == 0) {
        Fail(index, name + ": a signature bit of document " + std::to_string(d) + " is missing");
      }
    });
  }
  return bloom_terms;
}

// The bands: rows packed in order; the band columns hold each non-empty document exactly
// once; every term of a document has its bits set in the document's column (the exact row of a
// frequent term, else its k Bloom rows); an exact row has no bit beyond its term's documents;
// a band's recorded maximum covers its documents; bits past a band's documents are zero.
// Returns how many columns the bands hold.
uint64_t CheckBands(const format::SegmentReader& index, const ForwardRecords& forward,
                    const std::vector<uint64_t>& hashes, const std::vector<uint32_t>& df) {
  const uint64_t docs = index.doc_count();
  std::vector<uint32_t> ids;
  const uint64_t exact = index.exact_terms();
  const uint64_t row_words = index.Section(SectionId::kRows).size() / 8;
  uint64_t row_cursor = 0, columns = 0;
  std::vector<uint8_t> seen(docs, 0);
  std::vector<uint64_t> exact_bits(exact, 0);
  for (uint64_t b = 0; b < index.band_count(); ++b) {
    const format::BandRecord& band = index.band(b);
    const std::string name = "band " + std::to_string(b);
    if (band.doc_count == 0) Fail(index, name + " is empty");
    if (band.rows_offset != row_cursor * 8) Fail(index, name + " rows are not packed");
    if (band.words_per_row != (band.doc_count + 63) / 64) Fail(index, name + " row length");
    const uint64_t rows = band.width + exact;
    row_cursor =
        (row_cursor + rows * band.words_per_row + 7) / 8 * 8;  // bands start 64-byte aligned
    for (uint64_t c = 0; c < band.doc_count; ++c) {
      const uint32_t d = index.BandDoc(band, c);
      if (index.doc(d).term_count == 0)
        Fail(index, name + " holds empty document " + std::to_string(d));
      if (seen[d]) Fail(index, "document " + std::to_string(d) + " is in the bands twice");
      seen[d] = 1;
      if (index.column(d) != band.first_column + c)
        Fail(index, name + ": document " + std::to_string(d) + " records another column");
      forward.Decode(d, &ids);
      const uint64_t bloom_terms = CheckColumnBits(index, band, name, c, d, ids, hashes);
      if (bloom_terms > band.max_terms)
        Fail(index, name + " records a maximum term count below a document's");
    }
    for (uint64_t r = 0; r < rows; ++r) {
      const uint64_t* row = index.Row(band, r);
      for (uint64_t w = band.doc_count / 64; w < band.words_per_row; ++w) {
        uint64_t stray = row[w];
        if (w == band.doc_count / 64) stray &= ~uint64_t{0} << (band.doc_count % 64);
        if (stray != 0) Fail(index, name + " has bits set past its documents");
      }
      if (r >= band.width) {
        for (uint64_t w = 0; w < band.words_per_row; ++w) {
          exact_bits[r - band.width] += static_cast<uint64_t>(__builtin_popcountll(row[w]));
        }
      }
    }
    columns += band.doc_count;
  }
  // A document in no band (one without terms: the bands hold every other, counted in
  // non_empty) records no column.
  for (uint64_t d = 0; d < docs; ++d) {
    if (!seen[d] && index.column(static_cast<uint32_t>(d)) != format::kNoColumn)
      Fail(index, "document " + std::to_string(d) + " is in no band but records a column");
  }
  for (uint64_t t = 0; t < exact; ++t) {
    // Every document of the term has its bit (above), so an equal count means no extra bit.
    if (exact_bits[t] != df[t])
      Fail(index, "the exact row of term " + std::to_string(t) + " has extra bits");
  }
  if (row_cursor != row_words) Fail(index, "rows section holds unused bytes");
  return columns;
}

// The document lists (the sparse terms' and, since format 10, the Bloom terms'): each list is
// strictly ascending (SparseRow checks), as long as its term's df and every document on it
// holds the term; df documents hold it, so the list is exactly them. Groups are packed: each
// starts where the one before ended.
void CheckLists(const format::SegmentReader& index, const std::vector<uint32_t>& df) {
  const format::MetaRecord& meta = index.meta();
  const uint64_t docs = meta.doc_count, terms = meta.term_count;
  const format::DictionaryView& dict = index.dictionary();
  const uint32_t sparse_first = meta.sparse_first;
  const uint32_t list_first = format::ListFirst(meta);
  if (sparse_first < terms && dict.Df(sparse_first) > meta.sparse_max_df)
    Fail(index, "a term above the sparse threshold has a sparse row");
  if (sparse_first > meta.exact_terms && sparse_first > 0 &&
      dict.Df(sparse_first - 1) <= meta.sparse_max_df)
    Fail(index, "a term under the sparse threshold has no sparse row");
  const std::vector<uint64_t> sparse_index = SectionArray<uint64_t>(index, SectionId::kSparseIndex);
  if (sparse_index.front() != 0 ||
      sparse_index.back() != index.Section(SectionId::kSparseData).size()) {
    Fail(index, "the sparse index does not cover the sparse rows");
  }
  std::vector<uint32_t> list;
  const format::ListGroups groups = index.ListGroups();
  for (uint64_t t = list_first; t < terms; ++t) {
    const uint64_t g = groups.Group(static_cast<uint32_t>(t));
    const bool last = groups.LastInGroup(static_cast<uint32_t>(t));
    if (last) {  // the group's lists end exactly where the next group starts
      const auto* data =
          reinterpret_cast<const uint8_t*>(index.Section(SectionId::kSparseData).data());
      const uint8_t* stop = nullptr;
      const uint32_t group_first = groups.GroupFirst(static_cast<uint32_t>(t));
      if (sparse_index[g] > sparse_index[g + 1] ||
          !format::DecodeSparseRow(data + sparse_index[g], data + sparse_index[g + 1], group_first,
                                   static_cast<uint32_t>(t), dict, docs, &list, &stop) ||
          stop != data + sparse_index[g + 1]) {
        Fail(index, "sparse rows group " + std::to_string(g) + " is not packed");
      }
    }
    index.SparseRow(static_cast<uint32_t>(t), &list);
    if (list.size() != df[t] ||
        std::adjacent_find(list.begin(), list.end(), std::greater_equal<uint32_t>()) != list.end())
      Fail(index, "the document list of term " + std::to_string(t) + " is not its documents");
    const uint32_t id = static_cast<uint32_t>(t);
    for (uint32_t d : list) {
      if (!index.Contains(d, &id, 1))
        Fail(index, "the document list of term " + std::to_string(t) + " lists document " +
                        std::to_string(d) + ", which does not hold it");
    }
  }
}

}  // namespace

// RANK_BOUNDS and the total length in META are what the forward records' counts make of them,
// and META's position bytes what their positions take.
void CheckRankBounds(const format::SegmentReader& index, const ForwardRecords& forward,
                     const std::vector<uint32_t>& df) {
  const uint64_t docs = index.doc_count();
  // At the section's own average length (RankBounds refuses one that is not a length).
  format::RankBoundsWriter bounds(docs, format::BoundedTerms(df, docs), index.RankBounds().a0());
  std::vector<uint32_t> ids;
  format::ForwardCounts counts;
  format::ForwardPositions positions;
  uint64_t total = 0, position_bytes = 0;
  std::string scratch;
  for (uint64_t d = 0; d < docs; ++d) {
    forward.Decode(d, &ids, &counts, &positions);
    bounds.Add(d, ids, counts.tf, counts.length);
    total += counts.length;
    scratch.clear();
    position_bytes += format::EncodeForwardRecord(ids, counts, scratch, &positions);
  }
  if (total != index.meta().total_length) Fail(index, "document lengths do not add up");
  if (position_bytes != index.meta().position_bytes)
    Fail(index, "the positions' bytes do not add up");
  if (bounds.Finish() != index.Section(SectionId::kRankBounds))
    Fail(index, "rank bounds do not match the forward records");
}

void CheckIndex(const format::SegmentReader& index) {
  // Every byte first: checksums of all sections and chunks, zero padding.
  index.file().VerifyAll();
  CheckStructure(index);
  const format::MetaRecord& meta = index.meta();
  if (!(meta.fp_rate > 0 && meta.fp_rate < 1)) Fail(index, "false-positive target out of range");
  const std::vector<uint64_t> hashes = CheckDictionary(index);
  const ForwardRecords forward(index, PairHashes(index, hashes));
  const DocumentCounts counts = CheckDocuments(index, forward);
  const uint64_t columns = CheckBands(index, forward, hashes, counts.df);
  CheckLists(index, counts.df);
  CheckRankBounds(index, forward, counts.df);
  if (columns != counts.non_empty) {
    Fail(index, "the bands hold " + Plural(columns, "document", "documents") + ", " +
                    Plural(counts.non_empty, "document has", "documents have") + " terms");
  }
}

}  // namespace bitsift::query
