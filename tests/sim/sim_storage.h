#pragma once
// One simulated node's disk: what is durable (survives a crash) and the write in flight.
//
// A Ready is written in one call; a crash before the write completes loses it, or (torn write)
// keeps only a prefix of its entries, never its hard state or snapshot.

#include <deque>
#include <vector>

#include "consensus/raft_config.h"
#include "consensus/ready.h"
#include "consensus/types.h"
#include "tests/sim/sim_rng.h"

namespace zkraft::sim {

class SimStorage {
 public:
  // Makes the durable part of `rd` durable (the write completed).
  void persist(const consensus::Ready& rd) {
    if (rd.snapshot) {
      snapshot_ = *rd.snapshot;
      snapshot_data_ = rd.snapshot_data;
      entries_.clear();
    }
    append(rd.entries, rd.entries.size());
    if (rd.hard_state) hard_state_ = *rd.hard_state;
  }

  // The write of `rd` was interrupted by a crash: maybe keep a prefix of its entries.
  void tear(const consensus::Ready& rd, SimRng& rng) {
    if (rd.snapshot || rd.entries.empty()) return;
    append(rd.entries, rng.below(rd.entries.size() + 1));
  }

  void save_snapshot(const consensus::SnapshotMeta& meta, const std::string& data) {
    if (meta.index <= snapshot_.index) return;
    snapshot_ = meta;
    snapshot_data_ = data;
  }
  // Drops stored entries <= through (only ever called with through <= snapshot index).
  void compact(consensus::Index through) {
    while (!entries_.empty() && entries_.front().index <= through) entries_.pop_front();
  }

  consensus::RecoveredState recover() const {
    consensus::RecoveredState r;
    r.hard_state = hard_state_;
    r.snapshot = snapshot_;
    r.snapshot_data = snapshot_data_;
    for (const auto& e : entries_) {
      if (e.index > snapshot_.index) r.entries.push_back(e);
    }
    // Entries must continue right after the snapshot; anything after a gap is unusable.
    std::vector<consensus::Entry> contiguous;
    consensus::Index expect = snapshot_.index + 1;
    for (auto& e : r.entries) {
      if (e.index != expect) break;
      contiguous.push_back(e);
      ++expect;
    }
    r.entries = std::move(contiguous);
    r.applied = snapshot_.index;
    return r;
  }

  const consensus::HardState& hard_state() const { return hard_state_; }
  const consensus::SnapshotMeta& snapshot() const { return snapshot_; }
  const std::string& snapshot_data() const { return snapshot_data_; }

 private:
  void append(const std::vector<consensus::Entry>& entries, size_t count) {
    if (count == 0) return;
    const consensus::Index first = entries.front().index;
    while (!entries_.empty() && entries_.back().index >= first) entries_.pop_back();
    for (size_t i = 0; i < count; ++i) entries_.push_back(entries[i]);
  }

  consensus::HardState hard_state_;
  consensus::SnapshotMeta snapshot_;
  std::string snapshot_data_;
  std::deque<consensus::Entry> entries_;
};

}  // namespace zkraft::sim
