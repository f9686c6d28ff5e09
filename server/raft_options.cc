#include "server/raft_options.h"

#include <algorithm>
#include <filesystem>

#include "server/peer_auth.h"
#include "server/tls_context.h"
#include "server/tls_options.h"

namespace zkraft::server {

std::optional<consensus::RaftNodeOptions> raft_options(const Config& config, std::string* error) {
  consensus::RaftNodeOptions o;
  o.id = static_cast<consensus::NodeId>(config.server_id);
  o.dir = raft_log_dir(config);
  o.fsync = config.fsync;
  o.fsync_warning_ms = static_cast<uint64_t>(config.fsync_warning_threshold_ms);
  o.snapshot_every = static_cast<uint64_t>(std::max<int64_t>(config.snap_count, 100));
  o.keep_tail = std::min<uint64_t>(5000, o.snapshot_every);
  // The Raft log since the last snapshot is in LevelDB, and in memory only up to
  // RaftNodeOptions::max_log_memory_bytes of it (4 MiB) once applied. ZooKeeper's
  // snapSizeLimitInKb default is 4 GiB; 64 MiB bounds the log on disk when entries are large
  // (1 MB setData: a snapshot every 64 entries instead of every 100,000, i.e. 100 GB) and leaves
  // small writes to snapCount: 100,000 creates of 100 B are ~27 MB of entries. The kept tail for
  // slow followers is bounded the same way: 5000 entries or 8 MiB, whichever is less.
  if (config.snap_size_limit_kb <= 0) {
    o.snapshot_bytes = 0;
  } else {
    const uint64_t kb = static_cast<uint64_t>(config.snap_size_limit_kb);
    o.snapshot_bytes = kb > (UINT64_MAX >> 10) ? UINT64_MAX : kb << 10;
  }
  o.keep_tail_bytes = o.snapshot_bytes == 0 ? (8ull << 20) : std::min<uint64_t>(8ull << 20, o.snapshot_bytes);
  // The election timeout follows the ZooKeeper config: syncLimit ticks, at least a second, so a
  // follower that stops hearing the leader for that long looks for a new one. Raft's own tick
  // is a fraction of it for heartbeats.
  o.tick_ms = 50;
  // Capped at a day: the core draws from [election_ticks, 2 x election_ticks) in an int, and an
  // absurd syncLimit x tickTime (both may be up to INT32_MAX) must not overflow that.
  constexpr int64_t kMaxElectionMs = 24 * 3600 * 1000;
  const int64_t election_ms = std::clamp<int64_t>(
      int64_t{config.sync_limit} * config.tick_time_ms / 2, 1000, kMaxElectionMs);
  o.election_ticks = static_cast<int>(std::max<int64_t>(4, election_ms / o.tick_ms));
  o.heartbeat_ticks = 2;
  if (config.standalone()) {
    // With no one to split a vote with, the election can be quick.
    o.initial_membership.voters.push_back(o.id);
    o.election_ticks = 2;
    o.heartbeat_ticks = 1;
    o.listen_host = "127.0.0.1";
    o.listen_port = 0;
    return o;
  }
  auto auth = peer_auth_options(config, error);
  if (!auth) return std::nullopt;
  o.peer_auth = std::move(*auth);
  if (config.ssl_quorum) {
    TlsOptions tls;
    if (!quorum_tls_options_from_config(config, &tls, error)) return std::nullopt;
    o.peer_tls = build_server_tls_context(tls, error, true);
    if (!o.peer_tls) {
      *error = "sslQuorum: " + *error;
      return std::nullopt;
    }
    o.peer_tls_hostname_verification = tls.hostname_verification;
  }
  bool found_self = false;
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
    return std::nullopt;
  }
  std::sort(o.initial_membership.voters.begin(), o.initial_membership.voters.end());
  std::sort(o.initial_membership.learners.begin(), o.initial_membership.learners.end());
  return o;
}

bool is_observer(const Config& config) {
  return std::any_of(config.servers.begin(), config.servers.end(), [&](const PeerConfig& s) {
    return s.id == config.server_id && s.role == PeerRole::kObserver;
  });
}

}  // namespace zkraft::server
