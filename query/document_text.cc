#include "query/document_text.h"

#include <string_view>

#include "documents/file_walker.h"
#include "documents/options.h"

namespace bitsift::query {

TextState ReadIndexedText(const IndexSet& set, const IndexSet::Segment& segment, uint32_t local,
                          std::string* text, std::string* detail, documents::LineOrigins* origins) {
  text->clear();
  const IndexSet::Index& index = set.indexes()[segment.index];
  if (index.root.empty()) return TextState::kNoFile;
  const std::map<std::string, std::string>& settings = index.manifest.settings;
  const documents::DocumentOptions options = documents::DocumentOptions::FromSettings(settings);
  const uint64_t max_file_size =
      format::EngineSettings::From(settings).max_file_size.value_or(UINT64_MAX);
  const format::DocRecord d = segment.reader->doc(local);
  documents::FileFacts facts;
  const documents::SkipReason r =
      documents::ReadDocumentText(index.root, std::string(segment.reader->path(local)),
                                  max_file_size, options, text, &facts, detail, origins);
  using documents::SkipReason;
  if (r == SkipReason::kVanished || r == SkipReason::kSymlink || r == SkipReason::kSpecial) {
    text->clear();
    return TextState::kVanished;
  }
  const bool same = facts.file_size == d.file_size && facts.mtime_ns == d.mtime_ns &&
                    facts.ctime_ns == d.ctime_ns && facts.inode == d.inode;
  if (r != SkipReason::kCount) {
    text->clear();
    // It was indexed, so one that is now too large or binary is another file than that one.
    if (r == SkipReason::kTooLarge || (!same && facts.inode != 0)) return TextState::kChanged;
    return TextState::kUnreadable;
  }
  if (!same || text->size() != d.size) {
    text->clear();
    return TextState::kChanged;
  }
  return TextState::kRead;
}

}  // namespace bitsift::query
