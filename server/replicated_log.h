#pragma once
// ReplicatedLog: the one seam between the ZooKeeper server and consensus. The server proposes
// encoded Txns and learns, in log order, what was committed; consensus::RaftNode sits behind it in
// production (RaftReplicatedLog, on its own thread), an in-memory fake in the server's unit tests
// (tests/server/fake_replicated_log.h).
//
// Threads: every method is called on the state thread, and every LogListener call is made on it,
// in the order consensus produced them (restore, applies, leader changes, read points and peer
// messages interleaved exactly as they happened). Methods never call the listener back from
// inside themselves.
//
// Leadership as the state thread sees it (leader(), is_leader()) changes only through
// on_leader_changed, so it is consistent with the applies around it. A proposal made while the
// state thread believes it leads, but that consensus refuses because it stepped down meanwhile,
// is dropped: an on_leader_changed for that step-down is always on its way, and the server fails
// what it has in flight there.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jute/archive.h"
#include "tree/live_snapshot_check.h"

namespace zkraft::server {

// Another member's replication as the leader tracks it (consensus' PeerStatus, without Raft's
// own words): how much of the leader's log it holds, and whether it was heard from lately.
struct PeerProgress {
  uint64_t id = 0;
  uint64_t match = 0;          // the highest log index known to be on that member
  bool learner = false;        // a non-voting member (ZooKeeper's observer)
  bool recent_active = false;  // heard from within the last election timeout
};

// Cluster figures for srvr/mntr (ZooKeeper's leader-only keys) and the dashboard.
struct ReplicationStatus {
  std::string mode = "standalone";  // standalone | leader | follower | observer
  uint64_t leader_id = 0;
  int64_t learners = 0;             // zk_learners: followers + observers
  int64_t synced_followers = 0;     // zk_synced_followers
  int64_t synced_observers = 0;     // zk_synced_non_voting_followers
  int64_t quorum_size = 1;
  std::vector<uint64_t> synced_peers;  // leader: peers in sync lately (a reconfig's check)
  uint64_t term = 0;
  uint64_t commit_index = 0;
  // The log's bounds (lgif).
  uint64_t first_index = 0, first_term = 0, last_index = 0, last_term = 0;
  uint64_t applied_index = 0, snapshot_index = 0;
  uint64_t fsync_threshold_exceeded = 0;  // fsyncs slower than fsync.warningthresholdms
  uint64_t fsync_micros_total = 0;        // time spent in fsyncs since start
  uint64_t fsync_micros_max = 0;          // the slowest one
  std::vector<PeerProgress> peers;        // leader only: every other member
  // Peer port: inbound handshakes refused for authentication (no or wrong credentials), and all
  // refused (also unknown ids, foreign clusters). mntr's zk_peer_auth_failures.
  uint64_t peer_auth_failures = 0;
  uint64_t peer_connections_refused = 0;
};

// Consensus figures for the Prometheus page (prometheus_metrics.h): counters only grow while the
// process runs. A log without consensus behind it (the unit tests' fake) reports known = false.
struct ConsensusFigures {
  bool known = false;
  uint64_t term = 0;
  uint64_t commit_index = 0;
  uint64_t applied_index = 0;
  uint64_t last_index = 0;
  uint64_t snapshot_index = 0;
  std::vector<PeerProgress> peers;  // the leader's view of every other member; empty elsewhere
  uint64_t leader_changes = 0;     // (leader, term) changes this server saw (incl. to "none")
  // Ensembles only (a standalone server has no elections, as in ZooKeeper): how often this
  // server was without a leader (ZooKeeper's looking_count: entering LOOKING, the start
  // included), and how long each such spell lasted until a leader was known, in ms
  // (election_time), bucketed as consensus/log_buckets.h.
  uint64_t looking_count = 0;
  uint64_t elections = 0;
  uint64_t election_ms_total = 0;
  std::vector<uint64_t> election_ms_buckets;
  uint64_t proposals = 0;          // entries handed to consensus to append
  uint64_t proposal_batches = 0;   // state-thread batches those came in
  uint64_t read_index_rounds = 0;  // ReadIndex requests made
  // Storage (GroupCommitLog): entries and write groups (a group is one write + at most one
  // fsync), fsyncs with their time in microseconds, bucketed as consensus/log_buckets.h.
  uint64_t log_entries = 0;
  uint64_t log_bytes = 0;
  uint64_t log_groups = 0;
  // The Raft core's log in memory (entry bytes), and the entries it had evicted from there that
  // were read back from storage to send to a follower.
  uint64_t log_memory_bytes = 0;
  uint64_t log_entries_read_back = 0;
  uint64_t fsyncs = 0;
  uint64_t fsync_micros_total = 0;
  std::vector<uint64_t> fsync_micros_buckets;
  // Peer transport, payload bytes and messages, each direction.
  uint64_t peer_bytes_sent = 0;
  uint64_t peer_bytes_received = 0;
  uint64_t peer_messages_sent = 0;
  uint64_t peer_messages_received = 0;
  uint64_t peer_auth_failures = 0;        // inbound handshakes refused for authentication
  // Snapshots this server took (serialised, by a child or the state thread), in milliseconds.
  uint64_t snapshots = 0;
  uint64_t last_snapshot_bytes = 0;
  uint64_t last_snapshot_ms = 0;
  uint64_t snapshot_ms_total = 0;
  std::vector<uint64_t> snapshot_ms_buckets;  // consensus/log_buckets.h
};

struct MembershipView {
  std::vector<uint64_t> voters;    // sorted
  std::vector<uint64_t> learners;  // sorted
};

enum class MembershipChange { kAddLearner, kPromote, kRemove };

class LogListener {
 public:
  virtual ~LogListener() = default;
  // Each committed entry, once, in index order. Empty data: a log no-op (advances the zxid).
  virtual void on_apply(uint64_t index, std::string_view data) = 0;
  // Replace the whole state with a snapshot taken at `index` (start-up, or sent by the leader).
  virtual void on_restore(uint64_t index, std::string_view data) = 0;
  // The state as of the last entry applied: consensus stores it and compacts the log behind it.
  virtual std::string on_snapshot_request() = 0;
  // The same state, handed to `out` in pieces of about piece_bytes (for a child process that
  // writes it to a file without holding it whole); false as soon as out returns false.
  virtual bool on_snapshot_write(size_t piece_bytes, const std::function<bool(std::string_view)>& out) = 0;
  // The same state written in steps while applying goes on, with no fork (ZnodeTree's live
  // snapshot): begin appends its first bytes to `out` and fixes what it holds (the state as of the
  // last entry applied), and returns the check of the bytes to come (for whoever writes them), or
  // nothing if this listener cannot; continue appends the records of up to
  // max_records more znodes and returns true once the snapshot is whole. One at a time; one that
  // is never finished is dropped with the state.
  virtual std::optional<tree::LiveSnapshotCheck> begin_live_snapshot(jute::Writer& out) {
    (void)out;
    return std::nullopt;
  }
  virtual bool continue_live_snapshot(jute::Writer& out, size_t max_records) {
    (void)out, (void)max_records;
    return true;
  }
  // Incremental snapshots (ZkStateMachine::begin_live_delta): about how many bytes a delta of
  // the changes since the last snapshot point would take, nullopt if this listener cannot
  // write one now; and the start of the delta itself, which makes now the point and is then
  // written in steps like a live snapshot (continue_live_snapshot).
  virtual std::optional<uint64_t> pending_delta_bytes() { return std::nullopt; }
  virtual void begin_live_delta(jute::Writer& out) { (void)out; }
  // The leader changed (0: none known now).
  virtual void on_leader_changed(uint64_t leader, bool self) = 0;
  // The answer to read_index(context): reads may be served once applied >= index; `ok` false
  // when no read point can be had now (no leader).
  virtual void on_read_index(uint64_t context, uint64_t index, bool ok) = 0;
  // A payload another server sent with send().
  virtual void on_peer_message(uint64_t from, std::string payload) = 0;
  // After each batch of the calls above: a place to flush what they produced.
  virtual void on_batch_done() {}
};

class ReplicatedLog {
 public:
  virtual ~ReplicatedLog() = default;
  // Recovers what is durable (a stored snapshot reaches listener.on_restore before this returns;
  // the log after it follows through on_apply) and starts. False + *error on failure.
  virtual bool start(LogListener& listener, std::string* error) = 0;
  virtual void stop() = 0;
  // Appends an entry (leader only: see the header comment for what happens otherwise).
  virtual void propose(std::string entry) = 0;
  // Asks for a linearizable read point; the answer arrives through on_read_index.
  virtual void read_index(uint64_t context) = 0;
  virtual bool is_leader() const = 0;
  virtual uint64_t leader() const = 0;
  virtual uint64_t self_id() const = 0;
  // At-most-once message to another server of the ensemble.
  virtual void send(uint64_t to, std::string payload) = 0;
  // Figures as of consensus' last report (at most a Raft tick old).
  virtual ReplicationStatus replication_status() const = 0;
  virtual uint64_t fsync_count() const = 0;
  // Figures for the metrics page, as of consensus' last report; none by default.
  virtual ConsensusFigures consensus_figures() const { return {}; }
  // This server's log cannot be written for lack of disk space: new writes are refused (reads
  // are served) until it can. Any thread.
  virtual bool disk_full() const { return false; }
  // How long ago this server last knew it was in contact with a quorum (a leader: heard from a
  // majority of voters; a follower or observer: heard from its leader), in monotonic ms, never
  // less than the truth; kNoQuorumContact when it knows no leader. A standalone server that
  // leads itself is always in contact (0).
  static constexpr int64_t kNoQuorumContact = INT64_MAX;
  virtual int64_t quorum_contact_age_ms() const = 0;
  // Whether every entry this server knew to be committed when it started has reached on_apply.
  // Until then it does not serve (ServingGate), whatever its contact: its state is older than
  // one it may have served before it stopped. A log with no start-up replay: always true.
  virtual bool start_up_replay_done() const { return true; }
  // Membership in effect, and the leader's way to change it one server at a time (a change
  // consensus cannot make now, e.g. another is pending, is dropped: the caller retries).
  virtual MembershipView membership() const = 0;
  virtual void add_peer(uint64_t id, const std::string& host, uint16_t port) = 0;
  virtual void change_membership(MembershipChange change, uint64_t id) = 0;
  // Operator requests (csnp, rqld, ydld): a snapshot now; leader only, hand leadership to
  // voter `to` (0: to the most up-to-date other voter). Dropped when consensus cannot act now.
  virtual void snapshot_now() = 0;
  virtual void transfer_leadership(uint64_t to) = 0;
};

}  // namespace zkraft::server
