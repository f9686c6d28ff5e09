#pragma once
// RaftCore: the Raft consensus algorithm as a pure, deterministic state machine.
//
// It owns no threads, sockets, clocks, disks or random sources: time arrives as tick(), the
// network as step(message), randomness from the injected RandomSource, and everything the
// caller must do comes out as a Ready batch (see consensus/ready.h for the contract). Given the
// same inputs it produces the same outputs, which is what the simulation tests rely on.
//
// Features: randomized election timeout in [T, 2T); PreVote; CheckQuorum with a follower lease;
// the leader appends an empty entry on election and commits only entries of its own term by
// counting; fast backtracking; pipelined appends (window + byte cap); chunked snapshots; log
// compaction; applied entries evicted from memory beyond a byte budget and read back from
// storage for a follower that needs them (take_entry_loads); single-server membership changes and learners (see conf_change.h: a configuration
// takes effect when appended); leadership transfer (TimeoutNow); ReadIndex.
//
// Not thread-safe: call it from one thread/strand.

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "consensus/conf_change.h"
#include "consensus/messages.h"
#include "consensus/progress.h"
#include "consensus/raft_config.h"
#include "consensus/raft_log.h"
#include "consensus/raft_status.h"
#include "consensus/read_index_queue.h"
#include "consensus/ready.h"
#include "consensus/types.h"

namespace zkraft::consensus {

enum class RaftError : uint8_t {
  kOk = 0,
  kNotLeader,            // see ProposeResult::leader for a hint (0: unknown)
  kTransferInProgress,   // leadership is being handed over; retry on the new leader
  kConfChangePending,    // a membership change is not committed yet (or the leader has not
                         // committed an entry of its term yet)
  kInvalidConfChange,    // makes no sense for the current membership
  kInvalidArgument,
};
const char* raft_error_name(RaftError e);

struct ProposeResult {
  RaftError error = RaftError::kOk;
  NodeId leader = 0;  // leader hint when error == kNotLeader
  Index index = 0;    // where the entry was appended (when ok)
  Term term = 0;
  bool ok() const { return error == RaftError::kOk; }
};

class RaftCore {
 public:
  RaftCore(const RaftConfig& config, RecoveredState recovered, RandomSource random);

  // ---- inputs ----
  void tick();
  void step(const Message& m);
  // Leader only: appends `data` as a new entry. Replication starts with the next ready(), so
  // proposals made between two Ready batches share append messages.
  ProposeResult propose(std::string data);
  // Leader only: appends a single-server membership change, in effect at once on the leader
  // (and on each follower when appended). Refused while another change is uncommitted or the
  // leader has not committed an entry of its term yet (kConfChangePending). A leader that
  // removes itself keeps leading until the change commits, then steps down.
  ProposeResult propose_conf_change(const ConfChange& cc);
  // Asks for a linearizable read point. On the leader the result comes as a ReadState once a
  // quorum confirmed leadership; a follower forwards it to the leader. Lost requests are not
  // retried: the caller times out and asks again. kNotLeader if no leader is known.
  RaftError read_index(uint64_t context);
  // Leader only: brings voter `to` up to date, then tells it to campaign at once (TimeoutNow).
  // Proposals are refused meanwhile (kTransferInProgress); the attempt is dropped after one
  // election timeout if `to` did not take over.
  RaftError transfer_leadership(NodeId to);
  // The transport saw the connection to the leader break: start a pre-vote now (the lowest-id
  // follower at once, others staggered by two ticks each, to avoid split votes when all notice)
  // instead of waiting out the election timeout; also stop honouring the leader's lease here.
  // Safe: peers that still hear the leader refuse the pre-vote (lease).
  void broken_leader_connection();
  // The configuration's only voter has nobody to wait for: if that is this server, it campaigns
  // now instead of after an election timeout (etcd leaves this to its user, as Campaign()).
  // No-op otherwise, and for a leader. The driver calls it once, at start.
  void campaign_if_sole_voter();
  // The application took a snapshot of its state at `index` (<= applied). The core keeps the
  // bytes to send to followers that fell behind compaction. Returns the meta to persist with
  // it. If the returned meta's index is not `index`, the snapshot was refused and the caller
  // discards it: it is not newer than the latest one, is beyond the applied index, or fell
  // behind the log's start (a leader's snapshot was installed meanwhile).
  SnapshotMeta snapshot_taken(Index index, SnapshotBytes data);
  SnapshotMeta snapshot_taken(Index index, std::string data);  // for tests: wraps the bytes
  // As snapshot_taken, for a snapshot of `size` bytes the application wrote to disk itself: the
  // core holds no bytes of it (as after drop_snapshot_bytes) and asks for them when a follower
  // needs them, which the driver answers once the snapshot is stored.
  SnapshotMeta snapshot_taken_on_disk(Index index, uint64_t size);
  // The latest snapshot's bytes need not stay in memory (a 1,000,000-znode tree is ~170 MB):
  // once the driver has them on disk it may drop them, and the core asks for them back only
  // when it must stream them to a follower. drop_snapshot_bytes() drops them unless a follower
  // is being sent the snapshot (true if dropped or already gone). wants_snapshot_bytes(): a
  // chunk could not be sent for want of them; the driver loads the stored snapshot and hands it
  // over with snapshot_bytes_loaded(), which resumes every transfer (bytes of any other snapshot
  // are ignored, and the core keeps asking).
  bool drop_snapshot_bytes();
  bool wants_snapshot_bytes() const { return snapshot_bytes_wanted_ && !snapshot_data_; }
  void snapshot_bytes_loaded(const SnapshotMeta& meta, SnapshotBytes data);
  const SnapshotMeta& snapshot_meta() const { return snapshot_meta_; }
  // Entries a follower needs that are no longer in memory (RaftConfig::max_log_memory_bytes):
  // the caller reads stored entries lo..hi (at least one, then up to max_bytes of them) and
  // hands them over with entries_loaded, in any order with other inputs; none (an error, or they
  // were compacted meanwhile) is an answer too. Until then no append goes to that follower.
  struct EntryLoad {
    NodeId to = 0;
    Index lo = 0;
    Index hi = 0;
    size_t max_bytes = 0;
    bool operator==(const EntryLoad&) const = default;
  };
  std::vector<EntryLoad> take_entry_loads() { return std::exchange(entry_loads_, {}); }
  void entries_loaded(NodeId to, Index lo, std::vector<Entry> entries);
  // Drops log entries <= through (through <= the latest snapshot index). The caller decides how
  // long a tail to keep so that slow followers can still catch up without a snapshot.
  void compact(Index through);

  // ---- outputs ----
  bool has_ready() const;
  Ready ready();
  // The caller finished the Ready: persisted, sent, applied.
  void advance(const Ready& rd);

  // ---- introspection ----
  RaftStatus status() const;
  // Ticks since this server last knew it was in contact with a quorum in its current term: a
  // leader, the age of the newest message heard from each voter (itself: 0), taken at the
  // quorum-th smallest; a follower or learner, the age of the last message from its leader;
  // kNoQuorumContact when it has neither (candidate, no leader known). The server stops
  // answering its clients when this grows past a bound (see server/serving_gate.h).
  static constexpr uint64_t kNoQuorumContact = UINT64_MAX;
  uint64_t quorum_contact_age_ticks() const;
  Role role() const { return role_; }
  Term term() const { return term_; }
  NodeId leader() const { return lead_; }
  NodeId id() const { return id_; }
  Index commit_index() const { return commit_; }
  Index applied_index() const { return applied_; }
  const RaftLog& log() const { return log_; }
  const Membership& membership() const { return membership_; }

 private:
  enum class CampaignKind { kPreElection, kElection, kTransfer };

  // role transitions
  void become_follower(Term term, NodeId lead);
  void follower_keeping_timer(Term term);
  void become_pre_candidate();
  void become_candidate();
  void become_leader();
  void reset(Term term);
  void campaign(CampaignKind kind);

  // per-role message handling
  void step_leader(const Message& m);
  void step_candidate(const Message& m);
  void step_follower(const Message& m);
  void handle_vote_request(const Message& m);
  void handle_append(const Message& m);
  void handle_heartbeat(const Message& m);
  void handle_snapshot_chunk(const Message& m);
  void handle_append_response(const Message& m);
  void handle_heartbeat_response(const Message& m);
  void handle_leader_read_index(uint64_t context, NodeId from);
  void release_read(const ReadIndexQueue::Request& r);

  // leader replication
  bool send_append(NodeId to, bool send_if_empty = true);
  // Sends `entries` (consecutive, starting at pr.next; may be empty) after pr.next - 1.
  void send_entries(NodeId to, Progress& pr, Term prev_term, std::vector<Entry> entries);
  // Evicts applied, durable entries beyond RaftConfig::max_log_memory_bytes.
  void evict_log_memory();
  // Sends chunks of the snapshot up to the window (RaftConfig::max_snapshot_inflight_chunks)
  // ahead of what the follower confirmed; `resend`: starting again from what it confirmed.
  void send_snapshot_chunks(NodeId to, bool resend);
  void broadcast_append();
  void broadcast_heartbeat(uint64_t context);
  bool maybe_commit();
  bool committed_in_current_term() const;
  bool quorum_active();
  void after_commit_advanced();

  // helpers
  void send(Message m);
  void tick_election();
  void tick_heartbeat();
  bool promotable() const;
  bool in_lease() const;
  size_t quorum() const { return membership_.voters.size() / 2 + 1; }
  void commit_to(Index index);
  void append_from_leader(const std::vector<Entry>& entries);
  void refresh_membership();
  Membership membership_through(Index index) const;
  // snapshot_taken's rules: whether a snapshot at `index` replaces the current one (then
  // snapshot_meta_ describes it, and its bytes are the caller's to set).
  bool accept_snapshot(Index index);
  void sync_progress_with_membership();
  HardState hard_state() const { return HardState{term_, vote_, commit_}; }
  Index self_persisted_index() const;

  NodeId id_;
  RaftConfig cfg_;
  RandomSource random_;

  Term term_ = 0;
  NodeId vote_ = 0;
  NodeId lead_ = 0;
  Role role_ = Role::kFollower;
  RaftLog log_;
  Index commit_ = 0;
  Index applied_ = 0;

  // Membership in effect: base_membership_ (as of the log's compaction point) plus every
  // kConfChange entry in the log.
  Membership base_membership_;
  Membership membership_;
  Index pending_conf_index_ = 0;  // leader: last conf change it appended

  std::map<NodeId, Progress> progress_;  // leader only: every member except self
  std::map<NodeId, bool> votes_;          // (pre)candidate: answers received

  int election_elapsed_ = 0;
  int heartbeat_elapsed_ = 0;
  uint64_t ticks_ = 0;                    // every tick() since construction
  std::map<NodeId, uint64_t> heard_tick_;  // peer -> ticks_ of its last message in term_
  int randomized_election_timeout_ = 0;

  NodeId lead_transferee_ = 0;
  int fast_campaign_ticks_ = 0;  // staggered campaign after broken_leader_connection()

  ReadIndexQueue reads_;
  std::vector<uint64_t> reads_waiting_for_commit_;  // leader: local requests before first commit
  std::vector<std::pair<uint64_t, NodeId>> remote_reads_waiting_for_commit_;

  // Latest snapshot this node can send (taken locally or installed from the leader).
  SnapshotMeta snapshot_meta_;
  SnapshotBytes snapshot_data_;  // null: on disk only (see drop_snapshot_bytes)
  uint64_t snapshot_size_ = 0;   // of snapshot_data_, also while dropped
  bool snapshot_bytes_wanted_ = false;
  // A snapshot received from the leader, to be handed out in the next Ready.
  std::optional<SnapshotMeta> pending_snapshot_;
  uint64_t pending_snapshot_size_ = 0;
  bool snapshot_unpersisted_ = false;
  // The transfer of a leader's snapshot in progress, and how many of its bytes arrived; the
  // bytes themselves only pass through, as chunks for the next Ready to store.
  std::optional<SnapshotMeta> incoming_snapshot_;
  uint64_t incoming_snapshot_size_ = 0;
  std::vector<SnapshotChunk> incoming_chunks_;

  std::vector<EntryLoad> entry_loads_;  // asked for since the last take_entry_loads()

  bool append_pending_ = false;  // proposals appended since the last Ready, not yet sent
  std::vector<Message> msgs_now_;
  std::vector<Message> msgs_after_persist_;
  std::vector<ReadState> read_states_;
  HardState prev_hard_state_;
  bool ready_outstanding_ = false;
};

}  // namespace zkraft::consensus
