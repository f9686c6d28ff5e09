#include "server/status_collector.h"

#include <algorithm>

#include "jute/opcodes.h"

namespace zkraft::server {

namespace {

ConnectionStatus connection_status(const Client& c) {
  ConnectionStatus cs;
  cs.remote = "/" + c.remote_address + ":" + std::to_string(c.remote_port);
  cs.queued = static_cast<int64_t>(c.queue.size());
  cs.received = static_cast<int64_t>(c.packets_received);
  cs.sent = static_cast<int64_t>(c.packets_sent);
  cs.session_id = c.session_id;
  if (c.session_id != 0) {
    cs.last_op = c.stats.last_op == -99 ? "NA" : jute::op_lop_name(c.stats.last_op);
    if (c.stats.last_op == jute::op::kCreateSession) cs.last_op = "SESS";
    cs.established_ms = c.stats.established_ms;
    cs.timeout_ms = c.timeout_ms;
    cs.last_cxid = c.stats.last_cxid;
    cs.last_zxid = c.stats.last_zxid;
    cs.last_response_ms = c.stats.last_response_ms;
    cs.last_latency_ms = c.stats.latency.last_ms;
    cs.min_latency_ms = c.stats.latency.min();
    cs.avg_latency_ms = static_cast<int64_t>(c.stats.latency.avg());
    cs.max_latency_ms = c.stats.latency.max_ms;
  }
  return cs;
}

}  // namespace

ServerStatus collect_status(const StatusSources& s) {
  ServerStatus st;
  st.version = full_version();
  st.mode = s.replication.mode;
  // Applied: the state machine's own (a zxid is its log index), exact; the rest as of
  // consensus' last report, which may be a tick older (commit and the last index are never shown
  // below applied).
  const auto applied = static_cast<uint64_t>(s.state->last_zxid());
  const uint64_t commit = std::max(applied, s.replication.commit_index);
  st.log = ServerStatus::LogFigures{s.replication.first_index, s.replication.first_term,
                                    std::max(commit, s.replication.last_index), s.replication.last_term,
                                    applied, commit, s.replication.snapshot_index};
  // Like ZooKeeper, a server out of contact with a quorum is not serving (4lw say so, clients
  // are refused), unless it serves read-only clients.
  st.serving = s.serving;
  st.read_only = s.read_only;
  if (s.read_only) st.mode = "read-only";  // ZooKeeper's ReadOnlyZooKeeperServer.getState()
  st.min_latency_ms = s.stats->latency.min();
  st.avg_latency_ms = s.stats->latency.zookeeper_avg();
  st.max_latency_ms = s.stats->latency.max_ms;
  st.packets_received = static_cast<int64_t>(s.stats->packets_received);
  st.packets_sent = static_cast<int64_t>(s.stats->packets_sent);
  st.num_alive_connections = static_cast<int64_t>(s.clients->size());
  st.outstanding_requests = static_cast<int64_t>(s.outstanding);
  const auto& sm = *s.state;
  st.last_zxid = sm.last_zxid();
  st.node_count = static_cast<int64_t>(sm.tree().node_count());
  for (const ZxidDigest& d : sm.digest_log()) st.digests.emplace_back(d.zxid, d.digest);
  if (s.lists) {
    s.clients->for_each([&](const Client& c) { st.connections.push_back(connection_status(c)); });
  }

  const auto& watches = *s.watches;
  auto summary = watches.summary();
  st.watch_connections = static_cast<int64_t>(summary.connections);
  st.watch_paths = static_cast<int64_t>(summary.paths);
  st.watch_total = static_cast<int64_t>(summary.total);
  st.watch_count = static_cast<int64_t>(watches.watch_count());
  auto session_of = [&](uint64_t conn) -> int64_t {
    const Client* c = s.clients->find(conn);
    return c ? c->session_id : 0;
  };
  if (s.lists) {
    for (auto& [watcher, paths] : watches.dump_by_watcher()) {
      st.watches_by_session.emplace_back(session_of(watcher), std::move(paths));
    }
    for (auto& [path, watchers] : watches.dump_by_path()) {
      std::vector<int64_t> ids;
      for (auto w : watchers) ids.push_back(session_of(w));
      st.watches_by_path.emplace_back(std::move(path), std::move(ids));
    }
  }

  st.ephemerals_count = static_cast<int64_t>(sm.tree().ephemeral_count());
  st.approximate_data_size = sm.tree().approximate_data_size();
  if (s.lists) {
    for (int64_t id : sm.sessions().ids()) {
      auto eph = sm.tree().ephemerals_of(id, "/");
      if (!eph.empty()) st.ephemerals_by_session.emplace_back(id, std::move(eph));
    }
  }
  st.global_sessions = static_cast<int64_t>(sm.sessions().size());
  st.tracked_sessions = static_cast<int64_t>(s.expiry->size());
  // Deadlines are kept on the monotonic clock; `dump` shows them as wall-clock dates.
  if (s.lists) {
    for (const auto& b : s.expiry->buckets()) {
      st.session_buckets.push_back(
          SessionExpiryBucket{s.wall_ms + (b.deadline_ms - s.monotonic_ms), b.ids});
    }
  }
  st.uptime_ms = s.monotonic_ms - s.started_monotonic_ms;
  st.open_file_descriptor_count = s.file_descriptors.first;
  st.max_file_descriptor_count = s.file_descriptors.second;
  st.auth_failed_count = static_cast<int64_t>(s.stats->auth_failed);
  st.slow_requests = static_cast<int64_t>(s.stats->slow_requests);
  st.fsync_threshold_exceed_count = static_cast<int64_t>(s.replication.fsync_threshold_exceeded);
  st.extra_metrics.emplace_back("fsync_count", std::to_string(s.fsyncs));
  st.extra_metrics.emplace_back("slow_consumers_closed", std::to_string(s.stats->slow_consumers_closed));
  const auto& repl = s.replication;
  if (repl.mode != "standalone") {
    st.extra_metrics.emplace_back("peer_auth_failures", std::to_string(repl.peer_auth_failures));
    st.extra_metrics.emplace_back("peer_connections_refused", std::to_string(repl.peer_connections_refused));
  }
  if (repl.mode == "leader") {
    st.extra_metrics.emplace_back("learners", std::to_string(repl.learners));
    st.extra_metrics.emplace_back("followers", std::to_string(repl.learners));
    st.extra_metrics.emplace_back("synced_followers", std::to_string(repl.synced_followers));
    st.extra_metrics.emplace_back("synced_non_voting_followers",
                                  std::to_string(repl.synced_observers));
    st.extra_metrics.emplace_back("synced_observers", std::to_string(repl.synced_observers));
    st.extra_metrics.emplace_back("pending_syncs", std::to_string(s.pending_syncs));
    st.extra_metrics.emplace_back("quorum_size", std::to_string(repl.quorum_size));
  }
  st.leader_id = static_cast<int64_t>(repl.leader_id);
  st.raft_term = repl.term;
  st.raft_commit_index = repl.commit_index;
  st.synced_observers = repl.synced_observers;
  for (const auto& p : repl.peers) {
    st.peers.push_back(ServerStatus::PeerFigures{p.id, p.match, p.learner, p.recent_active});
  }
  st.fsync_count = s.fsyncs;
  st.fsync_micros_total = repl.fsync_micros_total;
  st.fsync_micros_max = repl.fsync_micros_max;
  st.latency_sum_ms = s.stats->latency.sum_ms;
  st.latency_count = s.stats->latency.count;
  st.environment = s.environment;
  return st;
}

}  // namespace zkraft::server
