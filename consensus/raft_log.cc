#include "consensus/raft_log.h"

#include <algorithm>

#include "consensus/invariant.h"
#include "consensus/messages.h"

namespace zkraft::consensus {

RaftLog::RaftLog(Index offset, Term offset_term, std::vector<Entry> entries)
    : offset_(offset), offset_term_(offset_term), stable_(offset) {
  for (auto& e : entries) {
    ZKRAFT_INVARIANT(e.index == last_index() + 1, "recovered entries must follow the offset without a gap");
    ZKRAFT_INVARIANT(e.term >= last_term(), "log terms never decrease");
    entries_.push_back(std::move(e));
  }
  stable_ = last_index();
}

std::optional<Term> RaftLog::term(Index i) const {
  if (i == offset_) return offset_term_;
  if (i < offset_ || i > last_index()) return std::nullopt;
  return at(i).term;
}

std::vector<Entry> RaftLog::slice(Index lo, Index hi, size_t max_bytes) const {
  std::vector<Entry> out;
  size_t bytes = 0;
  for (Index i = lo; i <= hi; ++i) {
    const Entry& e = at(i);
    bytes += entry_size(e);
    if (!out.empty() && bytes > max_bytes) break;
    out.push_back(e);
  }
  return out;
}

std::vector<Entry> RaftLog::unstable_entries() const {
  return std::vector<Entry>(entries_.begin() + static_cast<std::ptrdiff_t>(stable_ - offset_),
                            entries_.end());
}

void RaftLog::append(Entry e) {
  ZKRAFT_INVARIANT(e.index == last_index() + 1, "entries are appended at last_index()+1");
  ZKRAFT_INVARIANT(e.term >= last_term(), "log terms never decrease");
  entries_.push_back(std::move(e));
}

void RaftLog::truncate_from(Index i) {
  ZKRAFT_INVARIANT(i > offset_, "entries at or below the compaction point cannot be truncated");
  if (i > last_index()) return;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i - offset_ - 1), entries_.end());
  stable_ = std::min(stable_, i - 1);
}

bool RaftLog::is_up_to_date(Index last, Term lt) const {
  return lt > last_term() || (lt == last_term() && last >= last_index());
}

Index RaftLog::find_conflict_by_term(Index index, Term t) const {
  index = std::min(index, last_index());
  while (index > offset_) {
    if (at(index).term <= t) return index;
    --index;
  }
  return offset_;
}

void RaftLog::stable_to(Index i, Term t) {
  // An index beyond the log (truncated since the Ready was taken) never matches and is ignored.
  if (i <= stable_ || !match_term(i, t)) return;
  stable_ = i;
  ZKRAFT_INVARIANT(offset_ <= stable_ && stable_ <= last_index(), "the stable mark stays within the log");
}

void RaftLog::restore(Index index, Term t) {
  entries_.clear();
  offset_ = index;
  offset_term_ = t;
  stable_ = index;
}

void RaftLog::compact(Index through) {
  if (through <= offset_) return;
  ZKRAFT_INVARIANT(through <= last_index(), "cannot compact beyond the last entry");
  const Term t = at(through).term;
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(through - offset_));
  offset_ = through;
  offset_term_ = t;
  stable_ = std::max(stable_, offset_);
}

Index RaftLog::tail_start(Index through, uint64_t max_entries, size_t max_bytes) const {
  ZKRAFT_INVARIANT(offset_ <= through && through <= last_index(), "the tail ends within the log");
  const Index by_count = through - offset_ > max_entries ? through - max_entries : offset_;
  if (max_bytes == 0) return by_count;
  // Walks back from `through` only as far as the count allows: at most max_entries steps.
  size_t bytes = 0;
  Index start = through;
  while (start > by_count) {
    bytes += entry_size(at(start));
    if (bytes > max_bytes) break;
    --start;
  }
  return start;
}

}  // namespace zkraft::consensus
