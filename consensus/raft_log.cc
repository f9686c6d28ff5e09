#include "consensus/raft_log.h"

#include <algorithm>
#include <cassert>

#include "consensus/messages.h"

namespace zkraft::consensus {

RaftLog::RaftLog(Index offset, Term offset_term, std::vector<Entry> entries)
    : offset_(offset), offset_term_(offset_term), stable_(offset) {
  for (auto& e : entries) {
    assert(e.index == last_index() + 1);
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
  assert(e.index == last_index() + 1);
  entries_.push_back(std::move(e));
}

void RaftLog::truncate_from(Index i) {
  assert(i > offset_);
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
  if (i <= stable_ || !match_term(i, t)) return;
  stable_ = i;
}

void RaftLog::restore(Index index, Term t) {
  entries_.clear();
  offset_ = index;
  offset_term_ = t;
  stable_ = index;
}

void RaftLog::compact(Index through) {
  if (through <= offset_) return;
  assert(through <= last_index());
  const Term t = at(through).term;
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(through - offset_));
  offset_ = through;
  offset_term_ = t;
  stable_ = std::max(stable_, offset_);
}

}  // namespace zkraft::consensus
