// RaftDriver unit tests: the driver over hand-operated fakes (an executor the test runs, a
// storage whose completions the test releases, a transport that records), so each rule of the
// Ready contract is checked at the exact moment it matters. The simulation (tests/sim) checks the
// same driver under random faults.

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

namespace zkraft::consensus {
namespace {

class ManualExecutor : public RaftDriverExecutor {
 public:
  void post(std::function<void()> task) override {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  // Runs tasks (including ones they post) until none is left; returns how many ran.
  size_t run() {
    size_t n = 0;
    while (true) {
      std::function<void()> t;
      {
        std::lock_guard lock(mu_);
        if (tasks_.empty()) return n;
        t = std::move(tasks_.front());
        tasks_.pop_front();
      }
      t();
      ++n;
    }
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
  // Reads back are answered by hand (answer_load), out of order with the writes.
  void load_snapshot(Loaded done) override { loads.push_back(std::move(done)); }
  // Completes the oldest pending operation (as the disk would, in order).
  Op complete_one(Status s = Status::ok()) {
    Op op = std::move(ops.front());
    ops.pop_front();
    done_ops.push_back(op);
    if (op.done) op.done(std::move(s));
    return op;
  }
  void complete_all() {
    while (!ops.empty()) complete_one();
  }

  std::deque<Op> ops;
  std::vector<Op> done_ops;
  std::vector<Loaded> loads;
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

Message append_from_leader(NodeId leader, Term term, Index prev, std::vector<std::string> data, Index commit) {
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

TEST(RaftDriver, FollowerAcknowledgesAndAppliesOnlyAfterTheDurableWrite) {
  Harness h({1, 2, 3});
  h.executor.run();
  h.driver->step(append_from_leader(2, 1, 0, {"a", "b"}, 2));
  // The entries (and the new term) are on their way to the disk: nothing promised, nothing applied.
  ASSERT_EQ(h.storage.ops.size(), 1u);
  EXPECT_TRUE(h.storage.ops.front().need_sync);
  EXPECT_EQ(h.storage.ops.front().entries.size(), 2u);
  EXPECT_TRUE(h.transport.sent.empty());
  EXPECT_TRUE(h.app.applied.empty());
  // Even once the completion arrived (on the storage's thread), the driver acts only on its executor.
  h.storage.complete_one();
  EXPECT_TRUE(h.transport.sent.empty());
  h.executor.run();
  ASSERT_EQ(h.transport.sent.size(), 1u);
  EXPECT_EQ(h.transport.sent[0].type, MessageType::kAppendResponse);
  EXPECT_EQ(h.transport.sent[0].index, 2u);
  EXPECT_EQ(h.applied_data(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(h.driver->applied_index(), 2u);
}

TEST(RaftDriver, CommitOnlyReadyIsWrittenWithoutSyncAndFinishedAtOnce) {
  Harness h({1, 2, 3});
  h.executor.run();
  h.driver->step(append_from_leader(2, 1, 0, {"a"}, 0));
  h.settle();
  EXPECT_TRUE(h.app.applied.empty());
  // A heartbeat moves the commit index only.
  Message hb;
  hb.type = MessageType::kHeartbeat;
  hb.from = 2;
  hb.to = 1;
  hb.term = 1;
  hb.commit = 1;
  h.driver->step(hb);
  ASSERT_EQ(h.storage.ops.size(), 1u);
  EXPECT_FALSE(h.storage.ops.front().need_sync);
  EXPECT_TRUE(h.storage.ops.front().entries.empty());
  // Applied without waiting for that write.
  EXPECT_EQ(h.applied_data(), (std::vector<std::string>{"a"}));
}

TEST(RaftDriver, OneReadyInFlightWhileTheDiskIsBusy) {
  Harness h({1, 2, 3});
  h.executor.run();
  h.driver->step(append_from_leader(2, 1, 0, {"a"}, 0));
  ASSERT_EQ(h.storage.ops.size(), 1u);
  const int readies = h.observer.readies;
  // More arrives while the first write runs: it waits for the next Ready.
  h.driver->step(append_from_leader(2, 1, 1, {"b"}, 0));
  h.driver->tick();
  EXPECT_EQ(h.storage.ops.size(), 1u);
  EXPECT_EQ(h.observer.readies, readies);
  h.storage.complete_one();
  h.executor.run();
  ASSERT_EQ(h.storage.ops.size(), 1u);
  EXPECT_EQ(h.observer.readies, readies + 1);
  ASSERT_EQ(h.storage.ops.front().entries.size(), 1u);
  EXPECT_EQ(h.storage.ops.front().entries[0].data, "b");
}

TEST(RaftDriver, CommittedEntriesOnDiskApplyBeforeTheNextWriteThoseInItAfterIt) {
  Harness h({1, 2, 3});
  h.executor.run();
  h.driver->step(append_from_leader(2, 1, 0, {"a"}, 0));
  h.settle();
  // "a" is on disk; the leader commits it and sends "b": "a" applies before b's write completes.
  h.driver->step(append_from_leader(2, 1, 1, {"b"}, 2));
  ASSERT_EQ(h.storage.ops.size(), 1u);
  EXPECT_EQ(h.applied_data(), (std::vector<std::string>{"a"}));
  h.storage.complete_one();
  h.executor.run();
  EXPECT_EQ(h.applied_data(), (std::vector<std::string>{"a", "b"}));
}

// A snapshot is labelled with exactly the index of the state it holds. While an entry applied
// early waits for its Ready, the core's applied index is behind the application's: a snapshot
// asked for then waits for the Ready (before, it was labelled with the core's lower index, and a
// restore replayed an entry the state already held: sim seed 5410).
TEST(RaftDriver, SnapshotAskedWhileAnEarlyAppliedEntryWaitsIsTakenAtTheApplicationsIndex) {
  Harness h({1, 2, 3});
  h.app.hold_snapshot_requests = true;
  h.executor.run();
  h.driver->step(append_from_leader(2, 1, 0, {"a"}, 0));
  h.settle();
  h.driver->step(append_from_leader(2, 1, 1, {"b"}, 1));
  h.settle();
  h.driver->step(append_from_leader(2, 1, 2, {"c"}, 2));  // "b" applies early, "c" is written
  ASSERT_EQ(h.storage.ops.size(), 1u);
  ASSERT_EQ(h.app.applied.back().index, 2u);
  h.driver->snapshot_now(0);
  h.executor.run();
  EXPECT_TRUE(h.app.requested.empty());
  h.storage.complete_one();
  h.executor.run();
  ASSERT_EQ(h.app.requested.size(), 1u);
  EXPECT_EQ(h.app.requested[0], 2u);
  EXPECT_EQ(h.app.requested[0], h.app.applied.back().index);
}

// A snapshot asked for when the last entry applied is a membership change is asked at the
// change's index, and the application was told of that index first (zkraft's state thread
// failed its snapshot invariant on `csnp` right after a reconfig: it had not seen the index).
TEST(RaftDriver, AMembershipChangeIsReportedInOrderAndASnapshotAfterItIsAskedAtItsIndex) {
  Harness h;
  h.app.hold_snapshot_requests = true;
  h.elect();
  ASSERT_TRUE(h.driver->propose("x").ok());
  h.settle();
  ASSERT_TRUE(h.driver->change_membership(ConfChange{ConfChangeType::kAddLearner, 2}).ok());
  h.settle();
  ASSERT_EQ(h.app.conf_changes.size(), 1u);
  const Index change = h.app.conf_changes[0];
  EXPECT_EQ(change, h.app.applied.back().index + 1);  // after "x", before anything else
  h.driver->snapshot_now(0);
  h.settle();
  ASSERT_EQ(h.app.requested.size(), 1u);
  EXPECT_EQ(h.app.requested[0], change);
}

TEST(RaftDriver, ProposeAndReadIndexNeverCallBackInsideTheCall) {
  Harness h;
  h.elect();
  h.settle();
  const size_t applied = h.app.applied.size();
  h.app.in_call = true;
  ASSERT_TRUE(h.driver->propose("x").ok());
  ASSERT_EQ(h.driver->read_index(7), RaftError::kOk);
  h.app.in_call = false;
  EXPECT_EQ(h.app.applied.size(), applied);
  EXPECT_TRUE(h.storage.ops.empty());
  EXPECT_EQ(h.executor.pending(), 1u);  // one pump serves both calls
  h.settle();
  EXPECT_EQ(h.applied_data(), (std::vector<std::string>{"x"}));
  ASSERT_EQ(h.app.read_states.size(), 1u);
  EXPECT_EQ(h.app.read_states[0].context, 7u);
}

TEST(RaftDriver, SnapshotIsAnsweredLaterFromAnotherThreadThenStoredAndCompacted) {
  RaftDriverOptions o;
  o.snapshot_every = 3;
  o.keep_tail = 1;
  Harness h({1}, o);
  h.app.hold_snapshot_requests = true;
  h.elect();
  // The leader's no-op is entry 1: the third applied entry is e1.
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(h.app.requested.empty());
    ASSERT_TRUE(h.driver->propose("e" + std::to_string(i)).ok());
    h.settle();
  }
  ASSERT_EQ(h.app.requested.size(), 1u);
  const Index at = h.app.requested[0];
  EXPECT_EQ(at, 3u);
  EXPECT_EQ(at, h.driver->applied_index());
  // Still unanswered: nothing stored; more entries apply; no second request.
  for (int i = 2; i < 6; ++i) {
    ASSERT_TRUE(h.driver->propose("e" + std::to_string(i)).ok());
    h.settle();
  }
  EXPECT_EQ(h.app.requested.size(), 1u);
  for (const auto& op : h.storage.done_ops) EXPECT_FALSE(op.is_snapshot);
  // The state machine's thread answers (state as of `at`).
  std::thread([&] { h.app.replies[0](at, "snap@" + std::to_string(at)); }).join();
  h.executor.run();
  ASSERT_EQ(h.storage.ops.size(), 1u);
  const auto& op = h.storage.ops.front();
  ASSERT_TRUE(op.is_snapshot);
  EXPECT_TRUE(op.own);  // may be stored beside the log, behind later writes
  EXPECT_EQ(op.meta.index, at);
  EXPECT_EQ(op.data, "snap@" + std::to_string(at));
  EXPECT_EQ(op.compact_through, at - 1);
  EXPECT_EQ(h.driver->core().log().first_index(), at);  // compacted through at - 1
  EXPECT_EQ(h.observer.taken_at, (std::vector<Index>{at}));
  // Four more were applied meanwhile (>= snapshot_every after `at`): the next request follows.
  EXPECT_EQ(h.app.requested.size(), 2u);
  EXPECT_EQ(h.app.requested[1], h.driver->applied_index());
  EXPECT_TRUE(h.app.fatal.empty());
}

// Entries of 1000 bytes: entry_size 1024 each. The leader's no-op (entry 1) is 24.
std::string kilo(int i) { return std::to_string(i) + std::string(1000 - std::to_string(i).size(), '.'); }

TEST(RaftDriver, SnapshotIsAskedForOnceTheEntriesAppliedSinceTheLastHoldSnapshotBytes) {
  RaftDriverOptions o;
  o.snapshot_every = 1000;  // far away: only the bytes can ask
  o.snapshot_bytes = 3000;
  Harness h({1}, o);
  h.app.hold_snapshot_requests = true;
  h.elect();
  // 24 + 1024 + 1024 = 2072 after two entries; the third reaches 3096.
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(h.driver->propose(kilo(i)).ok());
    h.settle();
    EXPECT_TRUE(h.app.requested.empty()) << "after entry " << i;
  }
  ASSERT_TRUE(h.driver->propose(kilo(2)).ok());
  h.settle();
  ASSERT_EQ(h.app.requested.size(), 1u);
  const Index at = h.app.requested[0];
  EXPECT_EQ(at, 4u);
  EXPECT_EQ(h.driver->applied_bytes_since_snapshot(), 0u);
  // Applied while the request is outstanding: counted towards the next one, which follows the
  // answer only once those entries hold 3000 bytes again.
  ASSERT_TRUE(h.driver->propose(kilo(3)).ok());
  h.settle();
  EXPECT_EQ(h.driver->applied_bytes_since_snapshot(), 1024u);
  h.app.replies[0](at, "snap");
  h.settle();
  EXPECT_EQ(h.app.requested.size(), 1u);
  ASSERT_TRUE(h.driver->propose(kilo(4)).ok());
  h.settle();
  EXPECT_EQ(h.app.requested.size(), 1u);
  ASSERT_TRUE(h.driver->propose(kilo(5)).ok());
  h.settle();
  ASSERT_EQ(h.app.requested.size(), 2u);
  EXPECT_EQ(h.app.requested[1], 7u);
  EXPECT_TRUE(h.app.fatal.empty());
}

TEST(RaftDriver, WithoutSnapshotBytesLargeEntriesWaitForSnapshotEvery) {
  RaftDriverOptions o;
  o.snapshot_every = 1000;
  Harness h({1}, o);
  h.app.hold_snapshot_requests = true;
  h.elect();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(h.driver->propose(kilo(i)).ok());
    h.settle();
  }
  EXPECT_TRUE(h.app.requested.empty());
  EXPECT_EQ(h.driver->applied_bytes_since_snapshot(), 24u + 10 * 1024u);
}

TEST(RaftDriver, KeptTailIsBoundedByBytesAsWellAsEntries) {
  for (const uint64_t keep_bytes : {uint64_t{0}, uint64_t{2500}}) {
    SCOPED_TRACE(keep_bytes);
    RaftDriverOptions o;
    o.snapshot_every = 6;
    o.keep_tail = 4;
    o.keep_tail_bytes = keep_bytes;
    Harness h({1}, o);
    h.elect();
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(h.driver->propose(kilo(i)).ok());
      h.settle();
    }
    ASSERT_EQ(h.observer.taken_at, (std::vector<Index>{6}));
    Index compacted = 0;
    for (const auto& op : h.storage.done_ops) {
      if (op.is_snapshot) compacted = op.compact_through;
    }
    // By count, 4 entries (3..6) stay; 2500 bytes hold only two of 1024 (5, 6).
    const Index want = keep_bytes == 0 ? 2 : 4;
    EXPECT_EQ(compacted, want);
    EXPECT_EQ(h.driver->core().log().first_index(), want + 1);
    EXPECT_EQ(h.driver->core().log().last_index(), 6u);
  }
}

TEST(RaftDriver, DefaultSnapshotRequestUsesTakeSnapshot) {
  RaftDriverOptions o;
  o.snapshot_every = 2;
  Harness h({1}, o);
  h.elect();
  ASSERT_TRUE(h.driver->propose("a").ok());
  h.settle();
  ASSERT_TRUE(h.driver->propose("b").ok());
  h.settle();
  EXPECT_GE(h.app.taken, 1);
  bool stored = false;
  for (const auto& op : h.storage.done_ops) stored = stored || op.is_snapshot;
  EXPECT_TRUE(stored);
}

TEST(RaftDriver, SnapshotAnswerAfterTheDriverIsGoneIsDropped) {
  RaftDriverOptions o;
  o.snapshot_every = 1;
  Harness h({1}, o);
  h.app.hold_snapshot_requests = true;
  h.elect();
  ASSERT_TRUE(h.driver->propose("a").ok());
  h.settle();
  ASSERT_FALSE(h.app.replies.empty());
  h.driver.reset();
  h.app.replies[0](h.app.requested[0], "late");
  EXPECT_EQ(h.executor.pending(), 0u);
}

TEST(RaftDriver, FailedWriteStopsTheDriverAndReportsAFatalError) {
  Harness h({1, 2, 3});
  h.executor.run();
  h.driver->step(append_from_leader(2, 1, 0, {"a"}, 1));
  ASSERT_EQ(h.storage.ops.size(), 1u);
  h.storage.complete_one(Status::io_error("disk on fire"));
  h.executor.run();
  ASSERT_EQ(h.app.fatal.size(), 1u);
  EXPECT_NE(h.app.fatal[0].find("disk on fire"), std::string::npos);
  EXPECT_EQ(h.observer.fatal, h.app.fatal);
  EXPECT_TRUE(h.driver->stopped());
  // Nothing was promised or applied, and nothing happens any more.
  EXPECT_TRUE(h.transport.sent.empty());
  EXPECT_TRUE(h.app.applied.empty());
  for (int i = 0; i < 50; ++i) h.driver->tick();
  h.executor.run();
  EXPECT_TRUE(h.storage.ops.empty());
  EXPECT_TRUE(h.transport.sent.empty());
}

TEST(RaftDriver, LeaderSnapshotIsStoredBeforeTheEntriesAfterItAndRestoredAfterBoth) {
  Harness h({1, 2, 3});
  h.executor.run();
  Message snap;
  snap.type = MessageType::kSnapshot;
  snap.from = 2;
  snap.to = 1;
  snap.term = 1;
  snap.snapshot.index = 10;
  snap.snapshot.term = 1;
  snap.snapshot.membership.voters = {1, 2, 3};
  snap.snapshot_chunk = "leader-state";
  snap.snapshot_offset = 0;
  snap.snapshot_done = true;
  snap.commit = 10;
  h.driver->step(snap);
  ASSERT_GE(h.storage.ops.size(), 3u);
  ASSERT_TRUE(h.storage.ops[0].chunk.has_value());  // the bytes go to storage as they came
  EXPECT_EQ(h.storage.ops[0].chunk->bytes, "leader-state");
  EXPECT_EQ(h.storage.ops[0].chunk->offset, 0u);
  EXPECT_TRUE(h.storage.ops[0].chunk->last);
  EXPECT_TRUE(h.storage.ops[1].is_snapshot);
  EXPECT_EQ(h.storage.ops[1].meta.index, 10u);
  EXPECT_EQ(h.storage.ops[1].compact_through, 0u);
  EXPECT_FALSE(h.storage.ops[1].own);  // the leader's: stored in order, before the entries after it
  EXPECT_FALSE(h.storage.ops[2].is_snapshot);
  ASSERT_EQ(h.storage.loads.size(), 1u);  // and read back to restore from, in order after it
  EXPECT_TRUE(h.app.restored.empty());
  h.storage.complete_one();  // the chunk is written,
  h.storage.complete_one();  // the snapshot is on disk,
  h.storage.loads[0](Status::ok(), snap.snapshot, snapshot_in_memory("leader-state"));  // and read back;
  h.executor.run();
  EXPECT_TRUE(h.app.restored.empty());  // the write after it is not on disk yet
  EXPECT_TRUE(h.transport.sent.empty());
  h.storage.complete_one();
  h.executor.run();
  EXPECT_EQ(h.app.restored, (std::vector<Index>{10}));
  EXPECT_EQ(h.app.restored_bytes, (std::vector<std::string>{"leader-state"}));
  EXPECT_EQ(h.driver->applied_index(), 10u);
  EXPECT_FALSE(h.transport.sent.empty());
}

TEST(RaftDriver, ALeaderSnapshotThatReadsBackAsAnotherStopsTheDriver) {
  Harness h({1, 2, 3});
  h.executor.run();
  Message snap;
  snap.type = MessageType::kSnapshot;
  snap.from = 2;
  snap.to = 1;
  snap.term = 1;
  snap.snapshot.index = 10;
  snap.snapshot.term = 1;
  snap.snapshot.membership.voters = {1, 2, 3};
  snap.snapshot_chunk = "leader-state";
  snap.snapshot_done = true;
  snap.commit = 10;
  h.driver->step(snap);
  ASSERT_EQ(h.storage.loads.size(), 1u);
  h.storage.complete_one();
  h.storage.complete_one();
  SnapshotMeta older = snap.snapshot;
  older.index = 5;
  h.storage.loads[0](Status::ok(), older, snapshot_in_memory("older-state"));
  h.storage.complete_one();
  h.executor.run();
  EXPECT_TRUE(h.app.restored.empty());  // nothing is restored from the wrong bytes
  EXPECT_FALSE(h.app.fatal.empty());
}

TEST(RaftDriver, ChunksOfALeaderSnapshotAreWrittenBeforeTheyAreAcknowledged) {
  Harness h({1, 2, 3});
  h.executor.run();
  Message snap;
  snap.type = MessageType::kSnapshot;
  snap.from = 2;
  snap.to = 1;
  snap.term = 1;
  snap.snapshot.index = 10;
  snap.snapshot.term = 1;
  snap.snapshot.membership.voters = {1, 2, 3};
  snap.snapshot_chunk = "first-half";
  snap.snapshot_done = false;
  snap.commit = 10;
  h.driver->step(snap);
  h.executor.run();
  ASSERT_FALSE(h.storage.ops.empty());
  ASSERT_TRUE(h.storage.ops[0].chunk.has_value());
  EXPECT_FALSE(h.storage.ops[0].chunk->last);
  auto acks = [&] {
    size_t n = 0;
    for (const Message& m : h.transport.sent) n += m.type == MessageType::kSnapshotResponse;
    return n;
  };
  EXPECT_EQ(acks(), 0u);  // not before the chunk is written
  h.storage.complete_all();
  h.executor.run();
  EXPECT_EQ(acks(), 1u);
  EXPECT_TRUE(h.storage.loads.empty());  // nothing is restored from half a snapshot
  EXPECT_TRUE(h.app.restored.empty());
}

}  // namespace
}  // namespace zkraft::consensus
