// RaftCore's snapshots: the application's snapshot taken, the bytes dropped from memory once the
// driver has them on disk and loaded back to stream them to a follower, and log compaction. The
// type and its invariants are in raft_core.h; sending and receiving chunks are in
// raft_core_leader.cc and raft_core_follower.cc.
#include "consensus/raft_core.h"

#include <algorithm>

#include "consensus/invariant.h"

namespace zkraft::consensus {

// ---------------------------------------------------------------- snapshots / compaction

SnapshotMeta RaftCore::snapshot_taken(Index index, std::string data) {
  return snapshot_taken(index, snapshot_in_memory(std::move(data)));
}

SnapshotMeta RaftCore::snapshot_taken(Index index, SnapshotBytes data) {
  ZKRAFT_INVARIANT(data != nullptr, "a snapshot has bytes");
  const uint64_t size = data->size();
  if (!accept_snapshot(index)) return snapshot_meta_;
  snapshot_data_ = std::move(data);
  snapshot_size_ = size;
  return snapshot_meta_;
}

SnapshotMeta RaftCore::snapshot_taken_on_disk(Index index, uint64_t size) {
  if (!accept_snapshot(index)) return snapshot_meta_;
  snapshot_data_.reset();
  snapshot_size_ = size;
  return snapshot_meta_;
}

bool RaftCore::accept_snapshot(Index index) {
  // Not applied yet, not newer, or already behind the log's start (a snapshot from the leader
  // replaced the log meanwhile): this snapshot is of no use; keep the current one.
  if (index > applied_ || index < log_.offset() || index <= snapshot_meta_.index) return false;
  SnapshotMeta meta;
  meta.index = index;
  meta.term = log_.term(index).value_or(0);
  meta.membership = membership_through(index);
  snapshot_meta_ = meta;
  snapshot_bytes_wanted_ = false;
  return true;
}

bool RaftCore::drop_snapshot_bytes() {
  if (!snapshot_data_) return true;
  if (role_ == Role::kLeader) {
    for (const auto& [id, pr] : progress_) {
      if (id != id_ && pr.state == ProgressState::kSnapshot) return false;
    }
  }
  snapshot_data_.reset();
  return true;
}

void RaftCore::snapshot_bytes_loaded(const SnapshotMeta& meta, SnapshotBytes data) {
  if (snapshot_data_ || !data || !(meta == snapshot_meta_) || data->size() != snapshot_size_) return;
  snapshot_data_ = std::move(data);
  snapshot_bytes_wanted_ = false;
  if (role_ != Role::kLeader) return;
  for (auto& [id, pr] : progress_) {
    if (id != id_ && pr.state == ProgressState::kSnapshot && pr.pending_snapshot == snapshot_meta_.index) {
      send_snapshot_chunks(id, /*resend=*/true);
    }
  }
}

void RaftCore::compact(Index through) {
  through = std::min({through, snapshot_meta_.index, applied_});
  if (through <= log_.offset()) return;
  base_membership_ = membership_through(through);
  log_.compact(through);
}

}  // namespace zkraft::consensus
