#pragma once
// The RaftDriver tests' fakes: an executor the test runs, a storage whose completions the test
// releases, a transport that records, an application that records what it was called with, and
// a Harness that wires one driver to them.

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "consensus/raft_driver.h"

namespace zkraft::consensus::driver_test {

class ManualExecutor : public RaftDriverExecutor {
 public:
  void post(std::function<void()> task) override {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  // Runs tasks (including ones they post) until none is left; returns how many ran.
  size_t run() {
    size_t n = 0;
    while (run_one()) ++n;
    return n;
  }
  // Runs the oldest task only; false if there was none.
  bool run_one() {
    std::function<void()> t;
    {
      std::lock_guard lock(mu_);
      if (tasks_.empty()) return false;
      t = std::move(tasks_.front());
      tasks_.pop_front();
    }
    t();
    return true;
  }
  size_t pending() {
    std::lock_guard lock(mu_);
    return tasks_.size();
  }

 private:
  std::mutex mu_;
  std::deque<std::function<void()>> tasks_;
};

class ManualStorage : public RaftDriverStorage {
 public:
  struct Op {
    bool is_snapshot = false;
    std::vector<Entry> entries;
    std::optional<HardState> hard_state;
    bool need_sync = true;
    SnapshotMeta meta;
    std::string data;
    Index compact_through = 0;
    bool own = false;  // store_own_snapshot
    bool own_file = false;  // store_own_snapshot_file
    std::optional<SnapshotChunk> chunk;  // store_snapshot_chunk
    Done done;
  };
  void write(std::vector<Entry> entries, std::optional<HardState> hs, bool need_sync, Done done) override {
    Op op;
    op.entries = std::move(entries);
    op.hard_state = hs;
    op.need_sync = need_sync;
    op.done = std::move(done);
    ops.push_back(std::move(op));
  }
  void store_snapshot_chunk(SnapshotChunk chunk, Done done) override {
    Op op;
    op.chunk = std::move(chunk);
    op.done = std::move(done);
    ops.push_back(std::move(op));
  }
  void store_snapshot(const SnapshotMeta& meta, Done done) override {
    Op op;
    op.is_snapshot = true;
    op.meta = meta;
    op.done = std::move(done);
    ops.push_back(std::move(op));
  }
  // In order with the writes here; the reordering the real storage allows is the simulation's.
  void store_own_snapshot(const SnapshotMeta& meta, SnapshotBytes data, Index compact_through, Done done) override {
    Op op;
    op.is_snapshot = true;
    op.own = true;
    op.meta = meta;
    op.data = std::string(data->bytes());
    op.compact_through = compact_through;
    op.done = std::move(done);
    ops.push_back(std::move(op));
  }
  // With offer_files, a file for each snapshot (own_snapshot_file), naming the snapshot stored
  // last (as the real storage does: only once its store completed); what the application
  // answers about it is recorded, nothing is written.
  std::optional<SnapshotFileTarget> own_snapshot_file() override {
    if (!offer_files) return std::nullopt;
    SnapshotFileTarget t;
    t.token = ++file_tokens;
    t.path = "snapshot-" + std::to_string(t.token);
    t.stored_index = stored_file_index;
    return t;
  }
  void store_own_snapshot_file(const SnapshotMeta& meta, const SnapshotFileWritten& file, Index compact_through,
                               Done done) override {
    (void)file;
    Op op;
    op.is_snapshot = true;
    op.own = true;
    op.own_file = true;
    op.meta = meta;
    op.compact_through = compact_through;
    op.done = std::move(done);
    ops.push_back(std::move(op));
  }
  void discard_own_snapshot_file(const SnapshotFileWritten& file) override { discarded.push_back(file.token); }
  // Reads back are answered by hand (answer_load), out of order with the writes.
  void load_snapshot(Loaded done) override { loads.push_back(std::move(done)); }
  // Completes the oldest pending operation (as the disk would, in order).
  Op complete_one(Status s = Status::ok()) {
    Op op = std::move(ops.front());
    ops.pop_front();
    done_ops.push_back(op);
    if (op.own_file && s.is_ok()) stored_file_index = op.meta.index;
    if (op.done) op.done(std::move(s));
    return op;
  }
  void complete_all() {
    while (!ops.empty()) complete_one();
  }

  std::deque<Op> ops;
  std::vector<Op> done_ops;
  std::vector<Loaded> loads;
  bool offer_files = false;
  Index stored_file_index = 0;
  uint64_t file_tokens = 0;
  std::vector<uint64_t> discarded;
};

class RecordingTransport : public RaftDriverTransport {
 public:
  void send(const Message& m) override { sent.push_back(m); }
  std::vector<Message> sent;
};

class TestApp : public RaftApplication {
 public:
  void apply(const Entry& e) override {
    check_not_reentered();
    applied.push_back(e);
  }
  std::string take_snapshot() override {
    ++taken;
    return "state@" + std::to_string(applied.empty() ? 0 : applied.back().index);
  }
  void request_snapshot(Index index, SnapshotReply reply) override {
    if (!hold_snapshot_requests) {
      RaftApplication::request_snapshot(index, std::move(reply));
      return;
    }
    requested.push_back(index);
    replies.push_back(std::move(reply));
  }
  void request_snapshot_file(Index index, const SnapshotFileTarget& target, SnapshotReply reply,
                             SnapshotFileReply file_reply) override {
    if (!hold_snapshot_requests) {
      RaftApplication::request_snapshot_file(index, target, std::move(reply), std::move(file_reply));
      return;
    }
    requested.push_back(index);
    file_targets.push_back(target);
    file_replies.push_back(std::move(file_reply));
  }
  void restore_snapshot(const SnapshotMeta& meta, SnapshotBytes data) override {
    restored.push_back(meta.index);
    restored_bytes.emplace_back(data->bytes());
  }
  void on_leader_change(NodeId leader, Term, bool) override {
    check_not_reentered();
    leaders.push_back(leader);
  }
  void on_read_state(uint64_t context, Index index) override { read_states.push_back({context, index}); }
  void on_conf_change_applied(Index index) override {
    check_not_reentered();
    conf_changes.push_back(index);
  }
  void on_fatal_error(const std::string& what) override { fatal.push_back(what); }

  void check_not_reentered() {
    if (in_call) ADD_FAILURE() << "application callback inside an application call";
  }

  bool in_call = false;
  bool hold_snapshot_requests = false;
  std::vector<Entry> applied;
  std::vector<Index> restored;
  std::vector<std::string> restored_bytes;
  std::vector<NodeId> leaders;
  std::vector<ReadState> read_states;
  std::vector<std::string> fatal;
  std::vector<Index> requested;
  std::vector<Index> conf_changes;
  std::vector<SnapshotReply> replies;
  std::vector<SnapshotFileReply> file_replies;
  std::vector<SnapshotFileTarget> file_targets;
  int taken = 0;
};

class CountingObserver : public RaftDriverObserver {
 public:
  void on_ready(const Ready&) override { ++readies; }
  void on_snapshot_taken(const SnapshotMeta& meta, size_t, Index through) override {
    taken_at.push_back(meta.index);
    compacted_through.push_back(through);
  }
  void on_fatal_error(const std::string& what) override { fatal.push_back(what); }
  int readies = 0;
  std::vector<Index> taken_at, compacted_through;
  std::vector<std::string> fatal;
};

struct Harness {
  explicit Harness(std::vector<NodeId> voters = {1}, RaftDriverOptions options = {}, NodeId self = 1) {
    RaftConfig cfg;
    cfg.id = self;
    cfg.initial_membership.voters = std::move(voters);
    cfg.election_ticks = 10;
    cfg.heartbeat_ticks = 1;
    driver = std::make_unique<RaftDriver>(cfg, RecoveredState{}, [] { return uint64_t{0}; }, options,
                                          RaftDriver::Io{storage, transport, executor}, app, &observer);
    driver->start();
  }

  // Ticks, runs the executor and lets the disk finish everything until this node leads.
  void elect() {
    for (int i = 0; i < 100 && driver->core().role() != Role::kLeader; ++i) {
      driver->tick();
      settle();
    }
    ASSERT_EQ(driver->core().role(), Role::kLeader);
  }
  void settle() {
    for (int i = 0; i < 100; ++i) {
      executor.run();
      if (storage.ops.empty()) break;
      storage.complete_all();
    }
    executor.run();
  }
  std::vector<std::string> applied_data() const {
    std::vector<std::string> out;
    for (const Entry& e : app.applied) {
      if (!e.data.empty()) out.push_back(e.data);
    }
    return out;
  }

  ManualExecutor executor;
  ManualStorage storage;
  RecordingTransport transport;
  TestApp app;
  CountingObserver observer;
  std::unique_ptr<RaftDriver> driver;
};

inline Message append_from_leader(NodeId leader, Term term, Index prev, std::vector<std::string> data, Index commit) {
  Message m;
  m.type = MessageType::kAppend;
  m.from = leader;
  m.to = 1;
  m.term = term;
  m.index = prev;
  m.log_term = prev == 0 ? 0 : term;
  for (size_t i = 0; i < data.size(); ++i) {
    Entry e;
    e.index = prev + 1 + i;
    e.term = term;
    e.data = data[i];
    m.entries.push_back(e);
  }
  m.commit = commit;
  return m;
}

}  // namespace zkraft::consensus::driver_test
