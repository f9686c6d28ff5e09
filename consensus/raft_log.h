#pragma once
// The Raft core's view of its log: every entry after the compaction point, split into a stable
// prefix (durable, acknowledged by the caller through stable_to) and an unstable tail (still to
// be handed to the caller in a Ready and persisted).
//
// The oldest stable entries may be evicted from memory (evict_to_fit): they are still in the log,
// in storage, but only their terms (as runs: terms change rarely) and their membership changes
// stay here. Whoever needs their bytes (a leader sending them to a slow follower) reads them back
// from storage. This bounds the memory of the log by bytes between snapshots: 100,000 creates of
// 100 B are ~27 MB of entries.
//
// Invariants: entries_ holds consecutive indexes evicted_+1 .. last_index(); term(offset_) is
// offset_term_ (the compaction point: a snapshot's index/term, or 0/0 for an empty log);
// offset_ <= evicted_ <= stable_ <= last_index(); evicted_terms_ covers offset_+1 .. evicted_ in
// runs of one term each, ascending; memory_bytes_ is the entry_size sum of entries_.

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "consensus/invariant.h"
#include "consensus/types.h"

namespace zkraft::consensus {

class RaftLog {
 public:
  // `entries` must start at offset+1 and are considered stable (they came from storage).
  RaftLog(Index offset, Term offset_term, std::vector<Entry> entries);

  Index first_index() const { return offset_ + 1; }
  Index last_index() const { return evicted_ + entries_.size(); }
  Term last_term() const { return term(last_index()).value_or(0); }
  Index offset() const { return offset_; }
  Term offset_term() const { return offset_term_; }
  Index stable_index() const { return stable_; }

  // Term of entry `i`: known for offset() <= i <= last_index(), nullopt otherwise.
  std::optional<Term> term(Index i) const;
  bool match_term(Index i, Term t) const {
    auto have = term(i);
    return have && *have == t;
  }
  // The last evicted entry (offset() when none is): entries after it are in memory.
  Index evicted() const { return evicted_; }
  // Bytes (entry_size) of the entries held in memory.
  size_t memory_bytes() const { return memory_bytes_; }

  // Precondition: evicted() < i <= last_index() (the entry is in memory).
  const Entry& at(Index i) const {
    ZKRAFT_INVARIANT(i > evicted_ && i <= last_index(), "only entries held in memory can be read");
    return entries_[i - evicted_ - 1];
  }
  // Membership changes among the evicted entries, in order (at() cannot read those).
  const std::vector<Entry>& evicted_conf_changes() const { return evicted_conf_; }

  // Entries lo..hi inclusive (both in memory), stopping once max_bytes is exceeded but always
  // returning at least one entry when lo <= hi.
  std::vector<Entry> slice(Index lo, Index hi, size_t max_bytes) const;
  std::vector<Entry> unstable_entries() const;

  // Leader-side append of one new entry at last_index()+1.
  void append(Entry e);
  // Drops every entry with index >= i (i > offset()); the stable mark follows.
  void truncate_from(Index i);

  // True when a candidate with this last entry is at least as up to date as this log (§5.4.1).
  bool is_up_to_date(Index last, Term last_term) const;

  // The largest index <= index whose term is <= term (never below offset()): where a leader
  // should probe next, or what a follower suggests, in fast backtracking.
  Index find_conflict_by_term(Index index, Term term) const;

  // Marks entries up to i durable if entry i still has term t (it may have been replaced).
  void stable_to(Index i, Term t);

  // Forgets every entry; the log restarts after (index, term) — installing a snapshot. The
  // stable mark is set to index (the caller persists the snapshot before anything after it).
  void restore(Index index, Term term);
  // Drops entries <= through (offset() < through <= last_index()).
  void compact(Index through);
  // Evicts the oldest entries from memory, none beyond `floor` (which the caller guarantees are
  // applied; clamped to the stable mark: only durable entries leave), until memory_bytes() is at
  // most max_bytes or nothing more may go. Returns how many were evicted.
  size_t evict_to_fit(Index floor, size_t max_bytes);
  // Where to compact so that the entries kept up to `through` (offset() <= through <=
  // last_index()) are at most `max_entries` and hold at most `max_bytes` (entry_size; 0 = no
  // byte bound; evicted entries take no memory and count no bytes): the largest such tail,
  // possibly empty (then `through` itself is returned). Never below offset().
  Index tail_start(Index through, uint64_t max_entries, size_t max_bytes) const;

 private:
  void forget_evicted();

  Index offset_;
  Term offset_term_;
  Index stable_;
  Index evicted_;
  std::deque<Entry> entries_;
  size_t memory_bytes_ = 0;
  std::vector<std::pair<Index, Term>> evicted_terms_;  // (first index of a run, its term)
  std::vector<Entry> evicted_conf_;
};

}  // namespace zkraft::consensus
