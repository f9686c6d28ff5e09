// RaftReplicatedLog, its figures: copied from the Raft node every 50 ms and at each membership
// or leader change into figures_ under figures_mu_, so the state thread, the 4lw, the
// AdminServer and the metrics page read them without touching the node. Invariant: figures_ is
// written only by refresh_figures (on the Raft thread, or in start() before that thread runs),
// the snapshot figures only by record_snapshot; readers take copies under the lock.
#include "server/raft_replicated_log.h"
#include "server/quorum_contact.h"

#include <algorithm>
#include <chrono>

#include "server/clock.h"

namespace zkraft::server {

namespace {
int64_t steady_ms() { return SystemClock().monotonic_ms(); }
}  // namespace

void RaftReplicatedLog::schedule_refresh() {
  refresh_timer_.expires_after(std::chrono::milliseconds(50));
  refresh_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_) return;
    refresh_figures();
    schedule_refresh();
  });
}

void RaftReplicatedLog::refresh_figures() {
  Figures f;
  auto st = node_->status();
  ReplicationStatus& s = f.replication;
  s.leader_id = st.leader;
  s.term = st.term;
  s.commit_index = st.commit;
  s.first_index = st.first_index;
  s.first_term = st.first_term;
  s.last_index = st.last_index;
  s.last_term = st.last_term;
  s.applied_index = node_->applied_index();  // handed to the state machine (the core's own lags)
  s.snapshot_index = st.snapshot_index;
  const consensus::GroupCommitStats storage = node_->storage_stats();
  s.fsync_threshold_exceeded = storage.fsync_threshold_exceeded;
  s.fsync_micros_total = storage.fsync_micros_total;
  s.fsync_micros_max = storage.fsync_micros_max;
  const consensus::PeerTransportStats peer_port = node_->transport_stats();
  s.peer_auth_failures = peer_port.auth_failures;
  s.peer_connections_refused = peer_port.inbound_refused;
  if (st.membership.voters.size() == 1 && st.membership.learners.empty() && st.peers.empty()) {
    s.mode = "standalone";
  } else if (st.role == consensus::Role::kLeader) {
    s.mode = "leader";
  } else if (observer_) {
    s.mode = "observer";
  } else {
    s.mode = "follower";
  }
  s.quorum_size = static_cast<int64_t>(st.membership.voters.size() / 2 + 1);
  const bool newly_leader = st.role == consensus::Role::kLeader && !was_leader_;
  was_leader_ = st.role == consensus::Role::kLeader;
  for (const auto& p : st.peers) {
    s.peers.push_back(PeerProgress{p.id, p.match, p.learner, p.recent_active});
    ++s.learners;
    // In sync: heard from lately and being streamed entries (not probing, not on a snapshot).
    const bool in_sync = p.recent_active && p.state == consensus::ProgressState::kReplicate;
    if (in_sync) ++(p.learner ? s.synced_observers : s.synced_followers);
    // For a reconfig (ZooKeeper's learner "synced": acked within syncLimit): in sync at some
    // refresh of the last two CheckQuorum rounds, as recent_active is cleared every round. A new
    // leader starts by counting every peer, as a ZooKeeper leader serves once its quorum synced;
    // a peer that does not answer drops out when the window passes.
    if (in_sync || newly_leader) last_in_sync_ms_[p.id] = steady_ms();
    auto seen = last_in_sync_ms_.find(p.id);
    if (seen != last_in_sync_ms_.end() && steady_ms() - seen->second <= in_sync_window_ms_) {
      s.synced_peers.push_back(p.id);
    }
  }
  f.membership = MembershipView{st.membership.voters, st.membership.learners};
  f.fsyncs = node_->fsync_count();
  ConsensusFigures& c = f.consensus;
  c.known = true;
  c.term = st.term;
  c.commit_index = st.commit;
  c.applied_index = node_->applied_index();  // handed to the state machine (the core's own lags)
  c.last_index = st.last_index;
  c.snapshot_index = st.snapshot_index;
  c.peers = s.peers;  // one view of the other members, for the dashboard and the metrics
  c.leader_changes = leader_changes_;
  c.proposals = proposals_;
  c.proposal_batches = proposal_batches_;
  c.read_index_rounds = read_index_rounds_;
  c.looking_count = looking_count_;
  c.elections = elections_;
  c.election_ms_total = election_ms_total_;
  c.election_ms_buckets = election_ms_buckets_;
  c.log_entries = storage.entries;
  c.log_bytes = storage.bytes;
  c.log_groups = storage.groups;
  c.log_memory_bytes = st.log_memory_bytes;
  c.log_entries_read_back = node_->entries_read_back();
  c.fsyncs = storage.fsyncs;
  c.fsync_micros_total = storage.fsync_micros_total;
  c.fsync_micros_buckets = storage.fsync_micros_buckets;
  const auto transport = node_->transport_stats();
  c.peer_bytes_sent = transport.bytes_sent;
  c.peer_bytes_received = transport.bytes_received;
  c.peer_messages_sent = transport.messages_sent;
  c.peer_messages_received = transport.messages_received;
  c.peer_auth_failures = transport.auth_failures;
  // The core counts whole ticks and reports them at the next refresh: the contact it saw is at
  // least age ticks old, at most one tick more.
  f.quorum_contact_ms = st.quorum_contact_age_ticks == consensus::RaftCore::kNoQuorumContact
                            ? kNoQuorumContact
                            : steady_ms() - static_cast<int64_t>(st.quorum_contact_age_ticks) * tick_ms_;
  f.own_quorum = st.role == consensus::Role::kLeader && st.membership.voters.size() == 1 &&
                 st.membership.voters.front() == st.id;
  std::lock_guard<std::mutex> lock(figures_mu_);
  figures_ = std::move(f);
}
ReplicationStatus RaftReplicatedLog::replication_status() const {
  std::lock_guard<std::mutex> lock(figures_mu_);
  return figures_.replication;
}

int64_t RaftReplicatedLog::quorum_contact_age_ms() const {
  int64_t contact;
  bool own_quorum;
  {
    std::lock_guard<std::mutex> lock(figures_mu_);
    contact = figures_.quorum_contact_ms;
    own_quorum = figures_.own_quorum;
  }
  return server::quorum_contact_age_ms(contact, own_quorum, steady_ms(), tick_ms_);
}

uint64_t RaftReplicatedLog::fsync_count() const {
  std::lock_guard<std::mutex> lock(figures_mu_);
  return figures_.fsyncs;
}

void RaftReplicatedLog::record_snapshot(size_t bytes, int64_t ms) {
  const auto v = static_cast<uint64_t>(std::max<int64_t>(0, ms));
  std::lock_guard<std::mutex> lock(figures_mu_);
  ConsensusFigures& s = snapshots_;
  if (s.snapshot_ms_buckets.empty()) s.snapshot_ms_buckets.resize(consensus::kLogBucketCount);
  ++s.snapshots;
  s.last_snapshot_bytes = bytes;
  s.last_snapshot_ms = v;
  s.snapshot_ms_total += v;
  ++s.snapshot_ms_buckets[consensus::log_bucket(v)];
}

ConsensusFigures RaftReplicatedLog::consensus_figures() const {
  std::lock_guard<std::mutex> lock(figures_mu_);
  ConsensusFigures c = figures_.consensus;
  c.snapshots = snapshots_.snapshots;
  c.last_snapshot_bytes = snapshots_.last_snapshot_bytes;
  c.last_snapshot_ms = snapshots_.last_snapshot_ms;
  c.snapshot_ms_total = snapshots_.snapshot_ms_total;
  c.snapshot_ms_buckets = snapshots_.snapshot_ms_buckets;
  return c;
}

MembershipView RaftReplicatedLog::membership() const {
  std::lock_guard<std::mutex> lock(figures_mu_);
  return figures_.membership;
}

}  // namespace zkraft::server
