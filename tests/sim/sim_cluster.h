#pragma once
// A deterministic discrete-event simulation of a Raft cluster: N nodes, each the shipped
// RaftDriver (consensus/raft_driver.h) over a RaftCore, wired to a virtual clock, a simulated
// network (delay, loss, duplication, reordering, symmetric and asymmetric partitions), a
// simulated disk (SimStorage: latency; a crash loses what is not on disk yet and may tear the
// write under way) and a hashing state machine (SimApp, whose snapshot answers may be delayed).
// Each node's executor is the event queue; its observer feeds the SafetyChecker.
//
// Besides the SafetyChecker's properties the cluster checks durability against each node's
// simulated disk: a granted vote is on disk before it leaves (term and vote), an append
// acknowledgement in the disk's current term only covers entries on disk, and an entry is on disk
// before it is applied. So a driver that acknowledges or applies before the write completes fails
// at once, without waiting for a crash to turn it into lost data.
//
// Everything random comes from one seeded SimRng and events are ordered by (time, sequence), so
// the same seed and the same calls produce the same run; trace_hash() fingerprints the run.
// The SafetyChecker runs after every event. Scenario tests drive it by hand (partition, crash,
// propose, run_until); run_random_seed() drives it from the seed alone.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "consensus/raft_core.h"
#include "consensus/raft_driver.h"
#include "tests/sim/safety_checker.h"
#include "tests/sim/sim_app.h"
#include "tests/sim/sim_rng.h"
#include "tests/sim/sim_storage.h"

namespace zkraft::sim {

using consensus::NodeId;

struct SimOptions {
  uint64_t seed = 1;
  int voters = 3;        // nodes 1..voters start as the voting membership
  int spare_nodes = 0;   // nodes voters+1.. exist (running, empty) and may be added later
  int tick_ms = 10;
  int tick_skew_ms = 0;  // each node ticks every tick_ms +- up to this (clock rate drift)
  consensus::RaftConfig raft;  // id and initial_membership are filled in per node
  // Network.
  uint64_t min_delay_ms = 1;
  uint64_t max_delay_ms = 10;
  uint64_t loss_per_mille = 0;
  uint64_t dup_per_mille = 0;
  uint64_t slow_per_mille = 0;  // messages delayed up to 10x max_delay (reordering)
  // Disk.
  uint64_t min_disk_ms = 1;
  uint64_t max_disk_ms = 5;
  uint64_t tear_per_mille = 500;  // on crash, chance that a prefix of the in-flight write lands
  // Snapshots: take one when this many entries were applied since the last; 0 = never.
  uint64_t snapshot_every = 0;
  uint64_t keep_log_tail = 5;
  // The state machine answers a snapshot request after 0..this many ms (0: at once, through
  // RaftApplication's synchronous default).
  uint64_t max_snapshot_delay_ms = 0;
  bool trace = false;  // print every event
};

struct NodeStats {
  uint64_t applied_entries = 0;
  uint64_t snapshots_restored = 0;
};

class SimCluster {
 public:
  explicit SimCluster(const SimOptions& options);

  // ---- time ----
  uint64_t now() const { return now_; }
  void run_for(uint64_t ms);
  // Runs until pred() holds (checked after each event) or max_ms passed; returns pred().
  bool run_until(const std::function<bool()>& pred, uint64_t max_ms);

  // ---- faults ----
  void block(NodeId from, NodeId to);    // one direction
  void unblock(NodeId from, NodeId to);
  void isolate(NodeId id);               // both directions to everyone
  void partition(const std::vector<std::vector<NodeId>>& groups);
  void heal();                           // all links up
  void crash(NodeId id);
  void restart(NodeId id);
  bool is_up(NodeId id) const { return nodes_.at(id).up; }
  // Whether the node has a write in flight (a crash now loses or tears it).
  bool write_in_flight(NodeId id) const { return nodes_.at(id).up && nodes_.at(id).storage.busy(); }
  void set_loss(uint64_t per_mille) { opt_.loss_per_mille = per_mille; }
  void set_dup(uint64_t per_mille) { opt_.dup_per_mille = per_mille; }
  void set_slow(uint64_t per_mille) { opt_.slow_per_mille = per_mille; }
  // Messages for which `drop` returns true are lost (checked at send and at delivery, like a
  // blocked link). Pass nullptr to remove.
  void set_drop_filter(std::function<bool(const consensus::Message&)> drop) { drop_ = std::move(drop); }

  // ---- client actions (as the application would call the driver: each schedules a pump) ----
  consensus::ProposeResult propose(NodeId id, const std::string& data);
  consensus::ProposeResult propose_conf_change(NodeId id, const consensus::ConfChange& cc);
  consensus::RaftError transfer_leadership(NodeId id, NodeId to);
  consensus::RaftError read_index(NodeId id, uint64_t context);
  void broken_leader_connection(NodeId id);
  // Asks node `id`'s driver for a snapshot now (regardless of snapshot_every); it is stored and
  // the log compacted once the state machine answers.
  void take_snapshot(NodeId id, uint64_t keep_tail);

  // ---- observation ----
  std::vector<NodeId> node_ids() const;
  const consensus::RaftCore& core(NodeId id) const { return nodes_.at(id).driver->core(); }
  // The up node that is leader with the highest term, or 0.
  NodeId leader() const;
  consensus::Index applied(NodeId id) const { return nodes_.at(id).applied; }
  // Highest commit index any running node knows (a true lower bound of the cluster's commit).
  consensus::Index known_commit() const;
  const std::vector<consensus::ReadState>& read_states(NodeId id) const { return nodes_.at(id).app.read_states; }
  // Data of the entries applied by node id, in order (entries restored from a snapshot are not
  // listed; see stats().snapshots_restored).
  const std::vector<std::string>& applied_data(NodeId id) const { return nodes_.at(id).app.applied_data; }
  const NodeStats& stats(NodeId id) const { return nodes_.at(id).stats; }
  const SafetyChecker& checker() const { return checker_; }
  // One line per node: up/down, role, term, vote, leader, log range, commit, applied, membership.
  std::string describe() const;
  bool ok() const { return checker_.ok(); }
  uint64_t trace_hash() const { return trace_hash_; }
  // Coverage counters ("recv.Append", "crash", "snapshot.restored", "read_state", ...), to show
  // that a run exercised what it claims to.
  // Includes the storages' "snapshot.own_beside" (own snapshots stored beside the log) and
  // "snapshot.own_overtaken" (of those, published after a later operation completed).
  std::map<std::string, uint64_t> counters() const;
  uint64_t events() const { return events_; }
  SimRng& rng() { return rng_; }

 private:
  // One node's transport (the sim network), executor (the event queue, tagged with the node's
  // epoch so that a crash voids what was posted before it) and driver observer (the checker).
  class NodeIo final : public consensus::RaftDriverTransport,
                       public consensus::RaftDriverExecutor,
                       public consensus::RaftDriverObserver {
   public:
    NodeIo(SimCluster& c, NodeId id) : c_(c), id_(id) {}
    void send(const consensus::Message& m) override;
    void post(std::function<void()> task) override;
    void on_ready(const consensus::Ready& rd) override;
    void on_applied(const consensus::Entry& e) override;
    void on_snapshot_restored(const consensus::SnapshotMeta& meta, size_t bytes) override;
    void on_membership_applied(consensus::Index index, const consensus::Membership& m) override;
    void on_read_state(const consensus::ReadState& rs) override;
    void on_snapshot_taken(const consensus::SnapshotMeta& meta, size_t bytes, consensus::Index through) override;
    void on_snapshot_loaded(const consensus::SnapshotMeta& meta, size_t bytes) override;

   private:
    SimCluster& c_;
    NodeId id_;
  };
  struct Node {
    NodeId id = 0;
    bool up = true;
    uint64_t epoch = 0;  // bumps on crash: events scheduled before it are void
    uint64_t tick_interval = 10;
    SimRng rng{0};
    SimStorage storage;  // its durable part survives a crash
    SimApp app;          // reset on restart (its applied_data record is kept)
    std::unique_ptr<NodeIo> io;
    std::unique_ptr<consensus::RaftDriver> driver;  // null while down
    consensus::Index applied = 0;  // last index applied or restored, as the observer saw it
    std::map<uint64_t, consensus::Index> read_floor;  // context -> commit known when asked
    NodeStats stats;
  };
  enum class EventKind { kTick, kDeliver, kDiskDone, kTask };
  struct Event {
    uint64_t time;
    uint64_t seq;
    EventKind kind;
    NodeId node;
    uint64_t epoch;
    std::string payload;         // encoded message for kDeliver
    std::function<void()> task;  // for kTask
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  void schedule(uint64_t at, EventKind kind, NodeId node, uint64_t epoch, std::string payload = {},
                std::function<void()> task = nullptr);
  bool step_one();  // runs the next event; false if none
  void handle(const Event& ev);
  void start_node(Node& n);
  void send(const consensus::Message& m);
  // Durability: what node n promises (a granted vote, an append acknowledgement) is on its disk.
  void check_promise(const Node& n, const consensus::Message& m);
  void after_event();
  void trace(const std::string& line);
  std::map<NodeId, const consensus::RaftCore*> current_leaders() const;

  SimOptions opt_;
  SimRng rng_;
  uint64_t now_ = 0;
  uint64_t seq_ = 0;
  uint64_t events_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  std::map<NodeId, Node> nodes_;
  std::set<std::pair<NodeId, NodeId>> blocked_;
  std::function<bool(const consensus::Message&)> drop_;
  consensus::Membership initial_;
  SafetyChecker checker_;
  uint64_t trace_hash_ = 1469598103934665603ull;
  std::map<std::string, uint64_t> counters_;
  std::set<consensus::Term> leader_terms_;
};

// Outcome of one randomized run.
struct SeedResult {
  uint64_t seed = 0;
  bool ok = false;
  std::string failure;  // safety violation or liveness failure
  uint64_t trace_hash = 0;
  uint64_t events = 0;
  uint64_t committed = 0;
  std::map<std::string, uint64_t> counters;
  uint64_t recovery_ms = 0;  // from healing until a leader committed a new entry
};

struct RandomRunOptions {
  uint64_t fault_ms = 6000;     // random faults during this long
  uint64_t liveness_ms = 8000;  // after healing, a leader must commit within this long
  bool trace = false;
};

// Derives a cluster (3 or 5 voters, maybe spare nodes, snapshots) and a fault schedule from the
// seed, runs it, heals everything, and checks that the cluster makes progress again.
SeedResult run_random_seed(uint64_t seed, const RandomRunOptions& options = RandomRunOptions{});

}  // namespace zkraft::sim
