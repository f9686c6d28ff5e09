// RaftCore's leader side: replication to each follower (appends, snapshots, heartbeats), commit,
// ReadIndex, proposals, membership changes and leadership transfer. The type and its invariants
// are in raft_core.h; raft_core.cc holds membership, roles, ticks, the step dispatch and Ready.
#include "consensus/raft_core.h"

#include <algorithm>

#include "consensus/invariant.h"

namespace zkraft::consensus {

// ---------------------------------------------------------------- leader side

void RaftCore::step_leader(const Message& m) {
  if (m.type == MessageType::kReadIndex) {
    handle_leader_read_index(m.context, m.from);
    return;
  }
  auto it = progress_.find(m.from);
  if (it == progress_.end()) return;
  Progress& pr = it->second;
  switch (m.type) {
    case MessageType::kAppendResponse:
      pr.recent_active = true;
      handle_append_response(m);
      break;
    case MessageType::kHeartbeatResponse:
      pr.recent_active = true;
      handle_heartbeat_response(m);
      break;
    case MessageType::kSnapshotResponse:
      pr.recent_active = true;
      if (pr.state == ProgressState::kSnapshot && pr.pending_snapshot == snapshot_meta_.index) {
        // The follower's latest answer is the truth about what it holds: if it went back (the
        // follower restarted), so does the sending.
        const bool went_back = m.index < pr.snapshot_acked_offset;
        pr.snapshot_acked_offset = m.index;
        if (went_back || pr.snapshot_sent_offset < m.index) {
          pr.snapshot_sent_offset = m.index;
          pr.snapshot_last_sent = false;
        }
        if (m.index < snapshot_size_) send_snapshot_chunks(m.from, /*resend=*/false);
      }
      break;
    default:
      break;
  }
}

void RaftCore::handle_append_response(const Message& m) {
  Progress& pr = progress_.at(m.from);
  if (m.reject) {
    // Ignore stale rejections: of an index already known to match, or of a probe we no
    // longer wait for.
    const bool relevant = (pr.state == ProgressState::kReplicate && m.index > pr.match) ||
                          (pr.state == ProgressState::kProbe && pr.next - 1 == m.index);
    if (!relevant) return;
    if (pr.state == ProgressState::kReplicate) pr.become_probe();
    // Fast backtracking: skip every entry of a term the follower does not have.
    Index probe = m.reject_hint;
    if (m.log_term > 0) probe = log_.find_conflict_by_term(m.reject_hint, m.log_term);
    pr.next = std::max(std::min(m.index, probe + 1), pr.match + 1);
    pr.probe_sent = false;
    ZKRAFT_INVARIANT(pr.match < pr.next, "progress: match < next");
    send_append(m.from);
    return;
  }
  const bool was_paused = pr.paused();
  if (!pr.maybe_update(m.index)) {
    return;
  }
  switch (pr.state) {
    case ProgressState::kProbe:
      pr.become_replicate();
      break;
    case ProgressState::kSnapshot:
      if (pr.match >= pr.pending_snapshot) pr.become_replicate();
      break;
    case ProgressState::kReplicate:
      pr.inflights.free_le(m.index);
      break;
  }
  ZKRAFT_INVARIANT(pr.match < pr.next, "progress: match < next");
  if (maybe_commit()) {
    after_commit_advanced();
    if (role_ != Role::kLeader) return;
    broadcast_append();
  } else if (was_paused) {
    send_append(m.from);
  }
  // Keep the pipeline full.
  while (progress_.count(m.from) && send_append(m.from, false)) {
  }
  if (lead_transferee_ == m.from && progress_.count(m.from) &&
      progress_.at(m.from).match == log_.last_index()) {
    Message t;
    t.type = MessageType::kTimeoutNow;
    t.to = m.from;
    send(std::move(t));
  }
}

void RaftCore::handle_heartbeat_response(const Message& m) {
  Progress& pr = progress_.at(m.from);
  pr.probe_sent = false;
  // An append may have been lost: make room so that one more can go out.
  if (pr.state == ProgressState::kReplicate && pr.inflights.full()) pr.inflights.free_first();
  if (pr.state == ProgressState::kSnapshot) {
    // If a newer snapshot replaced the one being streamed, start over with it. If the follower
    // confirmed nothing more since the last heartbeat, a chunk (or its answer) may be lost:
    // send again from what it confirmed.
    if (pr.pending_snapshot != snapshot_meta_.index) {
      pr.become_snapshot(snapshot_meta_.index);
      send_snapshot_chunks(m.from, /*resend=*/false);
    } else if (pr.snapshot_acked_offset == pr.snapshot_acked_at_heartbeat) {
      send_snapshot_chunks(m.from, /*resend=*/true);
    }
    pr.snapshot_acked_at_heartbeat = pr.snapshot_acked_offset;
  } else if (pr.match < log_.last_index()) {
    send_append(m.from);
  }
  if (m.context != 0 && !pr.learner) {
    for (auto& r : reads_.ack(m.from, m.context, membership_.voters)) release_read(r);
  }
}

void RaftCore::release_read(const ReadIndexQueue::Request& r) {
  if (r.from == id_) {
    read_states_.push_back(ReadState{r.context, r.index});
  } else {
    Message resp;
    resp.type = MessageType::kReadIndexResponse;
    resp.to = r.from;
    resp.context = r.context;
    resp.index = r.index;
    send(std::move(resp));
  }
}

void RaftCore::handle_leader_read_index(uint64_t context, NodeId from) {
  if (!committed_in_current_term()) {
    // Our commit index may lag the true one until an entry of this term commits.
    if (from == id_) {
      reads_waiting_for_commit_.push_back(context);
    } else {
      remote_reads_waiting_for_commit_.emplace_back(context, from);
    }
    return;
  }
  if (membership_.voters.size() == 1 && is_voter(membership_, id_)) {
    release_read(ReadIndexQueue::Request{0, context, from, commit_, {}});
    return;
  }
  const uint64_t round = reads_.add(context, from, commit_, id_);
  broadcast_heartbeat(round);
}

bool RaftCore::committed_in_current_term() const {
  return log_.term(commit_).value_or(0) == term_;
}

void RaftCore::after_commit_advanced() {
  if (!reads_waiting_for_commit_.empty() || !remote_reads_waiting_for_commit_.empty()) {
    auto local = std::move(reads_waiting_for_commit_);
    auto remote = std::move(remote_reads_waiting_for_commit_);
    reads_waiting_for_commit_.clear();
    remote_reads_waiting_for_commit_.clear();
    for (uint64_t ctx : local) handle_leader_read_index(ctx, id_);
    for (auto& [ctx, from] : remote) handle_leader_read_index(ctx, from);
  }
  // A leader removed from the configuration hands over once the removal is committed.
  if (!is_voter(membership_, id_) && commit_ >= pending_conf_index_) {
    become_follower(term_, 0);
  }
}

Index RaftCore::self_persisted_index() const {
  return snapshot_unpersisted_ ? 0 : log_.stable_index();
}

bool RaftCore::maybe_commit() {
  std::vector<Index> matches;
  for (NodeId v : membership_.voters) {
    if (v == id_) {
      matches.push_back(self_persisted_index());
    } else if (auto it = progress_.find(v); it != progress_.end()) {
      matches.push_back(it->second.match);
    } else {
      matches.push_back(0);
    }
  }
  if (matches.empty()) return false;
  std::sort(matches.begin(), matches.end(), std::greater<>());
  const Index candidate = matches[quorum() - 1];
  // Only entries of the current term are committed by counting replicas (§5.4.2).
  if (candidate > commit_ && log_.term(candidate).value_or(0) == term_) {
    ZKRAFT_INVARIANT(role_ == Role::kLeader, "only a leader commits by counting replicas");
    commit_ = candidate;
    return true;
  }
  return false;
}

bool RaftCore::send_append(NodeId to, bool send_if_empty) {
  auto it = progress_.find(to);
  if (it == progress_.end()) return false;
  Progress& pr = it->second;
  ZKRAFT_INVARIANT(pr.match < pr.next, "progress: match < next");
  if (pr.paused()) return false;
  const Index prev = pr.next - 1;
  auto prev_term = log_.term(prev);
  if (!prev_term) {
    // The follower needs entries we compacted: stream our snapshot instead.
    if (snapshot_meta_.index == 0 || snapshot_meta_.index < log_.offset()) return false;
    pr.become_snapshot(snapshot_meta_.index);
    send_snapshot_chunks(to, /*resend=*/false);
    return true;
  }
  if (pr.next <= log_.evicted()) {
    // In storage only: read back (entries_loaded sends them). Nothing went out yet.
    pr.loading_from = pr.next;
    entry_loads_.push_back(EntryLoad{to, pr.next, log_.evicted(), cfg_.max_msg_bytes});
    return false;
  }
  std::vector<Entry> entries;
  if (pr.next <= log_.last_index()) entries = log_.slice(pr.next, log_.last_index(), cfg_.max_msg_bytes);
  if (entries.empty() && !send_if_empty) return false;
  send_entries(to, pr, *prev_term, std::move(entries));
  return true;
}

void RaftCore::send_entries(NodeId to, Progress& pr, Term prev_term, std::vector<Entry> entries) {
  Message m;
  m.type = MessageType::kAppend;
  m.to = to;
  m.index = pr.next - 1;
  m.log_term = prev_term;
  m.commit = commit_;
  if (!entries.empty()) {
    const Index last = entries.back().index;
    if (pr.state == ProgressState::kReplicate) {
      pr.next = last + 1;
      pr.inflights.add(last);
    } else {
      pr.probe_sent = true;
    }
  } else if (pr.state == ProgressState::kProbe) {
    pr.probe_sent = true;
  }
  m.entries = std::move(entries);
  send(std::move(m));
}

void RaftCore::entries_loaded(NodeId to, Index lo, std::vector<Entry> entries) {
  if (role_ != Role::kLeader) return;
  auto it = progress_.find(to);
  if (it == progress_.end() || it->second.loading_from != lo) return;  // asked again since, or not at all
  Progress& pr = it->second;
  pr.loading_from = 0;
  // Only what is still this log's goes out: the same indexes with the same terms, right after an
  // entry whose term is known. Safety rests on that check alone, not on the bookkeeping.
  const auto prev_term = log_.term(lo - 1);
  bool usable = pr.next == lo && prev_term && !entries.empty();
  for (size_t k = 0; usable && k < entries.size(); ++k) {
    usable = entries[k].index == lo + k && log_.match_term(entries[k].index, entries[k].term);
  }
  if (usable) {
    send_entries(to, pr, *prev_term, std::move(entries));
    return;
  }
  if (pr.next != lo) {
    send_append(to);  // the follower's answer moved it meanwhile: its own turn was skipped
    return;
  }
  if (entries.empty() && snapshot_meta_.index >= lo && snapshot_meta_.index >= log_.offset()) {
    // Storage has none of them: compacted behind a snapshot, which covers them.
    pr.become_snapshot(snapshot_meta_.index);
    send_snapshot_chunks(to, /*resend=*/false);
  }
  // Otherwise (a failed read, or entries that are not this log's) the follower's next heartbeat
  // answer asks again: never a loop of reads as fast as storage fails.
}

void RaftCore::send_snapshot_chunks(NodeId to, bool resend) {
  Progress& pr = progress_.at(to);
  if (!snapshot_data_) {  // on disk only: the driver loads it, then snapshot_bytes_loaded resends
    snapshot_bytes_wanted_ = true;
    return;
  }
  const std::string_view data = snapshot_data_->bytes();
  if (resend) {
    pr.snapshot_sent_offset = pr.snapshot_acked_offset;
    pr.snapshot_last_sent = false;
  }
  // Up to a window of chunks ahead of what the follower confirmed: each chunk waits for the
  // follower's disk before its answer, and one at a time the transfer would pay that wait per
  // chunk. The window also bounds what a follower holds before its storage has it.
  const uint64_t window = cfg_.max_snapshot_chunk_bytes * std::max<size_t>(cfg_.max_snapshot_inflight_chunks, 1);
  while (!pr.snapshot_last_sent && pr.snapshot_sent_offset - std::min(pr.snapshot_acked_offset,
                                                                      pr.snapshot_sent_offset) < window) {
    const uint64_t offset = std::min<uint64_t>(pr.snapshot_sent_offset, data.size());
    const size_t len = std::min<size_t>(cfg_.max_snapshot_chunk_bytes, data.size() - offset);
    Message m;
    m.type = MessageType::kSnapshot;
    m.to = to;
    m.index = snapshot_meta_.index;
    m.commit = commit_;
    m.snapshot = snapshot_meta_;
    m.snapshot_offset = offset;
    m.snapshot_chunk = std::string(data.substr(offset, len));
    m.snapshot_done = offset + len == data.size();
    pr.snapshot_sent_offset = offset + len;
    pr.snapshot_last_sent = m.snapshot_done;
    send(std::move(m));
  }
}

void RaftCore::broadcast_append() {
  for (auto& [id, pr] : progress_) send_append(id);
}

void RaftCore::broadcast_heartbeat(uint64_t context) {
  for (auto& [id, pr] : progress_) {
    Message m;
    m.type = MessageType::kHeartbeat;
    m.to = id;
    m.commit = std::min(pr.match, commit_);
    m.context = context;
    send(std::move(m));
  }
}

// ---------------------------------------------------------------- proposals

ProposeResult RaftCore::propose(std::string data) {
  ProposeResult res;
  if (role_ != Role::kLeader) {
    res.error = RaftError::kNotLeader;
    res.leader = lead_;
    return res;
  }
  if (lead_transferee_ != 0) {
    res.error = RaftError::kTransferInProgress;
    res.leader = lead_transferee_;
    return res;
  }
  Entry e;
  e.term = term_;
  e.index = log_.last_index() + 1;
  e.data = std::move(data);
  res.index = e.index;
  res.term = e.term;
  log_.append(std::move(e));
  // Replicated when the next Ready is taken, so that proposals made in between travel together.
  append_pending_ = true;
  return res;
}

ProposeResult RaftCore::propose_conf_change(const ConfChange& cc) {
  ProposeResult res;
  if (role_ != Role::kLeader) {
    res.error = RaftError::kNotLeader;
    res.leader = lead_;
    return res;
  }
  if (lead_transferee_ != 0) {
    res.error = RaftError::kTransferInProgress;
    return res;
  }
  if (pending_conf_index_ > commit_ || !committed_in_current_term()) {
    res.error = RaftError::kConfChangePending;
    return res;
  }
  Membership next = membership_;
  if (!apply_conf_change(next, cc)) {
    res.error = RaftError::kInvalidConfChange;
    return res;
  }
  Entry e;
  e.term = term_;
  e.index = log_.last_index() + 1;
  e.type = EntryType::kConfChange;
  e.data = encode_conf_change(cc);
  res.index = e.index;
  res.term = e.term;
  log_.append(std::move(e));
  pending_conf_index_ = res.index;
  membership_ = next;  // takes effect on append
  sync_progress_with_membership();
  broadcast_append();
  // Removing a voter can shrink the quorum enough to commit at once.
  if (maybe_commit()) after_commit_advanced();
  return res;
}

RaftError RaftCore::read_index(uint64_t context) {
  if (role_ == Role::kLeader) {
    handle_leader_read_index(context, id_);
    return RaftError::kOk;
  }
  if (lead_ == 0) return RaftError::kNotLeader;
  Message m;
  m.type = MessageType::kReadIndex;
  m.to = lead_;
  m.context = context;
  send(std::move(m));
  return RaftError::kOk;
}

RaftError RaftCore::transfer_leadership(NodeId to) {
  if (role_ != Role::kLeader) return RaftError::kNotLeader;
  if (to == id_ || !is_voter(membership_, to)) return RaftError::kInvalidArgument;
  if (lead_transferee_ == to) return RaftError::kOk;
  lead_transferee_ = to;
  election_elapsed_ = 0;  // the transfer must finish within one election timeout
  Progress& pr = progress_.at(to);
  if (pr.match == log_.last_index()) {
    Message t;
    t.type = MessageType::kTimeoutNow;
    t.to = to;
    send(std::move(t));
  } else {
    send_append(to);
  }
  return RaftError::kOk;
}

}  // namespace zkraft::consensus
