// The work behind bitsift::Index: one or several opened indexes answering queries, with the
// results' files looked at, their matching lines, documents and statistics, in the public
// API's types. The API (api/bitsift.cc) only turns what is thrown here into a Status.
#ifndef BITSIFT_ANSWERS_INDEX_ENGINE_H_
#define BITSIFT_ANSWERS_INDEX_ENGINE_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answers/query_form.h"
#include "bitsift/index.h"
#include "query/index_set.h"
#include "query/scope.h"

namespace bitsift::answers {

class IndexEngine {
 public:
  // Opens the index directories `paths` as query::IndexSet does (throws as it throws).
  IndexEngine(const std::vector<std::string>& paths, const OpenOptions& options);

  const query::IndexSet& set() const { return set_; }
  // The index directories as given to the constructor.
  const std::vector<std::string>& opened_paths() const { return paths_; }

  // Answers `form` (parsed under the default rules; read under the set's as needed) as
  // bitsift::Index::Query describes, `parse_us` added to the statistics. Throws Error: kCorrupt
  // for a damaged chunk or record it reads, kInvalidArgument for a bad scope entry or a query
  // the set's rules cannot read.
  QueryResult Answer(const QueryForm& form, const QueryOptions& options, double parse_us) const;

  // bitsift::Index::RankStatisticsOf: the set's statistics for `form`'s scoring parts. Throws
  // as Answer does.
  RankStatistics Statistics(const QueryForm& form, const QueryOptions& options) const;

  // What became of document `id`'s file when its lines were asked for.
  enum class LinesState { kRead, kChanged, kVanished };
  // The matching lines of document `id` (bitsift::Index::MatchingLines) into *groups, or the
  // state of its file that stopped reading it (nothing read then). Throws Error(kIo) if it
  // cannot be read, Error(kInvalidArgument) for an in-memory document without
  // options.document_text.
  LinesState MatchingLines(uint32_t id, const QueryForm& form, const bitsift::LineOptions& options,
                           std::vector<bitsift::LineGroup>* groups) const;

  // bitsift::Index::document and document_path: empty for a damaged record.
  DocumentInfo Document(uint32_t id) const;
  DocumentPath Path(uint32_t id) const;
  FileState StateOfFile(uint32_t id) const;
  IndexStats Stats() const;

 private:
  // The documents of each index a query with `options` may return (ScopeOf), resolved once
  // for each scope and absolute working_dir (a relative one depends on the process's directory
  // at the call, so it is resolved every time): resolving costs a realpath (a readlink per
  // component), several microseconds, a third of a whole query on kjv, and `query --queries`
  // asks the same each time.
  std::vector<query::IndexScope> Scope(const QueryOptions& options) const;
  // How a phrase's candidates are read: the embedder's texts (options.document_text), or the
  // files as indexed.
  query::IndexSet::SegmentText TextOf(const QueryOptions& options) const;
  // Moves the documents of result->documents whose file vanished to result->vanished and lists
  // those whose file changed in result->changed; looks only at files not in *known (if given),
  // and adds what it saw there. Reads, so verifies, the record and path of every document of
  // the result (throws Error(kCorrupt) for a damaged one).
  void SetAsideStaleFiles(QueryResult* result, std::vector<std::optional<FileState>>* known) const;

  std::optional<std::vector<uint32_t>> shards_;  // OpenOptions::shards, sorted
  query::IndexSet set_;
  std::vector<std::string> paths_;
  mutable std::mutex scope_mu_;
  mutable bool scope_known_ = false;
  mutable std::vector<std::string> scope_entries_;
  mutable std::string scope_dir_;
  mutable std::vector<query::IndexScope> scope_value_;
};

// The documents of each index of `set` that a query may return, for the scope entries and
// working directory of bitsift::QueryOptions. Throws Error(kInvalidArgument) for an absolute
// entry outside every index's tree or a relative one that leaves the root.
std::vector<query::IndexScope> ScopeOf(const query::IndexSet& set,
                                       const std::vector<std::string>& scope,
                                       const std::string& working_dir);

// bitsift::PathLines (include/bitsift/index.h has the contract), with `path_of` giving a
// document's root and path (bitsift::Index::document_path).
std::vector<std::string> PathLines(const std::function<DocumentPath(uint32_t)>& path_of,
                                   const uint32_t* ids, size_t n, std::string_view prefix,
                                   std::string_view from_dir, char end);

}  // namespace bitsift::answers

#endif  // BITSIFT_ANSWERS_INDEX_ENGINE_H_
