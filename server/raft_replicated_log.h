#pragma once
// RaftReplicatedLog: the production ReplicatedLog. In an ensemble a consensus::RaftNode (Raft
// core, LevelDB log with group commit, peer transport) runs on a thread of its own, the Raft
// thread; this class carries calls from the state thread to it and what it produces back, each
// way through one BatchQueue, so a busy Raft thread takes a batch of proposals per wake-up and a
// busy state thread a batch of committed entries. A standalone server's one-voter Raft has no
// peers to talk to, so it runs on the state thread's io_context instead: the same queues, without
// the two thread wake-ups per write that a thread of its own would cost (measured: docs/
// benchmarks.md, "server pipeline").
//
// Snapshots: consensus asks for one (request_snapshot_file, with the storage's file for it) on
// the Raft thread; the request travels through the same queue as the committed entries, so when
// the state thread reaches it the state is exactly as of the requested index. There it starts a
// live snapshot (the listener's begin_live_snapshot: ZnodeTree keeps the record of each znode a
// later write touches before the snapshot reached it) and writes it a step of kLiveStepRecords
// znodes at a time, each step an event of its own behind the others, while a LiveSnapshotFile
// thread writes and syncs the pieces into the file and answers with its size and checksum. With
// zkraft.snapshotInChildProcess, or a listener without live snapshots, it forks instead
// (ForkedSnapshot): a child process writes that image into the file. Either way neither thread
// waits for the serialisation or the disk, and no process holds the whole snapshot. Why live by
// default: after a fork every first write to a page faults, and on the development machine those
// faults stalled the serving threads ~200 ms per snapshot (docs/benchmarks.md).
//
// The figures behind replication_status(), membership() and fsync_count() are copied from the
// Raft thread after each batch and every Raft tick.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>

#include "server/forked_snapshot.h"
#include "server/live_snapshot_file.h"

#include "consensus/raft_node.h"
#include "server/batch_queue.h"
#include "server/config.h"
#include "server/replicated_log.h"

namespace zkraft::server {

class RaftReplicatedLog final : public ReplicatedLog, public consensus::RaftApplication {
 public:
  // `state` is the state thread's executor: listener calls run there. nullptr + *error if the
  // config does not describe this server.
  static std::unique_ptr<RaftReplicatedLog> create(boost::asio::io_context& state,
                                                   const Config& config, std::string* error);
  ~RaftReplicatedLog() override;

  bool start(LogListener& listener, std::string* error) override;
  void stop() override;
  void propose(std::string entry) override;
  void read_index(uint64_t context) override;
  bool is_leader() const override { return self_leader_; }
  uint64_t leader() const override { return leader_; }
  uint64_t self_id() const override { return self_id_; }
  void send(uint64_t to, std::string payload) override;
  ReplicationStatus replication_status() const override;
  uint64_t fsync_count() const override;
  ConsensusFigures consensus_figures() const override;
  bool disk_full() const override;
  int64_t quorum_contact_age_ms() const override;
  bool start_up_replay_done() const override { return applied_index_ >= start_up_commit_; }
  MembershipView membership() const override;
  void add_peer(uint64_t id, const std::string& host, uint16_t port) override;
  void change_membership(MembershipChange change, uint64_t id) override;
  void snapshot_now() override;
  void transfer_leadership(uint64_t to) override;

 private:
  struct Propose { std::string entry; };
  struct ReadIndex { uint64_t context; };
  struct Send { uint64_t to; std::string payload; };
  struct AddPeer { uint64_t id; std::string host; uint16_t port; };
  struct ChangeMembership { MembershipChange change; uint64_t id; };
  struct SnapshotNow {};
  struct TransferLeadership { uint64_t to; };
  using Command = std::variant<Propose, ReadIndex, Send, AddPeer, ChangeMembership, SnapshotNow,
                               TransferLeadership>;

  struct Apply { uint64_t index; std::string data; };
  struct Restore { uint64_t index; consensus::SnapshotBytes data; };  // shared, not copied: ~190 MB at 1,000,000 znodes
  struct LeaderChanged { uint64_t leader; bool self; };
  struct ReadPoint { uint64_t context; uint64_t index; bool ok; };
  struct Message { uint64_t from; std::string payload; };
  struct SnapshotStep {};  // the live snapshot's next step (state thread to itself)
  struct SnapshotWanted {
    uint64_t index;
    consensus::SnapshotReply reply;
    // The storage's file for it (request_snapshot_file), which a forked child writes. Unset:
    // serialise on the state thread and answer with the bytes (the child failed).
    std::optional<consensus::SnapshotFileTarget> target;
    consensus::SnapshotFileReply file_reply;
  };
  // SnapshotWanted is boxed: at ~130 bytes it would make every Event that size, and a restart
  // queues one Apply per log entry after the snapshot (100,000 at snapCount's default).
  using Event =
      std::variant<Apply, Restore, LeaderChanged, ReadPoint, Message, std::unique_ptr<SnapshotWanted>, SnapshotStep>;

  struct Figures {
    ReplicationStatus replication;
    MembershipView membership;
    uint64_t fsyncs = 0;
    int64_t quorum_contact_ms = kNoQuorumContact;  // steady clock ms of the last contact
    bool own_quorum = false;  // leader and the only voter (server/quorum_contact.h)
    ConsensusFigures consensus;  // without the snapshot figures (snapshots_)
  };

  RaftReplicatedLog(boost::asio::io_context& state, consensus::RaftNodeOptions options,
                    bool observer, bool own_thread, bool snapshot_in_child);

  // Raft thread.
  void run_commands(std::vector<Command>& batch);
  void transfer_leadership_now(uint64_t to);  // 0: to the most up-to-date other voter
  void refresh_figures();
  void schedule_refresh();
  void apply(const consensus::Entry& e) override;
  // An empty Apply, which the pipeline takes as a no-op: its applied index and zxid follow.
  void on_conf_change_applied(consensus::Index index) override;
  std::string take_snapshot() override;
  void request_snapshot(consensus::Index index, consensus::SnapshotReply reply) override;
  void request_snapshot_file(consensus::Index index, const consensus::SnapshotFileTarget& target,
                             consensus::SnapshotReply reply, consensus::SnapshotFileReply file_reply) override;
  void restore_snapshot(const consensus::SnapshotMeta& meta, consensus::SnapshotBytes data) override;
  void on_membership(const consensus::Membership& m) override;
  void on_leader_change(consensus::NodeId leader, consensus::Term term, bool self) override;
  void on_read_state(uint64_t context, consensus::Index index) override;
  void on_app_message(consensus::NodeId from, std::string payload) override;
  // A storage failure other than a full disk (a failed fsync, an I/O error): the log may not be
  // durable, so the process ends at once (the Raft node logged why in one line) rather than
  // acknowledge anything more.
  void on_fatal_error(const std::string& what) override;

  // State thread.
  void dispatch(std::vector<Event>& batch);
  // A forked child (ForkedSnapshot) writes the state into the target's file, in pieces
  // (write_snapshot_file), and only its size and checksum come back to the reader thread, which
  // answers: the snapshot's bytes are never whole in either process. On the state thread, with
  // the bytes, only if fork fails or the child does.
  void take_snapshot_for(SnapshotWanted& want);
  // In the forked child: the state into target's file; what to send the parent (ChildFileResult).
  std::string write_snapshot_file(const consensus::SnapshotFileTarget& target);
  // The reader thread, with what the child sent (nullopt: it failed).
  void snapshot_file_done(const SnapshotWanted& want, std::optional<std::string> result, int64_t ms);
  // The live snapshot: started for `want` (false: the listener has none, fork instead), and one
  // step of it.
  bool start_live_snapshot(SnapshotWanted& want);
  void live_snapshot_step();
  // An incremental snapshot for `want`: the listener's delta appended to the stored snapshot's
  // file, when that file is the state at the last snapshot point and the delta is worth it
  // (false: take a whole one).
  bool start_delta_snapshot(SnapshotWanted& want);
  // The file thread, once the file is synced (or failed with errno `err`).
  void live_snapshot_file_done(const SnapshotWanted& want, int err, const consensus::SnapshotFileWritten& written,
                               int64_t ms);
  // Any thread: a snapshot of `bytes` was serialised in `ms` (for consensus_figures()).
  void record_snapshot(size_t bytes, int64_t ms);

  const uint64_t self_id_;
  const bool observer_;
  const int64_t tick_ms_;
  const int64_t in_sync_window_ms_;            // see refresh_figures
  std::map<uint64_t, int64_t> last_in_sync_ms_;  // Raft thread (refresh_figures)
  bool was_leader_ = false;                      // Raft thread (refresh_figures)
  LogListener* listener_ = nullptr;
  bool opening_ = false;          // open() runs on the state thread: restore directly
  uint64_t leader_ = 0;           // as the state thread has been told
  uint64_t applied_index_ = 0;    // last entry (or snapshot) handed to the listener
  uint64_t start_up_commit_ = 0;  // the commit index recovered at open (start_up_replay_done)
  bool self_leader_ = false;
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;

  const bool own_thread_;
  boost::asio::io_context own_io_;     // the Raft thread's, when it has one
  boost::asio::io_context& raft_io_;  // own_io_, or the state thread's
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> raft_work_;
  boost::asio::steady_timer refresh_timer_;
  std::unique_ptr<consensus::RaftNode> node_;
  BatchQueue<Command> commands_;  // state -> Raft
  BatchQueue<Event> events_;      // Raft -> state
  std::thread raft_thread_;

  std::unique_ptr<ForkedSnapshot> snapshot_child_;  // state thread; the latest snapshot's child
  const bool snapshot_in_child_;
  // State thread: the live snapshot under way (live_steps_ false once its last step ran) and
  // the file thread of the latest one (kept until the next starts, as snapshot_child_).
  static constexpr size_t kLiveStepRecords = 4096;  // ~1 to 3 ms of the state thread
  static constexpr size_t kLivePieceBytes = 1 << 20;
  bool live_steps_ = false;
  jute::Writer live_piece_;
  std::unique_ptr<LiveSnapshotFile> live_file_;
  // State thread: the index of the listener's last snapshot point (a live snapshot's start, a
  // restore, a delta written), 0 if none. A delta is appended only to a stored snapshot at this
  // index: Raft's state at an index is the same everywhere, so that file holds the point's state.
  uint64_t point_index_ = 0;
  // A delta is appended when the appended bytes stay at most half of what was written whole (a
  // restart reads them all).

  // Raft thread: counters copied into the figures at each refresh.
  uint64_t leader_changes_ = 0;
  uint64_t proposals_ = 0;
  uint64_t proposal_batches_ = 0;
  uint64_t read_index_rounds_ = 0;
  // Ensembles: the current spell without a leader (steady ms it began), and the figures of all.
  bool looking_ = true;
  int64_t looking_since_ms_ = 0;
  uint64_t looking_count_ = 0;
  uint64_t elections_ = 0;
  uint64_t election_ms_total_ = 0;
  std::vector<uint64_t> election_ms_buckets_;

  mutable std::mutex figures_mu_;
  Figures figures_;
  ConsensusFigures snapshots_;  // only its snapshot fields are used
};

}  // namespace zkraft::server
