// RaftCore's follower side: appends, heartbeats and snapshot chunks from the leader, and the
// commit index they carry. The type and its invariants are in raft_core.h; raft_core.cc holds
// membership, roles, ticks, the step dispatch and Ready.
#include "consensus/raft_core.h"

#include <algorithm>

#include "consensus/invariant.h"

namespace zkraft::consensus {

// ---------------------------------------------------------------- follower side

void RaftCore::commit_to(Index index) {
  index = std::min(index, log_.last_index());
  if (index > commit_) commit_ = index;
}

void RaftCore::append_from_leader(const std::vector<Entry>& entries) {
  bool conf_touched = false;
  for (size_t k = 0; k < entries.size(); ++k) {
    const Entry& e = entries[k];
    if (e.index <= log_.last_index()) {
      if (log_.match_term(e.index, e.term)) continue;
      ZKRAFT_INVARIANT(e.index > commit_, "a committed entry would be overwritten");
      const Index conf_before = e.index;
      for (Index i = conf_before; i <= log_.last_index() && !conf_touched; ++i) {
        if (log_.at(i).type == EntryType::kConfChange) conf_touched = true;
      }
      log_.truncate_from(e.index);
    }
    log_.append(e);
    if (e.type == EntryType::kConfChange) conf_touched = true;
  }
  if (conf_touched) refresh_membership();
}

void RaftCore::handle_append(const Message& m) {
  Message r;
  r.type = MessageType::kAppendResponse;
  r.to = m.from;
  if (m.index < commit_) {
    r.index = commit_;
    send(std::move(r));
    return;
  }
  if (log_.match_term(m.index, m.log_term)) {
    append_from_leader(m.entries);
    const Index last_new = m.index + m.entries.size();
    commit_to(std::min(m.commit, last_new));
    r.index = last_new;
    send(std::move(r));
    return;
  }
  // Reject, suggesting where the leader should probe: the last index whose term is <= the
  // term the leader has at m.index, so a whole divergent term is skipped in one round trip.
  const Index hint = log_.find_conflict_by_term(std::min(m.index, log_.last_index()), m.log_term);
  r.reject = true;
  r.index = m.index;
  r.reject_hint = hint;
  r.log_term = log_.term(hint).value_or(0);
  send(std::move(r));
}

void RaftCore::handle_heartbeat(const Message& m) {
  commit_to(m.commit);
  Message r;
  r.type = MessageType::kHeartbeatResponse;
  r.to = m.from;
  r.context = m.context;
  send(std::move(r));
}

void RaftCore::handle_snapshot_chunk(const Message& m) {
  const SnapshotMeta& meta = m.snapshot;
  auto ack_append = [&](Index index) {
    Message r;
    r.type = MessageType::kAppendResponse;
    r.to = m.from;
    r.index = index;
    send(std::move(r));
  };
  // Chunks already handed out stay with the storage, and those not yet handed out go with the
  // next Ready all the same: the storage always sees each transfer from offset 0 on, in order,
  // and a new transfer's offset 0 simply replaces an unfinished one.
  auto drop_transfer = [&] {
    incoming_snapshot_.reset();
    incoming_snapshot_size_ = 0;
  };
  if (meta.index <= commit_) {
    // Already have all of it.
    drop_transfer();
    ack_append(commit_);
    return;
  }
  // A received snapshot is still to be stored: the storage must have it before the first chunk
  // of another. The leader sends the chunk again (on the next heartbeat response).
  if (pending_snapshot_) return;
  if (log_.match_term(meta.index, meta.term)) {
    // Our log holds the snapshot's last entry, which the leader committed: no need for the
    // snapshot's bytes (Log Matching), only for the commit index.
    drop_transfer();
    commit_to(meta.index);
    ack_append(log_.last_index());
    return;
  }
  // Offset 0 starts a new transfer, unless it is a repeat of the one in progress (a duplicate or
  // a resend): then the mismatch answer below tells the leader where to continue.
  if (m.snapshot_offset == 0 && !(incoming_snapshot_ && *incoming_snapshot_ == meta)) {
    incoming_snapshot_ = meta;
    incoming_snapshot_size_ = 0;
  }
  Message r;
  r.type = MessageType::kSnapshotResponse;
  r.to = m.from;
  if (!incoming_snapshot_ || !(*incoming_snapshot_ == meta) || m.snapshot_offset != incoming_snapshot_size_) {
    // Out of order or a different snapshot: ask for what we need next.
    r.index = incoming_snapshot_ && *incoming_snapshot_ == meta ? incoming_snapshot_size_ : 0;
    send(std::move(r));
    return;
  }
  // The bytes go to storage with the next Ready, never gathered here: the acknowledgement
  // below leaves after that Ready's writes, so at most a chunk or two are ever in memory.
  SnapshotChunk chunk;
  chunk.meta = meta;
  chunk.offset = m.snapshot_offset;
  chunk.bytes = m.snapshot_chunk;
  chunk.last = m.snapshot_done;
  incoming_snapshot_size_ += chunk.bytes.size();
  incoming_chunks_.push_back(std::move(chunk));
  if (!m.snapshot_done) {
    r.index = incoming_snapshot_size_;
    send(std::move(r));
    return;
  }
  // Complete: the snapshot replaces the whole log (a log that holds the snapshot's last entry
  // was answered above, this chunk included).
  incoming_snapshot_.reset();
  ZKRAFT_INVARIANT(meta.index > commit_, "commit never goes back");
  log_.restore(meta.index, meta.term);
  commit_ = meta.index;
  base_membership_ = meta.membership;
  refresh_membership();
  pending_snapshot_ = meta;
  pending_snapshot_size_ = incoming_snapshot_size_;
  snapshot_unpersisted_ = true;
  incoming_snapshot_size_ = 0;
  ack_append(log_.last_index());
}

}  // namespace zkraft::consensus
