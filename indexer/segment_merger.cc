#include "indexer/segment_merger.h"

#include <malloc.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <queue>
#include <string_view>
#include <unordered_map>

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
#include "storage/file_writers.h"
#include "storage/mapped_file.h"
#include "util/error.h"
#include "util/files.h"

namespace bitsift::indexer {
namespace {

using format::SectionId;

constexpr uint32_t kNoId = UINT32_MAX;
// The passes over the sources release their mapped pages (ReleaseSourcePages) after this many
// documents, or this many merged terms: what a merge holds is its own memory, not its inputs'.
constexpr size_t kReleaseDocuments = 16384;
constexpr uint64_t kReleaseTerms = uint64_t{1} << 20;
// A streamed section is appended in pieces of about this many bytes.
constexpr size_t kStreamBytes = size_t{1} << 16;

// A live document of a source, in the output's (path) order.
struct DocRef {
  std::string_view path;
  uint32_t source;
  uint32_t local;
};

// Drops the sources' mapped pages from the resident set between passes (each pass reads them
// again from the page cache): the merge's memory is its own, not its inputs'.
void ReleaseSourcePages(const std::vector<MergeSource>& sources) {
  for (const MergeSource& s : sources) s.reader->file().ReleasePages();
}

bool Deleted(const MergeSource& s, uint32_t d) {
  return s.deleted != nullptr && s.deleted->contains(d);
}

// Phase 1: the live documents of all sources, sorted by path (each source is sorted already).
std::vector<DocRef> LiveDocuments(const std::vector<MergeSource>& sources) {
  std::vector<DocRef> refs;
  for (uint32_t s = 0; s < sources.size(); ++s) {
    const format::SegmentReader& r = *sources[s].reader;
    for (uint32_t d = 0; d < r.doc_count(); ++d) {
      if (!Deleted(sources[s], d)) refs.push_back({r.path(d), s, d});
    }
  }
  std::sort(refs.begin(), refs.end(),
            [](const DocRef& a, const DocRef& b) { return a.path < b.path; });
  for (size_t i = 1; i < refs.size(); ++i) {
    if (refs[i - 1].path == refs[i].path) [[unlikely]]
      throw Error(ErrorKind::kInvalidArgument, "two documents named '" + std::string(refs[i].path) +
                                                   "' in the segments to merge");
  }
  return refs;
}

bool HasDeleted(const MergeSource& s) { return s.deleted != nullptr && !s.deleted->empty(); }

// The document frequencies of the sources' terms among their live documents: by source and
// term id, for the sources with deleted documents; empty for the others, whose terms' live df
// is the df their dictionary records (4 bytes a term not held: 24 MB of linux-paras' 6M).
struct LiveDfs {
  const std::vector<MergeSource>* sources;
  std::vector<std::vector<uint32_t>> counted;

  uint32_t Of(uint32_t source, uint32_t id) const {
    const std::vector<uint32_t>& c = counted[source];
    return c.empty() ? (*sources)[source].reader->dictionary().Df(id) : c[id];
  }
};

// Phase 2: the live document frequencies (a term of deleted documents only gets 0 and is
// dropped), counted from the live documents' records of the sources with deleted documents.
LiveDfs CountLiveDf(const std::vector<MergeSource>& sources, const std::vector<DocRef>& refs) {
  LiveDfs out{&sources, std::vector<std::vector<uint32_t>>(sources.size())};
  std::vector<uint8_t> count(sources.size(), 0);
  bool any = false;
  for (size_t s = 0; s < sources.size(); ++s) {
    if (!HasDeleted(sources[s])) continue;
    count[s] = 1;
    any = true;
    out.counted[s].assign(sources[s].reader->dictionary().term_count(), 0);
  }
  if (!any) return out;
  std::vector<std::vector<uint32_t>>& df = out.counted;
  // In slices, the sources' pages released after each (their forward stores would otherwise
  // all be resident at the end: 35 MB of linux-files' 7 segments).
  for (size_t first = 0; first < refs.size(); first += kReleaseDocuments) {
    const size_t end = std::min(refs.size(), first + kReleaseDocuments);
    tbb::parallel_for(tbb::blocked_range<size_t>(first, end, 1024),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t i = range.begin(); i != range.end(); ++i) {
                          const DocRef& r = refs[i];
                          if (!count[r.source]) continue;
                          for (uint32_t id : sources[r.source].reader->DocumentTerms(r.local))
                            __atomic_fetch_add(&df[r.source][id], 1, __ATOMIC_RELAXED);
                        }
                      });
    ReleaseSourcePages(sources);
  }
  return out;
}

// Calls f(term, sources) for every distinct term of the sources' dictionaries in byte order,
// with the (source, id) pairs that hold it: a k-way merge of dictionary cursors.
template <typename F>
void ForEachMergedTerm(const std::vector<MergeSource>& sources, F&& f) {
  std::vector<format::DictionaryView::Cursor> cursors;
  cursors.reserve(sources.size());
  for (const MergeSource& s : sources) cursors.emplace_back(s.reader->dictionary());
  auto after = [&](size_t a, size_t b) { return cursors[a].term() > cursors[b].term(); };
  std::priority_queue<size_t, std::vector<size_t>, decltype(after)> heap(after);
  for (size_t i = 0; i < cursors.size(); ++i) {
    if (cursors[i].Next()) heap.push(i);
  }
  std::vector<size_t> popped;
  std::vector<std::pair<uint32_t, uint32_t>> holders;  // (source, id)
  for (uint64_t merged = 1; !heap.empty(); ++merged) {
    if (merged % kReleaseTerms == 0) ReleaseSourcePages(sources);
    popped.assign(1, heap.top());
    heap.pop();
    const std::string_view term = cursors[popped[0]].term();
    while (!heap.empty() && cursors[heap.top()].term() == term) {
      popped.push_back(heap.top());
      heap.pop();
    }
    holders.clear();
    for (size_t i : popped) holders.push_back({static_cast<uint32_t>(i), cursors[i].id()});
    f(term, holders);
    for (size_t i : popped) {
      if (cursors[i].Next()) heap.push(i);
    }
  }
}

// The merged dictionary: new ids for the sources' ids, its df runs, where its exact and
// sparse terms start, and the hashes of the terms that set Bloom bits.
struct MergedTerms {
  std::vector<std::vector<uint32_t>> new_id;  // [source][old id], kNoId for a dropped term
  std::vector<format::DfRun> runs;
  uint64_t count = 0;
  uint32_t exact_terms = 0;
  uint32_t segment_max_df = 0;  // the sparse threshold of the new segment
  uint32_t sparse_first = 0;
  // By new id, for the ids below sparse_first only: the rows need no other (a sparse term
  // sets no bit), and these are a few thousand of millions (46 MB of linux-paras' 5.7M).
  std::vector<uint64_t> hashes;
  uint64_t fingerprint = 0;  // format::TermFingerprint of all the terms
  // By new id, the hash of each pair term of the new segment (format::IsPairTerm; 0 for others,
  // none beyond): the records' pair filters are made anew of them. By source, the ids below
  // which a term held without a list stands at a position only if the record's pair filter
  // says so: its pair terms (format::SegmentReader::pair_terms), or all if it has every list
  // (MergeSource::every_position).
  std::vector<uint64_t> pair_hash;
  std::vector<uint32_t> source_pair_terms;
  // The new segment's positioned terms (format::IsPositionedTerm, or all of them below
  // MergeSegments' every_position_bytes of text) are its first ids: a record keeps no list of a
  // later one.
  uint32_t positioned_terms = 0;
};

// What the new segment's documents are: how many there are and have terms (which fix the
// exact terms and the sparse threshold), and the bytes of text they were read from.
struct DocumentCounts {
  uint64_t documents = 0;
  uint64_t nonempty = 0;
  uint64_t input_bytes = 0;
};

// Phase 1b: the counts of the live documents, from their records in the sources.
DocumentCounts CountDocuments(const std::vector<MergeSource>& sources,
                              const std::vector<DocRef>& refs) {
  DocumentCounts counts;
  counts.documents = refs.size();
  for (const DocRef& r : refs) {
    const format::DocRecord d = sources[r.source].reader->doc(r.local);
    counts.nonempty += d.term_count > 0;
    counts.input_bytes += d.size;
  }
  ReleaseSourcePages(sources);
  return counts;
}

// Phase 3: two passes over the merged dictionaries. The first counts the terms of each
// document frequency, which fixes where each frequency's ids start (ids by decreasing df)
// and so the exact and sparse terms; the second, in byte order again, gives the terms of one
// frequency consecutive ids in byte order (the builder's tie rule), and writes the new
// dictionary's sections to w as it goes.
MergedTerms MergeDictionaries(const std::vector<MergeSource>& sources, LiveDfs& live_df,
                              DocumentCounts docs, uint32_t sparse_max_df,
                              uint64_t every_position_bytes, format::IndexFileWriter& w) {
  auto df_of = [&](const auto& holders) {
    uint64_t df = 0;
    for (auto [s, id] : holders) df += live_df.Of(s, id);
    return df;
  };
  std::map<uint32_t, uint64_t, std::greater<>> terms_with_df;
  ForEachMergedTerm(sources, [&](std::string_view, const auto& holders) {
    const uint64_t df = df_of(holders);
    if (df > 0) ++terms_with_df[static_cast<uint32_t>(df)];
  });
  MergedTerms out;
  std::unordered_map<uint32_t, uint64_t> next_id;  // by df: the next id to give
  for (auto [df, n] : terms_with_df) {
    Ensure(out.count + n <= UINT32_MAX, ErrorKind::kInvalidArgument,
           "too many distinct terms for one segment");
    out.runs.push_back({static_cast<uint32_t>(out.count), df});
    next_id[df] = out.count;
    out.count += n;
  }
  out.exact_terms = CountExactTerms(out.runs, out.count, docs.nonempty);
  out.positioned_terms = static_cast<uint32_t>(out.count);
  if (docs.input_bytes >= every_position_bytes) {
    for (const format::DfRun& run : out.runs) {
      if (!format::IsPositionedTerm(run.df, docs.documents)) {
        out.positioned_terms = run.first_id;
        break;
      }
    }
  }
  out.segment_max_df = format::SegmentSparseMaxDf(sparse_max_df, docs.documents);
  out.sparse_first = format::SparseFirst(out.runs, out.count, out.exact_terms, out.segment_max_df);
  const uint32_t singles_first = !out.runs.empty() && out.runs.back().df == 1
                                     ? out.runs.back().first_id
                                     : static_cast<uint32_t>(out.count);
  out.new_id.resize(sources.size());
  for (size_t s = 0; s < sources.size(); ++s) {
    out.new_id[s].assign(sources[s].reader->dictionary().term_count(), kNoId);
    out.source_pair_terms.push_back(sources[s].every_position ? UINT32_MAX
                                                              : sources[s].reader->pair_terms());
  }
  out.hashes.resize(out.sparse_first);
  format::DictionaryWriter writer(singles_first, out.count);
  w.BeginSection(SectionId::kDictBlocks);
  ForEachMergedTerm(sources, [&](std::string_view term, const auto& holders) {
    const uint64_t df = df_of(holders);
    if (df == 0) return;
    const auto id = static_cast<uint32_t>(next_id[static_cast<uint32_t>(df)]++);
    for (auto [s, old] : holders) out.new_id[s][old] = id;
    const uint64_t hash = format::HashTerm(term);
    out.fingerprint ^= format::TermFingerprintPart(hash, id);
    if (id < out.sparse_first) out.hashes[id] = hash;
    if (format::IsPairTerm(df, docs.documents)) {
      if (out.pair_hash.size() <= id) out.pair_hash.resize(id + 1, 0);
      out.pair_hash[id] = hash;
    }
    writer.Add(term, id);
    if (writer.pending_bytes() >= (1 << 20)) {
      const std::string bytes = writer.TakeBlocks();
      w.Append(bytes.data(), bytes.size());
    }
  });
  const std::string bytes = writer.TakeBlocks();
  w.Append(bytes.data(), bytes.size());
  w.EndSection();
  w.AddSection(SectionId::kDictIndex, writer.index());
  w.AddSection(SectionId::kDictTop, format::DictTopKeys(writer.index()));
  w.AddSection(SectionId::kDfRuns, out.runs);
  w.AddSection(SectionId::kTermFilter, writer.filter());
  std::vector<std::vector<uint32_t>>().swap(live_df.counted);
  return out;
}

// Keeps the lists of positions of the terms below `first` (ids ascending, positions->which
// aligned with them): a source's record may hold lists of terms the new segment does not
// position (a flush keeps every term's, SegmentBuilder::Write).
void DropListsFrom(const std::vector<uint32_t>& ids, uint32_t first,
                   format::ForwardPositions* positions) {
  size_t keep = 0;
  while (keep < positions->which.size() && ids[positions->which[keep]] < first) ++keep;
  if (keep == positions->which.size()) return;
  positions->which.resize(keep);
  positions->begin.resize(keep + 1);
  positions->at.resize(positions->begin[keep]);
}

// A live document's terms under the new ids, ascending, with its counts and positions (kept
// aligned with the ids).
void MappedTerms(const std::vector<MergeSource>& sources, const MergedTerms& terms, const DocRef& r,
                 std::vector<uint32_t>* ids, format::ForwardCounts* counts,
                 format::ForwardPositions* positions) {
  *ids = sources[r.source].reader->DocumentTerms(r.local, counts, positions);
  // Of the terms held without a list, those the source's filter covered (its pair terms: the
  // first ids) stand at a position only if it says so (`unlisted`); any other may.
  thread_local std::vector<uint32_t> covered;  // new ids, ascending
  thread_local std::vector<uint16_t> was_unlisted;
  covered.clear();
  was_unlisted.swap(positions->unlisted);
  const std::vector<uint32_t>& map = terms.new_id[r.source];
  for (uint32_t& id : *ids) {
    if (id < terms.source_pair_terms[r.source]) covered.push_back(map[id]);
    id = map[id];
  }
  std::sort(covered.begin(), covered.end());
  format::SortRecord(ids, counts, positions);
  DropListsFrom(*ids, terms.positioned_terms, positions);
  // The pair filter of the new segment's pair terms.
  positions->pair_hash.clear();
  positions->unlisted.clear();
  if (positions->empty()) return;
  for (size_t k = 0, j = 0; k < ids->size(); ++k) {
    const uint32_t id = (*ids)[k];
    const uint64_t hash = id < terms.pair_hash.size() ? terms.pair_hash[id] : 0;
    if (j < positions->which.size() && positions->which[j] == k) {
      positions->pair_hash.push_back(hash);
      ++j;
    } else if (hash != 0) {
      const uint16_t f = format::LoneFingerprint(hash);
      if (!std::binary_search(covered.begin(), covered.end(), id) ||
          std::find(was_unlisted.begin(), was_unlisted.end(), f) != was_unlisted.end())
        positions->unlisted.push_back(f);
    }
  }
}

// The live documents' forward records under the new ids, in the output order: FORWARD_DATA
// as it will be written, and where each record starts (FORWARD_OFFSETS). Mapping a source's
// record to the new ids (decode, map, sort) is most of a merge's work; it is done once, and
// the rows and the sparse rows decode these records instead. The records wait in a scratch
// file beside the output, mapped, not in memory: they were most of what merging a whole index
// held (97 MB of linux-paras' 1.2M paragraphs, which then could not be merged into one
// segment within the default budget). Their mapped pages are dropped from the resident set
// after every kReleaseRecords records decoded.
class NewRecords {
 public:
  NewRecords(storage::MappedFile data, std::vector<uint64_t> offsets)
      : data_(std::move(data)), offsets_(std::move(offsets)) {}

  uint64_t count() const { return offsets_.size() - 1; }
  const std::vector<uint64_t>& offsets() const { return offsets_; }

  // The sorted new ids of document d (the output's numbering), decoded into *ids, for readers
  // in document order (the sparse rows): through the mapping, whose pages are dropped from the
  // resident set after every kReleaseRecords records. Thread-safe.
  void Decode(uint64_t d, std::vector<uint32_t>* ids) const {
    static const uint8_t kNone = 0;
    const uint8_t* p = data_.size() > 0 ? data_.data() : &kNone;
    DecodeRange(p + offsets_[d], p + offsets_[d + 1], ids);
    // Another thread may be reading a page this drops: it faults it in again from the page
    // cache (the mapping is of an unmodified file).
    if (decoded_.fetch_add(1, std::memory_order_relaxed) % kReleaseRecords == kReleaseRecords - 1)
      data_.ReleasePages();
  }

  // The same for readers all over the file (the rows: a band's documents in order of their
  // term counts), copied into *buffer with pread: a fault on the mapping maps the page cache's
  // whole folio (up to 2 MiB of a file written in large pieces), so a few hundred scattered
  // records made the whole file resident (53 MB more of linux-paras at the end of the rows).
  void DecodeByCopy(uint64_t d, std::vector<uint32_t>* ids, std::string* buffer) const {
    const uint64_t n = offsets_[d + 1] - offsets_[d];
    buffer->resize(n);
    if (n > 0) data_.Read(offsets_[d], n, buffer->data());
    const auto* p = reinterpret_cast<const uint8_t*>(buffer->data());
    DecodeRange(p, p + n, ids);
  }

  // Appends all the records to w's open section, in pieces read with pread (not mapped).
  void CopyTo(format::IndexFileWriter& w) const {
    std::string piece;
    for (uint64_t at = 0; at < data_.size(); at += kCopyBytes) {
      const uint64_t n = std::min<uint64_t>(kCopyBytes, data_.size() - at);
      piece.resize(n);
      data_.Read(at, n, piece.data());
      w.Append(piece.data(), n);
    }
  }

 private:
  static void DecodeRange(const uint8_t* begin, const uint8_t* end, std::vector<uint32_t>* ids) {
    const bool ok = format::DecodeForwardRecord(begin, end, ids);
    Ensure(ok, ErrorKind::kCorrupt, "merge: a record it encoded does not decode (a bug)");
  }

  // Records decoded in order between two releases of the mapping's pages.
  static constexpr uint64_t kReleaseRecords = 4096;
  static constexpr uint64_t kCopyBytes = uint64_t{1} << 20;

  storage::MappedFile data_;
  std::vector<uint64_t> offsets_;  // count() + 1 entries
  mutable std::atomic<uint64_t> decoded_{0};
};

// The ids of the new segment's bounded terms (format/rank_bounds.h): ids ascend as df falls, so
// they are those of the first runs.
std::vector<uint32_t> BoundedTerms(const MergedTerms& terms, uint64_t doc_count) {
  std::vector<uint32_t> out;
  for (size_t r = 0; r < terms.runs.size(); ++r) {
    if (!format::IsBoundedTerm(terms.runs[r].df, doc_count)) break;
    const uint64_t end = r + 1 < terms.runs.size() ? terms.runs[r + 1].first_id : terms.count;
    for (uint64_t id = terms.runs[r].first_id; id < end; ++id)
      out.push_back(static_cast<uint32_t>(id));
  }
  return out;
}

// Phase 4: every live document's new forward record (into a scratch file in `dir`) and its
// Bloom-hashed term count (for the bands), in slices of documents (each slice's records in
// parallel, then appended in order).
NewRecords EncodeDocuments(const std::vector<MergeSource>& sources, const MergedTerms& terms,
                           const std::vector<DocRef>& refs, uint32_t exact_terms,
                           uint32_t sparse_first, const std::string& dir,
                           std::vector<uint64_t>* bloom_counts, uint64_t* total_length,
                           uint64_t* position_bytes, format::RankBoundsWriter* bounds) {
  constexpr size_t kSlice = 4096;
  storage::ScratchFile scratch_file(dir);
  std::vector<uint64_t> offsets(refs.size() + 1, 0);
  bloom_counts->assign(refs.size(), 0);
  std::vector<std::string> records(std::min(kSlice, refs.size()));
  tbb::enumerable_thread_specific<std::vector<uint32_t>> scratch;
  tbb::enumerable_thread_specific<format::ForwardCounts> scratch_counts;
  tbb::enumerable_thread_specific<format::ForwardPositions> scratch_positions;
  std::atomic<uint64_t> length{0}, positioned{0};
  for (size_t first = 0; first < refs.size(); first += kSlice) {
    const size_t n = std::min(kSlice, refs.size() - first);
    // Whole blocks of RANK_BOUNDS to each task (kSlice is a multiple of kBoundBlockDocs).
    static_assert(kSlice % format::kBoundBlockDocs == 0);
    const size_t blocks = (n + format::kBoundBlockDocs - 1) / format::kBoundBlockDocs;
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, blocks), [&](const tbb::blocked_range<size_t>& range) {
          std::vector<uint32_t>& ids = scratch.local();
          format::ForwardCounts& counts = scratch_counts.local();
          format::ForwardPositions& positions = scratch_positions.local();
          const size_t end = std::min(n, range.end() * format::kBoundBlockDocs);
          for (size_t i = range.begin() * format::kBoundBlockDocs; i != end; ++i) {
            MappedTerms(sources, terms, refs[first + i], &ids, &counts, &positions);
            (*bloom_counts)[first + i] = BloomTermCount(ids, exact_terms, sparse_first);
            records[i].clear();
            positioned.fetch_add(format::EncodeForwardRecord(ids, counts, records[i], &positions),
                                 std::memory_order_relaxed);
            bounds->Add(first + i, ids, counts.tf, counts.length);
            length.fetch_add(counts.length, std::memory_order_relaxed);
          }
        });
    for (size_t i = 0; i < n; ++i) {
      scratch_file.Append(records[i].data(), records[i].size());
      offsets[first + i + 1] = scratch_file.size();
    }
    ReleaseSourcePages(sources);
  }
  *total_length = length.load();
  *position_bytes = positioned.load();
  return NewRecords(scratch_file.Map(), std::move(offsets));
}

// Phase 5: the rows, band by band (one band's rows in memory at a time), from the new records.
void WriteRows(format::IndexFileWriter& w, const NewRecords& records, const MergedTerms& terms,
               const RowPlan& plan, uint32_t exact_terms, uint32_t sparse_first) {
  w.BeginSection(SectionId::kRows);
  struct Scratch {
    std::vector<uint32_t> ids;
    std::string bytes;
  };
  tbb::enumerable_thread_specific<Scratch> scratch;
  for (const format::BandRecord& band : plan.bands) {
    format::BandRecord alone = band;
    alone.rows_offset = 0;
    alone.first_column = 0;
    // BuildSignatureRows is done with a column's ids before it asks this thread for the next.
    const std::vector<uint64_t> rows = BuildSignatureRows(
        {alone}, exact_terms, sparse_first, terms.hashes,
        [&](uint64_t, uint64_t column) -> const std::vector<uint32_t>& {
          Scratch& mine = scratch.local();
          records.DecodeByCopy(plan.band_docs[band.first_column + column], &mine.ids, &mine.bytes);
          return mine.ids;
        });
    w.Append(rows.data(), rows.size() * sizeof(uint64_t));
  }
  w.EndSection();
}

// Phase 6: DOC_BANDS, DOC_FACTS and DOC_FACTS_INDEX (and the ENCODINGS table they index) in
// the output order, DOC_FACTS streamed (its paths are ~20-60 bytes a document).
std::string WriteDocuments(format::IndexFileWriter& w, const std::vector<MergeSource>& sources,
                           const std::vector<DocRef>& refs, const RowPlan& plan,
                           uint64_t* input_bytes, uint64_t* postings) {
  {
    std::vector<uint32_t> column(refs.size(), format::kNoColumn);
    for (size_t c = 0; c < plan.band_docs.size(); ++c)
      column[plan.band_docs[c]] = static_cast<uint32_t>(c);
    const std::vector<uint8_t> bands = format::EncodeDocBands(column, plan.bands);
    w.AddSection(SectionId::kDocBands, bands);
  }
  std::vector<std::string> encodings = {format::kUtf8EncodingName};
  std::unordered_map<std::string, uint32_t> encoding_ids = {{format::kUtf8EncodingName, 0}};
  format::DocFactsWriter facts;
  w.BeginSection(SectionId::kDocFacts);
  for (size_t i = 0; i < refs.size(); ++i) {
    const DocRef& r = refs[i];
    const format::SegmentReader& reader = *sources[r.source].reader;
    format::DocRecord d = reader.doc(r.local);
    const std::string& encoding = reader.encoding(d);
    auto [it, fresh] = encoding_ids.try_emplace(encoding, static_cast<uint32_t>(encodings.size()));
    if (fresh) encodings.push_back(encoding);
    d.encoding = it->second;
    *input_bytes += d.size;
    *postings += d.term_count;
    facts.Add(d, r.path);
    if (facts.pending().size() >= kStreamBytes) {
      w.Append(facts.pending().data(), facts.pending().size());
      facts.ClearPending();
    }
    if (i % kReleaseDocuments == kReleaseDocuments - 1) ReleaseSourcePages(sources);
  }
  ReleaseSourcePages(sources);
  const std::vector<uint64_t> index = facts.Finish();
  w.Append(facts.pending().data(), facts.pending().size());
  facts.ClearPending();
  w.EndSection();
  w.AddSection(SectionId::kDocFactsIndex, index);
  return format::EncodeEncodingTable(encodings);
}

// Phase 7: SPARSE_DATA and SPARSE_INDEX (indexer/sparse_lists.h), from the new records: the
// lists of the terms from list_first (format::ListFirst) on.
void WriteSparseRows(format::IndexFileWriter& w, const NewRecords& records,
                     const MergedTerms& terms, uint32_t list_first, uint32_t sparse_first) {
  // The df of every listed term, from the runs.
  std::vector<uint32_t> df(terms.count - list_first);
  for (size_t r = 0; r < terms.runs.size(); ++r) {
    const uint64_t end = r + 1 < terms.runs.size() ? terms.runs[r + 1].first_id : terms.count;
    for (uint64_t id = std::max<uint64_t>(terms.runs[r].first_id, list_first); id < end; ++id)
      df[id - list_first] = terms.runs[r].df;
  }
  w.BeginSection(SectionId::kSparseData);
  const std::vector<uint64_t> index = WriteSparseLists(
      records.count(), list_first, sparse_first - list_first, df,
      [&](uint64_t d, std::vector<uint32_t>& scratch) -> const std::vector<uint32_t>& {
        records.Decode(d, &scratch);
        return scratch;
      },
      [&](std::string_view bytes) { w.Append(bytes.data(), bytes.size()); });
  w.EndSection();
  w.AddSection(SectionId::kSparseIndex, index);
}

}  // namespace

uint64_t EstimateMergeBytes(const std::vector<MergeSource>& sources, uint32_t sparse_max_df) {
  // The largest of the phases' memory (docs/living-index.md, "Merging"), with S the sources'
  // terms, M <= S the merged terms (counted as S), S' the terms of the sources with deleted
  // documents, H the merged terms that set Bloom bits (those in more than the new segment's
  // sparse threshold T of documents: at most F / T of them, F the sources' FORWARD_DATA
  // bytes, since a posting takes at least a byte) and D the documents:
  //   dictionaries (phase 3): a live df per term of S' (4), a new id per source term (4), a
  //     hash per term of H (8), the new dictionary's block index (about 1 a term);
  //   records (phase 4): the new ids (4 S), the hashes (8 H); the new records go to a
  //     scratch file, not to memory;
  //   rows (phase 5): the hashes, one band's rows (at most half the sources');
  //   sparse rows (phase 7): a df per merged term (4 M), a slice of the transposition: its ids
  //     (4 bytes a posting; at most kSparseSlicePostings, and a posting takes at least a byte
  //     of F) and its list starts (8 bytes a term, at most one a posting);
  // and throughout 48 bytes a document (its reference 24, its new record's offset 8, its
  // Bloom-term count 8, its band column and column 8), mapped pages (the sources' or the new
  // records', dropped as passes go: at most kMappedWindowBytes, at most the records') and
  // 1/8 for the allocator's slack.
  // Measured against the resident peak in docs/living-index.md, "Merging".
  constexpr uint64_t kMappedWindowBytes = uint64_t{16} << 20;
  // forward: the sources' ids and counts (their records without positions), a measure of
  // their postings, and of the records' pages mapped at once (the positions are read with
  // them, a page-cache cost that the window bounds).
  uint64_t terms = 0, counted = 0, docs = 0, rows = 0, forward = 0;
  for (const MergeSource& s : sources) {
    const uint64_t n = s.reader->dictionary().term_count();
    terms += n;
    if (HasDeleted(s)) counted += n;
    docs += s.reader->doc_count();
    rows += s.reader->SectionBytes(SectionId::kRows);
    const uint64_t records = s.reader->SectionBytes(SectionId::kForwardData);
    forward += records - std::min(records, s.reader->meta().position_bytes);
  }
  const uint32_t threshold = format::SegmentSparseMaxDf(sparse_max_df, docs);
  const uint64_t hashed = threshold == 0 ? terms : std::min(terms, forward / threshold);
  const uint64_t slice = std::min(kSparseSlicePostings, forward);
  const uint64_t dictionaries = counted * 4 + terms * 5 + hashed * 8;
  const uint64_t mapping = terms * 4 + hashed * 8;
  const uint64_t signature_rows = hashed * 8 + rows / 2;
  const uint64_t sparse_rows = terms * 4 + slice * 4 + std::min(terms, slice) * 8;
  const uint64_t peak = std::max({dictionaries, mapping, signature_rows, sparse_rows});
  const uint64_t mapped = std::min(kMappedWindowBytes, forward);
  return (peak + docs * 48 + mapped) * 9 / 8;
}

SegmentSummary MergeSegments(const std::vector<MergeSource>& sources, double fp_rate,
                             uint32_t sparse_max_df, const std::string& path,
                             const std::string& root, uint64_t every_position_bytes) {
  Ensure(fp_rate > 0 && fp_rate < 1, ErrorKind::kInvalidArgument,
         "--fp-rate must be between 0 and 1 (exclusive), got " + std::to_string(fp_rate));
  SegmentSummary summary;
  const std::vector<DocRef> refs = LiveDocuments(sources);
  if (refs.empty()) return summary;
  Ensure(refs.size() < UINT32_MAX, ErrorKind::kInvalidArgument,
         "too many documents for one segment");
  const DocumentCounts counts = CountDocuments(sources, refs);
  LiveDfs live_df = CountLiveDf(sources, refs);
  ReleaseSourcePages(sources);
  format::IndexFileWriter w(path);
  MergedTerms terms =
      MergeDictionaries(sources, live_df, counts, sparse_max_df, every_position_bytes, w);
  ReleaseSourcePages(sources);
  // Each free of a phase goes back to the system (malloc_trim) before the next phase grows:
  // in a process that has freed large blocks before (a build, before its last merge) glibc
  // serves blocks of up to 32 MB from its heaps, whose holes stay resident.
  ::malloc_trim(0);
  const uint32_t exact_terms = terms.exact_terms;
  const uint32_t sparse_first = terms.sparse_first;
  std::vector<uint64_t> bloom_counts;
  uint64_t total_length = 0, position_bytes = 0;
  // The champions are chosen at the live documents' average length, as a fresh build of them
  // chooses them: the sources' total lengths less their deleted documents' (read from their
  // records: a deletion is one record, a merge many).
  uint64_t live_length = 0;
  for (const MergeSource& s : sources) {
    live_length += s.reader->meta().total_length;
    if (!HasDeleted(s)) continue;
    for (uint32_t d = 0; d < s.reader->doc_count(); ++d) {
      if (!s.deleted->contains(d)) continue;
      uint32_t length = 0;
      s.reader->TermCounts(d, nullptr, 0, nullptr, &length);
      live_length -= std::min<uint64_t>(live_length, length);
    }
  }
  const double a0 = refs.empty() || live_length == 0
                        ? 1
                        : static_cast<double>(live_length) / static_cast<double>(refs.size());
  format::RankBoundsWriter bounds(refs.size(), BoundedTerms(terms, refs.size()), a0);
  const NewRecords records =
      EncodeDocuments(sources, terms, refs, exact_terms, sparse_first, DirectoryOf(path),
                      &bloom_counts, &total_length, &position_bytes, &bounds);
  std::vector<std::vector<uint32_t>>().swap(terms.new_id);  // the records were their last use
  const RowPlan plan = PlanRows(bloom_counts, fp_rate, exact_terms);
  std::vector<uint64_t>().swap(bloom_counts);
  ::malloc_trim(0);

  format::MetaRecord m{};
  m.doc_count = refs.size();
  m.term_count = terms.count;
  m.band_count = plan.bands.size();
  m.term_fingerprint = terms.fingerprint;
  m.fp_rate = fp_rate;
  m.exact_terms = exact_terms;
  m.sparse_max_df = terms.segment_max_df;
  m.sparse_first = sparse_first;
  m.input_bytes = counts.input_bytes;
  m.total_length = total_length;
  m.position_bytes = position_bytes;
  const std::string meta = NewSegmentMeta(m, root);

  w.AddSection(SectionId::kMeta, meta);
  w.AddSection(SectionId::kBands, plan.bands);
  w.AddSection(SectionId::kBandDocs, plan.band_docs);
  WriteRows(w, records, terms, plan, exact_terms, sparse_first);
  std::vector<uint64_t>().swap(terms.hashes);  // the rows were their last use
  ::malloc_trim(0);
  const std::string encodings =
      WriteDocuments(w, sources, refs, plan, &summary.input_bytes, &summary.postings);
  w.AddSection(SectionId::kForwardOffsets, format::EncodeForwardOffsets(records.offsets()));
  w.BeginSection(SectionId::kForwardData);
  records.CopyTo(w);
  w.EndSection();
  WriteSparseRows(w, records, terms, format::ListFirst(m), sparse_first);
  w.AddSection(SectionId::kEncodings, encodings);
  w.AddSection(SectionId::kRankBounds, bounds.Finish());
  summary.file_bytes = w.Finish();
  summary.documents = refs.size();
  summary.terms = terms.count;
  summary.bands = plan.bands.size();
  ::malloc_trim(0);
  return summary;
}

}  // namespace bitsift::indexer
