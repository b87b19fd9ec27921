#include "answers/file_states.h"

#include <sys/stat.h>

#include <string_view>
#include <utility>

#include "format/doc_table.h"
#include "format/segment_reader.h"
#include "util/files.h"

namespace bitsift::answers {
namespace {

// The state of an indexed file from its lstat (nullptr: it could not be looked at).
FileState StateOf(const format::DocRecord& d, const struct stat* st) {
  if (st == nullptr || !S_ISREG(st->st_mode)) return FileState::kVanished;
  return format::SameFileFacts(d, *st) ? FileState::kCurrent : FileState::kChanged;
}

// Gives each segment's reader room for the records it will keep for ids[at(0)], ...,
// ids[at(n - 1)] (format::SegmentReader::ExpectRecords), before they are read from two threads.
template <typename At>
void ExpectRecords(const query::IndexSet& set, const std::vector<uint32_t>& ids, size_t n,
                   const At& at) {
  std::vector<size_t> per_segment(set.segments().size(), 0);
  for (size_t k = 0; k < n; ++k) ++per_segment[&set.SegmentOf(ids[at(k)]) - set.segments().data()];
  for (size_t s = 0; s < per_segment.size(); ++s) {
    if (per_segment[s] != 0) set.segments()[s].reader->ExpectRecords(per_segment[s]);
  }
}

}  // namespace

std::vector<FileState> LookAtDocumentFiles(const query::IndexSet& set,
                                           const std::vector<uint32_t>& ids) {
  std::vector<FileState> states(ids.size(), FileState::kUnknown);
  const std::vector<query::IndexSet::Index>& indexes = set.indexes();
  const bool one_index = indexes.size() == 1;
  for (size_t x = 0; x < indexes.size(); ++x) {
    // Positions in ids of this index's documents: all of them with one index (not listed: a
    // query's 626k results would list 2.5 MB more).
    std::vector<uint32_t> listed;
    if (!one_index) {
      for (size_t i = 0; i < ids.size(); ++i) {
        if (set.SegmentOf(ids[i]).index == x) listed.push_back(static_cast<uint32_t>(i));
      }
    }
    const size_t n = one_index ? ids.size() : listed.size();
    if (n == 0) continue;
    auto at = [&](size_t k) -> size_t { return one_index ? k : listed[k]; };
    if (indexes[x].root.empty()) {  // in-memory documents: no file to look at
      for (size_t k = 0; k < n; ++k) {
        const query::IndexSet::Segment& s = set.SegmentOf(ids[at(k)]);
        (void)s.reader->path(ids[at(k)] - s.first_id);  // verified all the same
      }
      continue;
    }
    ExpectRecords(set, ids, n, at);
    auto record = [&](size_t k) {
      const query::IndexSet::Segment& s = set.SegmentOf(ids[at(k)]);
      return std::pair<const format::SegmentReader*, uint32_t>{s.reader.get(),
                                                               ids[at(k)] - s.first_id};
    };
    LookAtFiles(
        indexes[x].root, n,
        [&](size_t k) -> std::string_view {
          auto [reader, local] = record(k);
          return reader->path(local);
        },
        [&](size_t k, const struct stat* st) {
          auto [reader, local] = record(k);
          states[at(k)] = StateOf(reader->doc(local), st);
        },
        kLookWithHelper);
  }
  return states;
}

FileState LookAtDocumentFile(const query::IndexSet& set, uint32_t id) {
  const query::IndexSet::Segment& s = set.SegmentOf(id);
  const std::string& root = set.indexes()[s.index].root;
  if (root.empty()) return FileState::kUnknown;
  FileState state = FileState::kUnknown;
  LookAtFiles(
      root, 1, [&](size_t) -> std::string_view { return s.reader->path(id - s.first_id); },
      [&](size_t, const struct stat* st) { state = StateOf(s.reader->doc(id - s.first_id), st); },
      1);
  return state;
}

}  // namespace bitsift::answers
