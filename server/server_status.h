#pragma once
// ServerStatus: a plain snapshot of everything the four-letter words and the admin/metrics pages
// report. The server fills one (on its own threads, however it likes) and hands it to the pure
// renderers in four_letter_words.h, so the text formats can be tested without a server.
//
// Times are wall-clock milliseconds since the epoch unless a name says otherwise; latencies are
// milliseconds. Session ids appear as ZooKeeper prints them (0x + lower-case hex).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zkraft::server {

// One client connection, for `stat` (brief) and `cons` (full). Fields follow
// ServerCnxn.dumpConnectionInfo.
struct ConnectionStatus {
  std::string remote;         // "/127.0.0.1:48496" (Java InetSocketAddress style, leading '/')
  int32_t interest_ops = 1;   // NIO interest set: 1 = read, 4 = write, 0 = none (printed in hex)
  int64_t queued = 0;         // outstanding requests
  int64_t received = 0;       // packets received
  int64_t sent = 0;           // packets sent
  // The rest is printed by `cons` only, and only when session_id != 0.
  int64_t session_id = 0;
  std::string last_op = "NA";  // FinalRequestProcessor lastOp: CREA, GETD, PING, SESS, ...
  int64_t established_ms = 0;
  int32_t timeout_ms = 0;
  int64_t last_cxid = -1;      // omitted when < 0
  int64_t last_zxid = -1;      // printed as 0x + hex (two's complement for negatives)
  int64_t last_response_ms = 0;
  int64_t last_latency_ms = 0;
  int64_t min_latency_ms = 0;
  int64_t avg_latency_ms = 0;  // integer, like ServerCnxn.getAvgLatency
  int64_t max_latency_ms = 0;
};

// An expiry bucket for `dump`: the sessions (or connections) due at one time.
struct SessionExpiryBucket {
  int64_t expire_at_ms = 0;        // wall clock
  std::vector<int64_t> session_ids;
};
struct ConnectionExpiryBucket {
  int64_t expire_at_ms = 0;
  std::vector<std::pair<std::string, int64_t>> connections;  // (remote, session id or 0)
};

// What `envi` reports besides the version. Keys the JVM would fill and we have no equivalent of
// (java.*) are printed as "<NA>", exactly as ZooKeeper prints a missing property.
struct EnvironmentStatus {
  std::string host_name = "<NA>";
  std::string os_name = "<NA>";
  std::string os_arch = "<NA>";
  std::string os_version = "<NA>";
  std::string user_name = "<NA>";
  std::string user_home = "<NA>";
  std::string user_dir = "<NA>";
  int64_t memory_free_mb = 0;   // os.memory.free
  int64_t memory_max_mb = 0;    // os.memory.max
  int64_t memory_total_mb = 0;  // os.memory.total
};

struct ServerStatus {
  // false: commands that need a running server answer
  // "This ZooKeeper instance is not currently serving requests".
  bool serving = true;
  std::string version;             // full_version(), e.g. "3.9.4-zkraft-0.1.0, built on ... UTC"
  std::string mode = "standalone"; // standalone | leader | follower | observer | read-only
  bool read_only = false;          // adds the READ-ONLY line to srvr/stat; isro says "ro"

  int64_t min_latency_ms = 0;
  double avg_latency_ms = 0;       // rounded to 4 decimals like AvgMinMaxCounter.getAvg
  int64_t max_latency_ms = 0;
  int64_t packets_received = 0;
  int64_t packets_sent = 0;
  int64_t num_alive_connections = 0;
  int64_t outstanding_requests = 0;
  int64_t last_zxid = 0;
  int64_t node_count = 0;          // ZooKeeper counts real znodes + 1
  // Leader only: "Proposal sizes last/min/max: a/b/c" (-1 when none yet).
  std::optional<std::vector<int64_t>> proposal_sizes;  // {last, min, max}

  std::vector<ConnectionStatus> connections;

  // Watches (data-table figures, as WatchRegistry::summary / dumps give them, mapped to
  // session ids by the server).
  int64_t watch_connections = 0;
  int64_t watch_paths = 0;
  int64_t watch_total = 0;
  int64_t watch_count = 0;         // mntr zk_watch_count (data + child tables)
  std::vector<std::pair<int64_t, std::vector<std::string>>> watches_by_session;  // wchc
  std::vector<std::pair<std::string, std::vector<int64_t>>> watches_by_path;     // wchp

  // Tree and sessions.
  int64_t ephemerals_count = 0;
  int64_t approximate_data_size = 0;
  std::vector<std::pair<int64_t, std::vector<std::string>>> ephemerals_by_session;  // dump
  int64_t global_sessions = 0;
  int64_t local_sessions = 0;
  int64_t tracked_sessions = 0;    // sessions in the expiry tracker (dump "Session Sets (b)/(n)")
  std::vector<SessionExpiryBucket> session_buckets;
  int64_t tracked_connections = 0;
  std::vector<ConnectionExpiryBucket> connection_buckets;

  // Process and files.
  int64_t uptime_ms = 0;
  int64_t open_file_descriptor_count = 0;
  int64_t max_file_descriptor_count = 0;
  int64_t data_dir_size = 0;
  int64_t log_dir_size = 0;
  int64_t auth_failed_count = 0;
  int64_t outstanding_tls_handshake = 0;  // TLS handshakes under way on the network threads
  int64_t slow_requests = 0;       // zkraft: requests the slow-request log reported
  int64_t fsync_threshold_exceed_count = 0;  // fsyncs slower than fsync.warningthresholdms
  int64_t last_client_response_size = -1;
  int64_t min_client_response_size = -1;
  int64_t max_client_response_size = -1;
  int64_t trace_mask = 306;        // gtmk/stmk; ZooKeeper's default text trace mask
  std::vector<std::pair<int64_t, int64_t>> digests;  // hash: (zxid, digest)

  // The Raft log as lgif shows it.
  struct LogFigures {
    uint64_t first_index = 0, first_term = 0, last_index = 0, last_term = 0;
    uint64_t applied_index = 0, commit_index = 0, snapshot_index = 0;
  } log;
  // Consensus, for the admin commands leader/zabstate/voting_view (ZooKeeper shows Zab there;
  // zkraft shows Raft). leader_id 0: none known. Voters and learners: the membership in effect.
  int64_t server_id = 0;
  int64_t leader_id = 0;
  uint64_t raft_term = 0;
  uint64_t raft_commit_index = 0;
  std::vector<uint64_t> voters;
  std::vector<uint64_t> learners;
  int64_t synced_observers = 0;
  // Leader only: every other member's replication (ReplicationStatus::peers), for the dashboard.
  struct PeerFigures {
    uint64_t id = 0;
    uint64_t match = 0;
    bool learner = false;
    bool recent_active = false;
  };
  std::vector<PeerFigures> peers;
  // Group commit's fsyncs since start: how many and the time spent (microseconds).
  uint64_t fsync_count = 0;
  uint64_t fsync_micros_total = 0;
  uint64_t fsync_micros_max = 0;
  // The server-wide latency behind avg_latency_ms (since the last stat_reset): a reader that
  // polls can take the average over its own interval from the differences.
  int64_t latency_sum_ms = 0;
  int64_t latency_count = 0;

  // Extra mntr lines, appended as zk_<key>\t<value> (leader figures, quorum_size, ...).
  std::vector<std::pair<std::string, std::string>> extra_metrics;

  EnvironmentStatus environment;
};

// Which statistics a status request resets first, on the state thread (4lw crst/srst, the admin
// commands connection_stat_reset/stat_reset).
enum class StatsReset { kNone, kConnections, kServer };

// "3.9.4-zkraft-<our version>, built on <build date> UTC": the ZooKeeper version we behave as,
// first, because clients parse it (kazoo reads the digits before the first '-').
std::string full_version();

// Fills what `envi` reports from this process and host (uname, passwd, cwd, sysinfo).
EnvironmentStatus current_environment();
// Open and maximum file descriptors of this process (/proc/self/fd, RLIMIT_NOFILE).
std::pair<int64_t, int64_t> file_descriptor_counts();
// Bytes in the regular files under `dir` (0 if it cannot be read), as ZooKeeper's dirs reports.
int64_t directory_bytes(const std::string& dir);

}  // namespace zkraft::server
