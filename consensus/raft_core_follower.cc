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
  auto ack_commit = [&] {
    Message r;
    r.type = MessageType::kAppendResponse;
    r.to = m.from;
    r.index = commit_;
    send(std::move(r));
  };
  if (meta.index <= commit_) {
    // Already have all of it.
    incoming_snapshot_.reset();
    incoming_snapshot_data_.clear();
    ack_commit();
    return;
  }
  // Offset 0 starts a new transfer, unless it is a repeat of the one in progress (a duplicate or
  // a resend): then the mismatch answer below tells the leader where to continue.
  if (m.snapshot_offset == 0 && !(incoming_snapshot_ && *incoming_snapshot_ == meta)) {
    incoming_snapshot_ = meta;
    incoming_snapshot_data_.clear();
  }
  Message r;
  r.type = MessageType::kSnapshotResponse;
  r.to = m.from;
  if (!incoming_snapshot_ || !(*incoming_snapshot_ == meta) ||
      m.snapshot_offset != incoming_snapshot_data_.size()) {
    // Out of order or a different snapshot: ask for what we need next.
    r.index = incoming_snapshot_ && *incoming_snapshot_ == meta ? incoming_snapshot_data_.size() : 0;
    send(std::move(r));
    return;
  }
  incoming_snapshot_data_ += m.snapshot_chunk;
  if (!m.snapshot_done) {
    r.index = incoming_snapshot_data_.size();
    send(std::move(r));
    return;
  }
  // Complete. If our log already contains the snapshot's last entry, keep the log and just
  // move commit; otherwise the snapshot replaces the whole log.
  if (log_.match_term(meta.index, meta.term)) {
    commit_to(meta.index);
  } else {
    ZKRAFT_INVARIANT(meta.index > commit_, "commit never goes back");
    log_.restore(meta.index, meta.term);
    commit_ = meta.index;
    base_membership_ = meta.membership;
    refresh_membership();
    pending_snapshot_ = meta;
    pending_snapshot_data_ = std::make_shared<const std::string>(std::move(incoming_snapshot_data_));
    snapshot_unpersisted_ = true;
  }
  incoming_snapshot_.reset();
  incoming_snapshot_data_.clear();
  Message done;
  done.type = MessageType::kAppendResponse;
  done.to = m.from;
  done.index = log_.last_index();
  send(std::move(done));
}

}  // namespace zkraft::consensus
