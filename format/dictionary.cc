#include "format/dictionary.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "format/bloom.h"
#include "util/error.h"
#include "util/varint.h"

namespace bitsift::format {

uint64_t DictKey(std::string_view term) {
  uint64_t key = 0;
  for (size_t i = 0; i < 8; ++i) {
    key = (key << 8) | (i < term.size() ? static_cast<uint8_t>(term[i]) : 0);
  }
  return key;
}

uint64_t TermFingerprintPart(uint64_t hash, uint64_t id) {
  uint64_t x = hash ^ (id * 0x9E3779B97F4A7C15ULL);
  x ^= x >> 33;  // the MurmurHash3 finalizer: every input bit affects every output bit
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t TermFingerprint(const std::vector<uint64_t>& hashes_by_id) {
  uint64_t fingerprint = 0;
  for (uint64_t id = 0; id < hashes_by_id.size(); ++id)
    fingerprint ^= TermFingerprintPart(hashes_by_id[id], id);
  return fingerprint;
}

std::vector<DfRun> EncodeDfRuns(const std::vector<uint32_t>& df) {
  std::vector<DfRun> runs;
  for (uint32_t id = 0; id < df.size(); ++id) {
    if (runs.empty() || runs.back().df != df[id]) {
      Ensure(runs.empty() || runs.back().df > df[id], ErrorKind::kInvalidArgument,
             "document frequencies must not increase with the term id");
      runs.push_back({id, df[id]});
    }
  }
  return runs;
}

void DictionaryWriter::Add(std::string_view term, uint32_t id) {
  Ensure(!term.empty() && (terms_ == 0 || std::string_view(prev_) < term),
         ErrorKind::kInvalidArgument, "dictionary terms must be added in ascending byte order");
  if (terms_ % kDictBlockTerms == 0) {
    const uint64_t offset = flushed_ + blocks_.size();
    Ensure(offset < (uint64_t{1} << 32), ErrorKind::kInvalidArgument,
           "the term dictionary of one segment must stay below 4 GiB");
    index_.push_back({DictKey(term), static_cast<uint32_t>(offset), singles_});
    PutVarint(term.size(), blocks_);
    blocks_.append(term);
  } else {
    const size_t limit = std::min(prev_.size(), term.size());
    size_t shared = 0;
    while (shared < limit && prev_[shared] == term[shared]) ++shared;
    PutVarint(shared, blocks_);
    PutVarint(term.size() - shared, blocks_);
    blocks_.append(term.substr(shared));
  }
  if (id >= singles_first_) {
    Ensure(id == uint64_t{singles_first_} + singles_, ErrorKind::kInvalidArgument,
           "the ids of terms of document frequency 1 must follow their byte order");
    ++singles_;
    PutVarint(0, blocks_);
  } else {
    PutVarint(uint64_t{id} + 1, blocks_);
  }
  filter_.Add(HashTerm(term));
  prev_.assign(term);
  ++terms_;
}

std::vector<uint64_t> DictTopKeys(const std::vector<DictBlockRecord>& index) {
  std::vector<uint64_t> top;
  for (uint64_t b = 0; b < index.size(); b += kDictTopStride) top.push_back(index[b].key);
  return top;
}

DictionaryView::DictionaryView(const IndexFile* file, uint64_t term_count)
    : file_(file), term_count_(term_count) {
  const uint64_t index_bytes = file->Section(SectionId::kDictIndex).size();
  const uint64_t run_bytes = file->Section(SectionId::kDfRuns).size();
  block_bytes_ = file->Section(SectionId::kDictBlocks).size();
  blocks_ = index_bytes / sizeof(DictBlockRecord);
  if (index_bytes % sizeof(DictBlockRecord) != 0 ||
      blocks_ != (term_count + kDictBlockTerms - 1) / kDictBlockTerms ||
      run_bytes % sizeof(DfRun) != 0 || block_bytes_ >= (uint64_t{1} << 32) ||
      file->Section(SectionId::kDictTop).size() !=
          (blocks_ + kDictTopStride - 1) / kDictTopStride * sizeof(uint64_t)) {
    Bad("dictionary section sizes");
  }
  const uint64_t filter_bytes = file->Section(SectionId::kTermFilter).size();
  filter_blocks_ = filter_bytes / (kTermFilterBlockWords * 4);
  if (filter_bytes % (kTermFilterBlockWords * 4) != 0 || filter_blocks_ == 0) {
    Bad("term filter section size");
  }
  const size_t run_count = run_bytes / sizeof(DfRun);
  if (run_count != 0) {  // (sections are 64-byte aligned: DfRuns can be read in place)
    runs_ = reinterpret_cast<const DfRun*>(file->Touch(SectionId::kDfRuns, 0, run_bytes));
    runs_end_ = runs_ + run_count;
  }
  // Runs start at id 0, at increasing ids below term_count, with decreasing df >= 1.
  if ((term_count == 0) != (run_count == 0)) Bad("document frequency runs");
  for (size_t r = 0; r < run_count; ++r) {
    const bool ok =
        runs_[r].first_id < term_count && runs_[r].df >= 1 &&
        (r == 0 ? runs_[r].first_id == 0
                : runs_[r].first_id > runs_[r - 1].first_id && runs_[r].df < runs_[r - 1].df);
    if (!ok) Bad("document frequency run " + std::to_string(r));
  }
  singles_first_ = run_count != 0 && runs_end_[-1].df == 1 ? runs_end_[-1].first_id
                                                           : static_cast<uint32_t>(term_count);
}

void DictionaryView::Bad(const std::string& what) const { CorruptIndex(file_->path(), what); }

uint32_t DictionaryView::Df(uint32_t id) const {
  if (id >= term_count_) [[unlikely]]
    Bad("term " + std::to_string(id) + ": id out of range");
  return RunOf(id)->df;
}

const DfRun* DictionaryView::RunOf(uint32_t id) const {
  // A bisection without branches (the comparison becomes a conditional move): a query looks up
  // two or three document frequencies a term among thousands of runs, and a branch on each
  // step's comparison is mispredicted half the time.
  const DfRun* base = runs_;  // runs_[0].first_id == 0 <= id: the run is in [base, base + n)
  for (size_t n = static_cast<size_t>(runs_end_ - runs_); n > 1;) {
    const size_t half = n / 2;
    base = base[half].first_id <= id ? base + half : base;
    n -= half;
  }
  return base;
}

uint64_t DictionaryView::DfTotal(uint32_t begin, uint32_t end) const {
  if (begin >= end) return 0;
  if (end > term_count_) [[unlikely]]
    Bad("term " + std::to_string(end - 1) + ": id out of range");
  const DfRun* it = RunOf(begin);
  uint64_t total = 0;
  for (uint32_t id = begin; id < end; ++it) {  // a run at a time: [id, its end or `end`)
    const uint64_t run_end =
        std::next(it) == runs_end_ ? end : std::min<uint64_t>(end, std::next(it)->first_id);
    total += (run_end - id) * it->df;
    id = static_cast<uint32_t>(run_end);
  }
  return total;
}

const DictBlockRecord& DictionaryView::Block(uint64_t b) const {
  return *reinterpret_cast<const DictBlockRecord*>(
      file_->Touch(SectionId::kDictIndex, b * sizeof(DictBlockRecord), sizeof(DictBlockRecord)));
}

uint64_t DictionaryView::BlockEnd(uint64_t b) const {
  return b + 1 < blocks_ ? Block(b + 1).offset : block_bytes_;
}

void DictionaryView::OpenBlock(uint64_t b, Cursor::Block* r) const {
  const DictBlockRecord rec = Block(b);
  const uint64_t end = BlockEnd(b);
  if (rec.offset > end || end > block_bytes_) Bad("dictionary block " + std::to_string(b));
  r->p = file_->Touch(SectionId::kDictBlocks, rec.offset, end - rec.offset);
  r->limit = r->p + (end - rec.offset);
  r->number = b;
  r->count = std::min<uint64_t>(kDictBlockTerms, term_count_ - b * kDictBlockTerms);
  r->next = 0;
  r->singles = rec.singles_before;
  r->term.clear();
}

void DictionaryView::DecodeTerm(Cursor::Block* r, uint64_t previous_length, RawTerm* t) const {
  uint64_t shared = 0, length, code;
  const bool ok = (r->next == 0 || GetVarint(&r->p, r->limit, &shared)) &&
                  shared <= previous_length && GetVarint(&r->p, r->limit, &length) &&
                  length <= uint64_t(r->limit - r->p) && shared + length > 0;
  if (!ok) Bad("dictionary block " + std::to_string(r->number));
  t->shared = shared;
  t->suffix = r->p;
  t->suffix_length = length;
  r->p += length;
  if (!GetVarint(&r->p, r->limit, &code)) Bad("dictionary block " + std::to_string(r->number));
  uint64_t id;
  if (code == 0) {
    id = uint64_t{singles_first_} + r->singles++;
    if (id >= term_count_) Bad("dictionary block " + std::to_string(r->number) + ": term id");
  } else {
    id = code - 1;
    if (id >= singles_first_) Bad("dictionary block " + std::to_string(r->number) + ": term id");
  }
  r->id = static_cast<uint32_t>(id);
  if (++r->next == r->count && r->p != r->limit) {
    Bad("dictionary block " + std::to_string(r->number) + ": bytes after its terms");
  }
}

void DictionaryView::NextTerm(Cursor::Block* r) const {
  RawTerm t;
  DecodeTerm(r, r->term.size(), &t);
  r->term.resize(t.shared);
  r->term.append(reinterpret_cast<const char*>(t.suffix), t.suffix_length);
}

std::optional<uint32_t> DictionaryView::FindInBlock(uint64_t b, std::string_view term) const {
  // Front-coded terms are compared with `term` without being rebuilt: `match` is how many
  // leading bytes the previous term shares with `term`, and every previous term is < term. A
  // term that keeps more than `match` bytes of the previous one differs from `term` where the
  // previous one did, in the same direction: it is < term too. Otherwise its suffix decides.
  Cursor::Block r;
  OpenBlock(b, &r);
  uint64_t match = 0, previous_length = 0;
  const auto* want = reinterpret_cast<const uint8_t*>(term.data());
  while (r.next < r.count) {
    RawTerm t;
    DecodeTerm(&r, previous_length, &t);
    const uint64_t length = t.shared + t.suffix_length;
    previous_length = length;
    if (t.shared > match) continue;
    // The term's first t.shared bytes equal term's; compare the rest.
    uint64_t m = t.shared;
    const uint64_t both = std::min<uint64_t>(length, term.size());
    while (m < both && t.suffix[m - t.shared] == want[m]) ++m;
    if (m == length && m == term.size()) return r.id;
    if (m == term.size() || (m < length && t.suffix[m - t.shared] > want[m])) return std::nullopt;
    match = m;  // this term < term: a proper prefix of it, or smaller at byte m
  }
  return std::nullopt;
}

template <typename F>
bool DictionaryView::ScanBlock(uint64_t b, F&& f) const {
  Cursor::Block r;
  OpenBlock(b, &r);
  while (r.next < r.count) {
    NextTerm(&r);
    if (!f(std::string_view(r.term), r.id)) return false;
  }
  return true;
}

bool DictionaryView::Cursor::Next() {
  if (block_.next == block_.count) {
    if (block_number_ == dict_.blocks_) return false;
    dict_.OpenBlock(block_number_++, &block_);
  }
  dict_.NextTerm(&block_);
  return true;
}

bool DictionaryView::BlockStartsAtOrBefore(uint64_t b, std::string_view term, uint64_t key) const {
  const uint64_t k = Block(b).key;
  if (k != key) return k < key;
  // A tie of the 8-byte keys: compare the block's first term, which is stored whole.
  Cursor::Block r;
  OpenBlock(b, &r);
  RawTerm t;
  DecodeTerm(&r, 0, &t);
  return std::string_view(reinterpret_cast<const char*>(t.suffix), t.suffix_length) <= term;
}

DictionaryView::TopKeys DictionaryView::Tops() const {
  const uint64_t count = (blocks_ + kDictTopStride - 1) / kDictTopStride;
  return TopKeys{file_->Touch(SectionId::kDictTop, 0, count * sizeof(uint64_t)), count};
}

std::pair<uint64_t, uint64_t> DictionaryView::TopBlocks(const TopKeys& top, uint64_t below,
                                                        uint64_t key) const {
  // Entries with the term's very key are rare (8 equal leading bytes): look ahead one at a
  // time, not by a second bisection (~11 more cache lines a lookup).
  uint64_t at_or_below = below;  // DICT_TOP entries with a key <= key
  while (at_or_below < top.count && top.key(at_or_below) <= key) ++at_or_below;
  return {below == 0 ? 0 : (below - 1) * kDictTopStride + 1,
          std::min(blocks_, at_or_below * kDictTopStride)};
}

std::pair<uint64_t, uint64_t> DictionaryView::TopRange(uint64_t key) const {
  // Blocks whose sampled key is below the term's start at or before it, those whose key is
  // above start after it. That leaves about one page of DICT_INDEX.
  const TopKeys top = Tops();
  uint64_t below = 0;  // DICT_TOP entries with key < key
  for (uint64_t l = 0, h = top.count; l < h;) {
    const uint64_t m = l + (h - l) / 2;
    if (top.key(m) < key)
      l = below = m + 1;
    else
      h = m;
  }
  return TopBlocks(top, below, key);
}

uint64_t DictionaryView::BlocksStartingAtOrBefore(std::string_view term) const {
  const uint64_t key = DictKey(term);
  // DICT_TOP first, then a bisection of about one page of DICT_INDEX.
  // invariant: blocks < lo start <= term, blocks >= hi start after it
  auto [lo, hi] = TopRange(key);
  if (lo >= hi) return lo;
  // The bisection's records, verified at once; each step prefetches the records the next step
  // may probe, so the cache misses of a cold page overlap instead of queueing one by one.
  const uint64_t first = lo;
  const auto* recs = reinterpret_cast<const DictBlockRecord*>(file_->Touch(
      SectionId::kDictIndex, first * sizeof(DictBlockRecord), (hi - lo) * sizeof(DictBlockRecord)));
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    __builtin_prefetch(&recs[lo + (mid - lo) / 2 - first]);
    __builtin_prefetch(&recs[mid + 1 + (hi - mid - 1) / 2 - first]);
    const uint64_t k = recs[mid - first].key;
    if (k < key || (k == key && BlockStartsAtOrBefore(mid, term, key))) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

bool DictionaryView::MayContainHash(uint64_t h) const {
  const uint64_t b = TermFilterBlock(h, filter_blocks_);
  const auto* block = reinterpret_cast<const uint32_t*>(file_->Touch(
      SectionId::kTermFilter, b * kTermFilterBlockWords * 4, kTermFilterBlockWords * 4));
  return TermFilterMayContain(block, h);
}

DictionaryView::Filter DictionaryView::VerifiedFilter() const {
  const uint64_t bytes = filter_blocks_ * kTermFilterBlockWords * 4;
  return {reinterpret_cast<const uint32_t*>(file_->Touch(SectionId::kTermFilter, 0, bytes)),
          filter_blocks_};
}

void DictionaryView::WillNeedLookups(const std::vector<std::string>& terms,
                                     const std::vector<uint64_t>& hashes, int stage) const {
  if (blocks_ == 0 || !file_->random_access() || file_->Warm(SectionId::kDictBlocks)) return;
  std::vector<std::pair<uint64_t, uint64_t>> pieces;  // {offset, length}, ascending
  auto ask = [&](SectionId id) {
    std::sort(pieces.begin(), pieces.end());
    file_->WillNeedPieces(id, pieces.size(), [&](size_t i) { return pieces[i]; });
    pieces.clear();
  };
  if (stage == 1) {
    for (uint64_t h : hashes) {
      pieces.emplace_back(TermFilterBlock(h, filter_blocks_) * kTermFilterBlockWords * 4,
                          kTermFilterBlockWords * 4);
    }
    ask(SectionId::kTermFilter);
    for (const std::string& t : terms) {
      if (t.empty()) continue;
      const auto [lo, hi] = TopRange(DictKey(t));
      if (lo < hi)
        pieces.emplace_back(lo * sizeof(DictBlockRecord), (hi - lo) * sizeof(DictBlockRecord));
    }
    ask(SectionId::kDictIndex);
    return;
  }
  for (size_t i = 0; i < terms.size() && i < hashes.size(); ++i) {
    if (terms[i].empty() || !MayContainHash(hashes[i])) continue;
    const uint64_t after = BlocksStartingAtOrBefore(terms[i]);
    if (after == 0) continue;
    const uint64_t b = after - 1;
    const uint64_t begin = Block(b).offset, end = BlockEnd(b);
    if (begin < end) pieces.emplace_back(begin, end - begin);
  }
  ask(SectionId::kDictBlocks);
}

std::optional<uint32_t> DictionaryView::Find(std::string_view term, uint64_t hash) const {
  if (blocks_ == 0 || term.empty()) return std::nullopt;
  // TERM_FILTER first: most terms a segment lacks end here, after one 32-byte block.
  if (!MayContainHash(hash)) return std::nullopt;
  const uint64_t after = BlocksStartingAtOrBefore(term);
  if (after == 0) return std::nullopt;
  return FindInBlock(after - 1, term);
}

bool DictionaryView::FindEvery(const std::string_view* terms, const uint64_t* hashes, size_t n,
                               uint32_t* ids) const {
  // Lookups go in groups, each step taken by every lookup of the group in turn (lockstep).
  constexpr size_t kGroup = 16;
  if (n > kGroup) {
    for (size_t at = 0; at < n; at += kGroup) {
      if (!FindEvery(terms + at, hashes + at, std::min(kGroup, n - at), ids + at)) return false;
    }
    return true;
  }
  if (n == 0) return true;
  if (blocks_ == 0) return false;
  // 1. The filter blocks, in order, each asked for one term ahead: the first term a filter
  // rules out ends the lookups without touching the other terms' blocks.
  auto filter_block = [&](size_t i) {
    return reinterpret_cast<const uint32_t*>(
        file_->Touch(SectionId::kTermFilter,
                     TermFilterBlock(hashes[i], filter_blocks_) * kTermFilterBlockWords * 4,
                     kTermFilterBlockWords * 4));
  };
  for (size_t i = 0; i < n; ++i) {
    if (terms[i].empty()) return false;
  }
  const uint32_t* block = filter_block(0);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t* next = i + 1 < n ? filter_block(i + 1) : nullptr;
    if (next != nullptr) __builtin_prefetch(next);
    if (!TermFilterMayContain(block, hashes[i])) return false;
    block = next;
  }
  // 2. DICT_TOP (TopRange's bisection, in lockstep). Bisections here take no branch on their
  // comparisons (a conditional move each): `base` is the first entry the term may sort before,
  // `n` the entries left from it, the same for every term over DICT_TOP; each step asks for
  // both entries the next step may probe.
  const TopKeys top = Tops();
  uint64_t key[kGroup], lo[kGroup], hi[kGroup];
  for (size_t i = 0; i < n; ++i) {
    key[i] = DictKey(terms[i]);
    lo[i] = 0;
  }
  if (top.count > 0) {
    for (uint64_t left = top.count; left > 1;) {
      const uint64_t half = left / 2;
      for (size_t i = 0; i < n; ++i) {
        lo[i] = top.key(lo[i] + half) < key[i] ? lo[i] + half : lo[i];
        __builtin_prefetch(top.p + (lo[i] + (left - half) / 2) * sizeof(uint64_t));
      }
      left -= half;
    }
    for (size_t i = 0; i < n; ++i) lo[i] += top.key(lo[i]) < key[i];  // entries with key < key[i]
  }
  const DictBlockRecord* recs[kGroup];
  uint64_t first[kGroup], left[kGroup];
  for (size_t i = 0; i < n; ++i) {
    std::tie(lo[i], hi[i]) = TopBlocks(top, lo[i], key[i]);
    first[i] = lo[i];
    left[i] = hi[i] - lo[i];
    recs[i] = left[i] > 0 ? reinterpret_cast<const DictBlockRecord*>(
                                file_->Touch(SectionId::kDictIndex, lo[i] * sizeof(DictBlockRecord),
                                             left[i] * sizeof(DictBlockRecord)))
                          : nullptr;
    if (recs[i] != nullptr) __builtin_prefetch(&recs[i][left[i] / 2]);
  }
  // 3. DICT_INDEX (BlocksStartingAtOrBefore's bisection, in lockstep): lo[i] becomes the number
  // of blocks that start at or before terms[i]. Only a tie of the 8-byte keys reads a block.
  auto starts_at_or_before = [&](size_t i, uint64_t b) {
    const uint64_t k = recs[i][b - first[i]].key;
    if (k == key[i]) [[unlikely]]
      return BlockStartsAtOrBefore(b, terms[i], key[i]);
    return k < key[i];
  };
  for (bool more = true; more;) {
    more = false;
    for (size_t i = 0; i < n; ++i) {
      if (left[i] <= 1) continue;
      const uint64_t half = left[i] / 2;
      // (A mask, not `?:`: with the tie's call beside it the compiler would branch.)
      lo[i] += half & (uint64_t{0} - starts_at_or_before(i, lo[i] + half));
      left[i] -= half;
      __builtin_prefetch(&recs[i][lo[i] + left[i] / 2 - first[i]]);
      more = more || left[i] > 1;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (left[i] > 0) lo[i] += starts_at_or_before(i, lo[i]);
  }
  // 4. The blocks: each asked for, then searched.
  for (size_t i = 0; i < n; ++i) {
    if (lo[i] == 0) return false;  // the term sorts before the first block
    const uint64_t b = lo[i] - 1, begin = Block(b).offset, end = BlockEnd(b);
    if (begin < end) {
      const uint8_t* p = file_->Touch(SectionId::kDictBlocks, begin, end - begin);
      __builtin_prefetch(p);
      __builtin_prefetch(p + 64);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const std::optional<uint32_t> id = FindInBlock(lo[i] - 1, terms[i]);
    if (!id) return false;
    ids[i] = *id;
  }
  return true;
}

uint64_t DictionaryView::ForEachWithPrefix(
    std::string_view prefix, const std::function<bool(std::string_view, uint32_t)>& f) const {
  if (blocks_ == 0) return 0;
  // The first block that may hold a term >= prefix: the last one starting before it.
  uint64_t first = 0;
  if (!prefix.empty()) {
    const uint64_t after = BlocksStartingAtOrBefore(prefix);
    first = after == 0 ? 0 : after - 1;
  }
  uint64_t bytes = 0;
  for (uint64_t b = first; b < blocks_; ++b) {
    const uint64_t begin = Block(b).offset;
    bool past = false;
    const bool go_on = ScanBlock(b, [&](std::string_view t, uint32_t id) {
      if (t.substr(0, prefix.size()) == prefix) return f(t, id);
      past = t > prefix;
      return !past;
    });
    bytes += BlockEnd(b) - begin;
    if (!go_on) break;
  }
  return bytes;
}

}  // namespace bitsift::format
