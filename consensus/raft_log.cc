#include "consensus/raft_log.h"

#include <algorithm>

#include "consensus/messages.h"

namespace zkraft::consensus {

RaftLog::RaftLog(Index offset, Term offset_term, std::vector<Entry> entries)
    : offset_(offset), offset_term_(offset_term), stable_(offset), evicted_(offset) {
  for (auto& e : entries) {
    ZKRAFT_INVARIANT(e.index == last_index() + 1, "recovered entries must follow the offset without a gap");
    ZKRAFT_INVARIANT(e.term >= last_term(), "log terms never decrease");
    memory_bytes_ += entry_size(e);
    entries_.push_back(std::move(e));
  }
  stable_ = last_index();
}

std::optional<Term> RaftLog::term(Index i) const {
  if (i == offset_) return offset_term_;
  if (i < offset_ || i > last_index()) return std::nullopt;
  if (i > evicted_) return at(i).term;
  // The run that holds i: the last one starting at or before it.
  auto run = std::upper_bound(evicted_terms_.begin(), evicted_terms_.end(), i,
                              [](Index v, const std::pair<Index, Term>& r) { return v < r.first; });
  ZKRAFT_INVARIANT(run != evicted_terms_.begin(), "the evicted runs cover every evicted entry");
  return std::prev(run)->second;
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
  return std::vector<Entry>(entries_.begin() + static_cast<std::ptrdiff_t>(stable_ - evicted_), entries_.end());
}

void RaftLog::append(Entry e) {
  ZKRAFT_INVARIANT(e.index == last_index() + 1, "entries are appended at last_index()+1");
  ZKRAFT_INVARIANT(e.term >= last_term(), "log terms never decrease");
  memory_bytes_ += entry_size(e);
  entries_.push_back(std::move(e));
}

void RaftLog::truncate_from(Index i) {
  // Evicted entries are applied, so committed: a leader never replaces them.
  ZKRAFT_INVARIANT(i > evicted_, "entries at or below the compaction or eviction point cannot be truncated");
  if (i > last_index()) return;
  const auto from = entries_.begin() + static_cast<std::ptrdiff_t>(i - evicted_ - 1);
  for (auto it = from; it != entries_.end(); ++it) memory_bytes_ -= entry_size(*it);
  entries_.erase(from, entries_.end());
  stable_ = std::min(stable_, i - 1);
}

bool RaftLog::is_up_to_date(Index last, Term lt) const {
  return lt > last_term() || (lt == last_term() && last >= last_index());
}

Index RaftLog::find_conflict_by_term(Index index, Term t) const {
  index = std::min(index, last_index());
  while (index > evicted_) {
    if (at(index).term <= t) return index;
    --index;
  }
  // Among the evicted entries, a run at a time: the newest run whose term is <= t ends at the
  // answer (runs ascend in term, as the log does).
  for (auto run = evicted_terms_.rbegin(); run != evicted_terms_.rend() && index > offset_; ++run) {
    if (run->first > index) continue;
    if (run->second <= t) return index;
    index = run->first - 1;
  }
  return std::max(index, offset_);
}

void RaftLog::stable_to(Index i, Term t) {
  // An index beyond the log (truncated since the Ready was taken) never matches and is ignored.
  if (i <= stable_ || !match_term(i, t)) return;
  stable_ = i;
  ZKRAFT_INVARIANT(offset_ <= stable_ && stable_ <= last_index(), "the stable mark stays within the log");
}

void RaftLog::forget_evicted() {
  evicted_terms_.clear();
  evicted_conf_.clear();
}

void RaftLog::restore(Index index, Term t) {
  entries_.clear();
  memory_bytes_ = 0;
  forget_evicted();
  offset_ = index;
  offset_term_ = t;
  stable_ = index;
  evicted_ = index;
}

void RaftLog::compact(Index through) {
  if (through <= offset_) return;
  ZKRAFT_INVARIANT(through <= last_index(), "cannot compact beyond the last entry");
  const Term t = *term(through);
  if (through <= evicted_) {
    // Only runs and membership changes of evicted entries go; the run holding `through` now
    // starts after it (or is empty and goes too).
    auto keep = std::upper_bound(evicted_terms_.begin(), evicted_terms_.end(), through,
                                 [](Index v, const std::pair<Index, Term>& r) { return v < r.first; });
    const bool split = keep != evicted_terms_.begin() && through < evicted_;
    if (split) {
      const Term split_term = std::prev(keep)->second;
      keep = evicted_terms_.erase(evicted_terms_.begin(), keep);
      if (keep == evicted_terms_.end() || keep->first > through + 1) {
        evicted_terms_.insert(keep, {through + 1, split_term});
      }
    } else {
      evicted_terms_.erase(evicted_terms_.begin(), keep);
    }
    std::erase_if(evicted_conf_, [through](const Entry& e) { return e.index <= through; });
  } else {
    forget_evicted();
    const auto end = entries_.begin() + static_cast<std::ptrdiff_t>(through - evicted_);
    for (auto it = entries_.begin(); it != end; ++it) memory_bytes_ -= entry_size(*it);
    entries_.erase(entries_.begin(), end);
    evicted_ = through;
  }
  offset_ = through;
  offset_term_ = t;
  stable_ = std::max(stable_, offset_);
}

size_t RaftLog::evict_to_fit(Index floor, size_t max_bytes) {
  floor = std::min(floor, stable_);
  size_t n = 0;
  while (memory_bytes_ > max_bytes && evicted_ < floor) {
    Entry& e = entries_.front();
    if (evicted_terms_.empty() || evicted_terms_.back().second != e.term) evicted_terms_.emplace_back(e.index, e.term);
    memory_bytes_ -= entry_size(e);
    if (e.type == EntryType::kConfChange) evicted_conf_.push_back(std::move(e));
    entries_.pop_front();
    ++evicted_;
    ++n;
  }
  return n;
}

Index RaftLog::tail_start(Index through, uint64_t max_entries, size_t max_bytes) const {
  ZKRAFT_INVARIANT(offset_ <= through && through <= last_index(), "the tail ends within the log");
  const Index by_count = through - offset_ > max_entries ? through - max_entries : offset_;
  if (max_bytes == 0) return by_count;
  // Walks back from `through` only as far as the count allows: at most max_entries steps, and
  // only over entries in memory (the evicted ones hold no memory).
  size_t bytes = 0;
  Index start = through;
  while (start > by_count) {
    if (start > evicted_) bytes += entry_size(at(start));
    if (bytes > max_bytes) break;
    --start;
  }
  return start;
}

}  // namespace zkraft::consensus
