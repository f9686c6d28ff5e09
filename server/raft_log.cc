#include "server/raft_log.h"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace zkraft::server {

std::unique_ptr<RaftLog> RaftLog::create(boost::asio::io_context& io, const Config& config,
                                         std::string* error) {
  consensus::RaftNodeOptions o;
  o.id = static_cast<consensus::NodeId>(config.server_id);
  o.dir = raft_log_dir(config);
  o.fsync = config.fsync;
  o.snapshot_every = static_cast<uint64_t>(std::max<int64_t>(config.snap_count, 100));
  o.keep_tail = std::min<uint64_t>(5000, o.snapshot_every);
  // The election timeout follows the ZooKeeper config: syncLimit ticks, at least a second, so a
  // follower that stops hearing the leader for that long looks for a new one. Raft's own tick
  // is a fraction of it for heartbeats.
  o.tick_ms = 50;
  int64_t election_ms = std::max<int64_t>(1000, int64_t{config.sync_limit} * config.tick_time_ms / 2);
  o.election_ticks = static_cast<int>(std::max<int64_t>(4, election_ms / o.tick_ms));
  o.heartbeat_ticks = 2;
  bool found_self = false;
  if (config.standalone()) {
    // A one-voter cluster: the same log, snapshots and compaction as an ensemble. With no one
    // to split a vote with, the election can be quick.
    o.initial_membership.voters.push_back(o.id);
    o.election_ticks = 2;
    o.heartbeat_ticks = 1;
    o.listen_host = "127.0.0.1";
    o.listen_port = 0;
    return std::unique_ptr<RaftLog>(new RaftLog(io, std::move(o)));
  }
  for (const auto& s : config.servers) {
    auto id = static_cast<consensus::NodeId>(s.id);
    bool member = !(config.joining && s.id == config.server_id);  // a reconfig adds it later
    if (member && s.role == PeerRole::kObserver) {
      o.initial_membership.learners.push_back(id);
    } else if (member) {
      o.initial_membership.voters.push_back(id);
    }
    if (s.id == config.server_id) {
      found_self = true;
      o.listen_host = s.host;
      o.listen_port = static_cast<uint16_t>(s.peer_port);
    } else {
      o.peers[id] = consensus::PeerAddress{s.host, static_cast<uint16_t>(s.peer_port)};
    }
  }
  if (!found_self) {
    *error = "server.N lines have no entry for this server's id " + std::to_string(config.server_id);
    return nullptr;
  }
  std::sort(o.initial_membership.voters.begin(), o.initial_membership.voters.end());
  std::sort(o.initial_membership.learners.begin(), o.initial_membership.learners.end());
  auto log = std::unique_ptr<RaftLog>(new RaftLog(io, std::move(o)));
  for (const auto& s : config.servers) {
    if (s.id == config.server_id) log->observer_ = s.role == PeerRole::kObserver;
  }
  return log;
}

RaftLog::RaftLog(boost::asio::io_context& io, consensus::RaftNodeOptions options) {
  node_ = std::make_unique<consensus::RaftNode>(io, std::move(options), *this);
}

RaftLog::~RaftLog() { stop(); }

bool RaftLog::start(Callbacks callbacks, std::string* error) {
  cb_ = std::move(callbacks);
  if (!node_->open(error)) return false;  // a stored snapshot reaches cb_.restore_snapshot here
  node_->start();
  spdlog::info("raft: server {} listening for peers on port {}", node_->id(), node_->peer_port());
  return true;
}

void RaftLog::stop() {
  if (node_) node_->stop();
}

bool RaftLog::propose(std::string data) {
  auto r = node_->propose(std::move(data));
  return r.ok();
}

bool RaftLog::read_index(uint64_t context) {
  return node_->read_index(context) == consensus::RaftError::kOk;
}

void RaftLog::send(uint64_t to, std::string payload) { node_->send_app_message(to, std::move(payload)); }

ReplicationStatus RaftLog::replication_status() const {
  ReplicationStatus s;
  auto st = node_->status();
  s.leader_id = st.leader;
  s.term = st.term;
  s.commit_index = st.commit;
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
  for (const auto& p : st.peers) {
    ++s.learners;
    // In sync: heard from lately and being streamed entries (not probing, not on a snapshot).
    bool synced = p.recent_active && p.state == consensus::ProgressState::kReplicate;
    if (synced) {
      if (p.learner) {
        ++s.synced_observers;
      } else {
        ++s.synced_followers;
      }
    }
  }
  return s;
}

MembershipView RaftLog::membership() const {
  auto m = node_->status().membership;
  return MembershipView{m.voters, m.learners};
}

void RaftLog::add_peer(uint64_t id, const std::string& host, uint16_t port) {
  if (id == node_->id()) return;
  node_->add_peer(id, consensus::PeerAddress{host, port});
}

bool RaftLog::change_membership(MembershipChange change, uint64_t id) {
  consensus::ConfChange cc;
  cc.node = id;
  switch (change) {
    case MembershipChange::kAddLearner: cc.type = consensus::ConfChangeType::kAddLearner; break;
    case MembershipChange::kPromote: cc.type = consensus::ConfChangeType::kPromoteLearner; break;
    case MembershipChange::kRemove: cc.type = consensus::ConfChangeType::kRemoveNode; break;
  }
  auto r = node_->change_membership(cc);
  if (r.ok()) spdlog::info("raft: proposed membership change {} of server {}", int(change), id);
  return r.ok();
}

void RaftLog::apply(const consensus::Entry& e) { cb_.apply(e.index, e.data); }

std::string RaftLog::take_snapshot() { return cb_.take_snapshot(); }

void RaftLog::restore_snapshot(const consensus::SnapshotMeta& meta, std::string_view data) {
  cb_.restore_snapshot(meta.index, data);
}

void RaftLog::on_leader_change(consensus::NodeId leader, consensus::Term, bool self) {
  if (cb_.leader_changed) cb_.leader_changed(leader, self);
}

void RaftLog::on_read_state(uint64_t context, consensus::Index index) {
  if (cb_.read_ready) cb_.read_ready(context, index);
}

void RaftLog::on_app_message(consensus::NodeId from, std::string payload) {
  if (cb_.message) cb_.message(from, std::move(payload));
}

}  // namespace zkraft::server
