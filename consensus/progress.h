#pragma once
// The leader's view of one follower's replication (etcd's tracker.Progress + Inflights).
//
// States: kProbe sends one append at a time until the follower answers (used after a rejection
// or right after election); kReplicate pipelines appends optimistically, bounded by the in-flight
// window; kSnapshot streams a snapshot in chunks and sends no appends until it is acknowledged.
// Invariant: match < next.

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <deque>

#include "consensus/types.h"

namespace zkraft::consensus {

enum class ProgressState : uint8_t { kProbe, kReplicate, kSnapshot };
const char* progress_state_name(ProgressState s);

// Sliding window of append messages sent but not yet acknowledged, by their last index.
class Inflights {
 public:
  explicit Inflights(size_t capacity = 256) : capacity_(capacity) {}
  void add(Index last) { window_.push_back(last); }
  // Frees every message whose last index is <= index.
  void free_le(Index index) {
    while (!window_.empty() && window_.front() <= index) window_.pop_front();
  }
  void free_first() {
    if (!window_.empty()) window_.pop_front();
  }
  void reset() { window_.clear(); }
  bool full() const { return window_.size() >= capacity_; }
  size_t count() const { return window_.size(); }

 private:
  size_t capacity_;
  std::deque<Index> window_;
};

struct Progress {
  Index match = 0;
  Index next = 1;
  ProgressState state = ProgressState::kProbe;
  bool probe_sent = false;    // kProbe: an append is outstanding, wait for an answer
  bool recent_active = false; // heard from since the last CheckQuorum round
  bool learner = false;
  Inflights inflights;
  // kSnapshot: which snapshot is being streamed, how many bytes the follower confirmed, how many
  // were sent (up to a window ahead of the confirmed ones) and whether the last chunk was among
  // them, and what was confirmed at the last heartbeat answer (no progress since: resend).
  Index pending_snapshot = 0;
  uint64_t snapshot_acked_offset = 0;
  uint64_t snapshot_sent_offset = 0;
  bool snapshot_last_sent = false;
  uint64_t snapshot_acked_at_heartbeat = UINT64_MAX;
  // Entries from `loading_from` on are being read back from storage for this follower (they were
  // evicted from memory, RaftCore::entries_loaded); 0: none. No append goes out meanwhile.
  Index loading_from = 0;

  explicit Progress(size_t max_inflight = 256) : inflights(max_inflight) {}

  bool paused() const {
    if (loading_from != 0) return true;
    switch (state) {
      case ProgressState::kProbe: return probe_sent;
      case ProgressState::kReplicate: return inflights.full();
      case ProgressState::kSnapshot: return true;
    }
    return true;
  }
  void become_probe() {
    // After a snapshot, probe right after it; otherwise right after what is known to match.
    next = state == ProgressState::kSnapshot ? std::max(match + 1, pending_snapshot + 1) : match + 1;
    state = ProgressState::kProbe;
    probe_sent = false;
    pending_snapshot = 0;
    loading_from = 0;
    inflights.reset();
  }
  void become_replicate() {
    state = ProgressState::kReplicate;
    next = match + 1;
    probe_sent = false;
    pending_snapshot = 0;
    loading_from = 0;
    inflights.reset();
  }
  void become_snapshot(Index snapshot_index) {
    state = ProgressState::kSnapshot;
    pending_snapshot = snapshot_index;
    snapshot_acked_offset = 0;
    snapshot_sent_offset = 0;
    snapshot_last_sent = false;
    snapshot_acked_at_heartbeat = UINT64_MAX;
    probe_sent = false;
    loading_from = 0;
    inflights.reset();
  }
  // An acceptance up to n arrived; returns false if it was stale.
  bool maybe_update(Index n) {
    bool updated = false;
    if (match < n) {
      match = n;
      updated = true;
      probe_sent = false;
    }
    next = std::max(next, n + 1);
    return updated;
  }
};

}  // namespace zkraft::consensus
