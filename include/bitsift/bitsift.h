// bitsift: exact full-text search over bit-sliced Bloom-filter signatures.
//
// The embeddable API, one header per concept: status.h (Status), build.h (building and
// updating an index), tokenize.h (the token contract), document.h (documents and their files),
// query.h (the query language and a query's answer), lines.h (matching lines), index.h (an open
// index) and version.h. This header includes them all. They use only the C++ standard library:
// no ICU, TBB or Boost type appears in them and no exception crosses them; every call that can
// fail returns a Status. Typical use:
//
//   bitsift::IndexSummary summary;
//   bitsift::Status s = bitsift::BuildIndex("docs", "docs/.bitsift", {}, &summary);  // or update
//   std::unique_ptr<bitsift::Index> index;
//   if (s.ok()) s = bitsift::Index::Open("docs/.bitsift", &index);
//   bitsift::ParsedQuery query;
//   if (s.ok()) s = bitsift::ParsedQuery::Parse("bloom \"false positive\" -java", {}, &query);
//   bitsift::QueryResult result;
//   if (s.ok()) s = index->Query(query, {}, &result);
//   for (uint32_t id : result.documents) puts(index->document(id).path.c_str());
#ifndef BITSIFT_BITSIFT_H_
#define BITSIFT_BITSIFT_H_

#include "bitsift/build.h"
#include "bitsift/document.h"
#include "bitsift/index.h"
#include "bitsift/lines.h"
#include "bitsift/query.h"
#include "bitsift/shards.h"
#include "bitsift/status.h"
#include "bitsift/tokenize.h"
#include "bitsift/version.h"

#endif  // BITSIFT_BITSIFT_H_
