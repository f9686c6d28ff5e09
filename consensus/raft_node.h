#pragma once
// RaftNode: one server's complete Raft participant — the RaftDriver (consensus/raft_driver.h: the
// Ready loop over a RaftCore) wired to ONE io_context thread (its executor and the tick timer), a
// GroupCommitLog over LevelDB (group commit, fsync on the storage thread) and a PeerTransport.
// The application (the ZooKeeper server) plugs in through RaftApplication
// (consensus/raft_application.h, re-exported here) and sees committed entries, snapshots, leader
// changes and read points. Everything about processing a Ready lives in the driver, which the
// simulation (tests/sim) runs too; this class is wiring plus the transport envelope.
//
// Threads: every public method must be called on the io thread (the thread running the
// io_context), and every RaftApplication callback runs on it, so the application needs no locks.
// Callbacks never run inside a RaftNode call the application makes (except open(), which hands
// over the stored snapshot): propose(), read_index() etc. only queue work for a later handler.
// The io_context must be run by exactly one thread. Storage completions arrive on the storage
// thread and are posted back to the io_context; so are snapshot answers
// (RaftApplication::request_snapshot may answer from any thread). Destroy the node on the io
// thread, or after the io_context stopped running.
//
// Ready processing (see RaftDriver for the full rules): one Ready at a time. messages_now go out
// at once; the writes go to the GroupCommitLog; when the Ready must be synced its
// messages_after_persist, snapshot restore, committed entries and read states wait for the
// write's completion (never an acknowledgement before the fsync when options.fsync). A Ready
// whose only write is a moved commit index is written without fsync and finished at once. While
// one Ready waits for the disk, new proposals and messages accumulate in the core and become the
// next Ready: with GroupCommitLog this gives group commit at both levels.
//
// Snapshots: after options.snapshot_every entries were applied since the last snapshot, the
// driver asks app.request_snapshot() for the state as of applied_index() (by default answered at
// once with app.take_snapshot()), hands the answer to the core (which sends it to followers
// behind the compaction point), stores it durably and compacts the log, keeping
// options.keep_tail entries behind the snapshot for slow followers (snapshot_every = 0: never).
// After a restart the core starts at the stored snapshot: the kept tail stays on disk but is not
// reloaded, so a follower that needs it from a restarted leader is sent the snapshot instead.
//
// Restart: open() loads the stored snapshot (app.restore_snapshot) and the log after it; start()
// lets the core re-emit committed entries from snapshot.index+1 on, which reach app.apply again.
// So the application's state is rebuilt from snapshot + log; it needs no durable state of its own.
//
// Transport multiplexing: every payload on the PeerTransport starts with a one-byte tag: Raft
// message or application message (send_app_message).
//
// Fatal errors: a failed LevelDB write/fsync after start is not survivable (the node may have
// promised durability it does not have): the node stops and calls app.on_fatal_error().

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "consensus/conf_change.h"
#include "consensus/group_commit_log.h"
#include "consensus/peer_transport.h"
#include "consensus/peer_transport_auth.h"
#include "consensus/raft_application.h"
#include "consensus/raft_core.h"
#include "consensus/raft_driver.h"
#include "consensus/raft_status.h"
#include "consensus/storage_options.h"
#include "consensus/types.h"

namespace zkraft::consensus {

struct PeerAddress {
  std::string host;
  uint16_t port = 0;
};

struct RaftNodeOptions {
  NodeId id = 0;
  std::string dir;  // LevelDB directory (created if missing)
  // The cluster's bootstrap membership. It is recorded in `dir` on first start and the recorded
  // one is used on every later start (so changing the config later cannot change history). A
  // server joining an existing cluster later must pass the SAME bootstrap membership as the
  // original servers (the log's membership changes are applied on top of it); it does not
  // campaign until the log makes it a voter.
  Membership initial_membership;
  std::map<NodeId, PeerAddress> peers;  // every other server (voters and learners); self ignored
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 0;  // peer port (0 = ephemeral, see peer_port())
  int tick_ms = 50;
  int election_ticks = 20;  // election timeout drawn from [election_ticks, 2*election_ticks) ticks
  int heartbeat_ticks = 2;
  bool fsync = true;              // false only for benchmarks/tests (like ZooKeeper's forceSync=no)
  uint64_t fsync_warning_ms = 1000;  // slower fsyncs are logged and counted; 0 = never
  uint64_t snapshot_every = 100000;  // take a snapshot after this many applied entries
  uint64_t keep_tail = 5000;         // entries kept behind a snapshot for slow followers
  // The log after the compaction point is held in memory: a snapshot is also taken once the
  // entries applied since the last hold this many bytes, and the kept tail holds at most
  // keep_tail_bytes (0 = no byte bound; see RaftDriverOptions).
  uint64_t snapshot_bytes = 64ull << 20;
  uint64_t keep_tail_bytes = 8ull << 20;
  // Applied entries stay in the core's memory only up to this many bytes; a follower that needs
  // older ones gets them read back from LevelDB (RaftConfig::max_log_memory_bytes; 0 = keep all).
  // 4 MiB is ~15,000 creates of 100 B, far more than a follower lags by under load.
  uint64_t max_log_memory_bytes = 4ull << 20;
  std::string cluster_name;          // peers with a different non-empty name are refused
  PeerAuthOptions peer_auth;         // quorum authentication on the peer port (off by default)
  // sslQuorum: mutual TLS between servers (PeerTransportOptions::tls); null = plain.
  std::shared_ptr<boost::asio::ssl::context> peer_tls;
  bool peer_tls_hostname_verification = true;
  uint32_t max_message_bytes = 64u << 20;  // largest transport payload
  // Fast failover: when the transport reports the connection to the leader broken, tell the core
  // (RaftCore::broken_leader_connection: it drops the leader's lease and campaigns, staggered by
  // id so that survivors do not split their votes). false: wait for the election timeout.
  bool fast_failover = true;
  // LevelDB tuning and test hooks (e.g. a fault-injecting Env); defaults suit a server.
  StorageOptions storage;
};

class RaftNode {
 public:
  RaftNode(boost::asio::io_context& io, RaftNodeOptions options, RaftApplication& app);
  ~RaftNode();
  RaftNode(const RaftNode&) = delete;
  RaftNode& operator=(const RaftNode&) = delete;

  // Opens storage (recovers snapshot + log; a stored snapshot is handed to
  // app.restore_snapshot here) and binds the peer listener. False + *error on failure.
  bool open(std::string* error);
  uint16_t peer_port() const;
  // Connects to the peers and starts ticking. Committed entries after the snapshot are
  // re-applied through app.apply as the core re-emits them.
  void start();
  // Stops ticking, closes the transport, finishes queued storage writes. Idempotent; the node
  // cannot be started again (make a new one on the same dir).
  void stop();

  // Appends `data` if this node leads (kNotLeader with a leader hint otherwise). The entry
  // reaches app.apply once committed; it may still be lost if leadership changes first (the
  // application learns it when a different entry is applied at result.index).
  ProposeResult propose(std::string data);
  // Asks for a linearizable read point; the answer comes through app.on_read_state.
  RaftError read_index(uint64_t context);
  // Add voter / learner, remove, promote (one change at a time; leader only).
  ProposeResult change_membership(const ConfChange& cc);
  RaftError transfer_leadership(NodeId to);
  // Takes a snapshot now, whatever options.snapshot_every says (an operator's csnp).
  void snapshot_now();
  // Adds or re-addresses a peer (before proposing its membership, so it can be reached).
  void add_peer(NodeId id, const PeerAddress& addr);
  // An application message to another server, multiplexed with Raft messages on the transport
  // (e.g. a follower forwarding a client write to the leader). At most once; dropped if the
  // peer is unknown or unreachable. A message to self is delivered through the io_context.
  void send_app_message(NodeId to, std::string payload);

  RaftStatus status() const;
  NodeId id() const { return options_.id; }
  NodeId leader() const;
  Term term() const;
  bool is_leader() const;
  Index applied_index() const;  // last entry handed to the app (or snapshot)
  Index commit_index() const;
  Membership applied_membership() const;
  uint64_t fsync_count() const;
  GroupCommitStats storage_stats() const;
  // The storage thread is waiting for disk space (GroupCommitLog::disk_full). Any thread.
  bool disk_full() const;
  PeerTransportStats transport_stats() const;
  // Entries read back from storage to send to a follower: the core had evicted them from memory
  // (RaftNodeOptions::max_log_memory_bytes). Any thread.
  uint64_t entries_read_back() const { return entries_read_back_.load(std::memory_order_relaxed); }

 private:
  struct Alive;  // shared with posted callbacks so they can tell the node is gone
  class Wiring;  // the driver's storage, transport, executor and observer (raft_node.cc)

  void schedule_tick();
  void on_tick();
  void on_transport_message(NodeId from, std::string payload);
  void on_peer_down(NodeId peer);
  void send_raft(const Message& m);

  boost::asio::io_context& io_;
  RaftNodeOptions options_;
  RaftApplication& app_;
  std::shared_ptr<Alive> alive_;

  std::unique_ptr<GroupCommitLog> log_;
  std::unique_ptr<PeerTransport> transport_;
  std::unique_ptr<Wiring> wiring_;
  std::unique_ptr<RaftDriver> driver_;  // destroyed first: it uses the three above
  boost::asio::steady_timer ticker_;
  std::mt19937_64 rng_;

  std::atomic<uint64_t> entries_read_back_{0};  // counted on the storage thread
  bool opened_ = false;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace zkraft::consensus
