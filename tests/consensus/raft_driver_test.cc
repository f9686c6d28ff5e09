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
#include "tests/consensus/raft_driver_test_harness.h"

namespace zkraft::consensus {
namespace {

using namespace driver_test;  // NOLINT: the fakes are these tests' vocabulary

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
  // Four more were applied meanwhile (>= snapshot_every after `at`): the next request follows
  // once this one is stored, so that the application is offered the newer stored snapshot.
  EXPECT_EQ(h.app.requested.size(), 1u);
  h.storage.complete_one();
  h.executor.run();
  EXPECT_EQ(h.app.requested.size(), 2u);
  EXPECT_EQ(h.app.requested[1], h.driver->applied_index());
  EXPECT_TRUE(h.app.fatal.empty());
}

// An application that appended to the stored snapshot's file, and found it replaced before it
// began (a leader's snapshot stored meanwhile), answers kSnapshotOutOfDate: nothing to store, the
// driver goes on, and the next snapshot comes after the usual number of entries. Any other
// failure to write the file stops the node.
TEST(RaftDriver, AnOutOfDateSnapshotFileIsCountedAsTakenAndTheDriverGoesOn) {
  RaftDriverOptions o;
  o.snapshot_every = 3;
  Harness h({1}, o);
  h.storage.offer_files = true;
  h.app.hold_snapshot_requests = true;
  h.elect();
  for (int i = 0; i < 2; ++i) {  // with the leader's no-op, entries 1 to 3
    ASSERT_TRUE(h.driver->propose("e" + std::to_string(i)).ok());
    h.settle();
  }
  ASSERT_EQ(h.app.requested, (std::vector<Index>{3}));
  ASSERT_EQ(h.app.file_replies.size(), 1u);
  h.app.file_replies[0](3, Status::error(Status::Code::kSnapshotOutOfDate, "replaced"), {});
  h.settle();
  EXPECT_TRUE(h.app.fatal.empty());
  for (const auto& op : h.storage.done_ops) EXPECT_FALSE(op.is_snapshot);
  for (int i = 2; i < 4; ++i) {  // 4 and 5: not due yet
    ASSERT_TRUE(h.driver->propose("e" + std::to_string(i)).ok());
    h.settle();
  }
  EXPECT_EQ(h.app.requested.size(), 1u);
  ASSERT_TRUE(h.driver->propose("e4").ok());  // 6
  h.settle();
  ASSERT_EQ(h.app.requested, (std::vector<Index>{3, 6}));
  h.app.file_replies[1](6, Status::io_error("disk"), {});
  h.settle();
  ASSERT_EQ(h.app.fatal.size(), 1u);
}

// A snapshot that came due while the last was being written is asked for only once the last is
// stored, so that its target names the last (which an application can append to) and not the
// one before. Asked at once, it named the one before, and zkraft wrote the whole tree again
// right after each long snapshot (docs/benchmarks.md).
TEST(RaftDriver, TheNextSnapshotIsAskedOnceTheLastIsStoredAndItsTargetNamesIt) {
  RaftDriverOptions o;
  o.snapshot_every = 3;
  Harness h({1}, o);
  h.storage.offer_files = true;
  h.app.hold_snapshot_requests = true;
  h.elect();
  for (int i = 0; i < 2; ++i) {  // with the leader's no-op, entries 1 to 3
    ASSERT_TRUE(h.driver->propose("e" + std::to_string(i)).ok());
    h.settle();
  }
  ASSERT_EQ(h.app.requested, (std::vector<Index>{3}));
  EXPECT_EQ(h.app.file_targets[0].stored_index, 0u);
  for (int i = 2; i < 5; ++i) {  // 4 to 6 while the application writes the file: the next is due
    ASSERT_TRUE(h.driver->propose("e" + std::to_string(i)).ok());
    h.settle();
  }
  EXPECT_EQ(h.app.requested.size(), 1u);
  // A write in flight when the file is answered: its store goes behind it, as in the storage.
  ASSERT_TRUE(h.driver->propose("e5").ok());
  h.executor.run();
  ASSERT_EQ(h.storage.ops.size(), 1u);
  SnapshotFileWritten file;
  file.token = h.app.file_targets[0].token;
  file.size = 10;
  h.app.file_replies[0](3, Status::ok(), file);
  h.executor.run();
  ASSERT_EQ(h.storage.ops.size(), 2u);
  ASSERT_TRUE(h.storage.ops.back().own_file);
  h.storage.complete_one();  // the write: its Ready finishes, entry 7 applies
  h.executor.run();
  EXPECT_EQ(h.app.requested.size(), 1u);  // not while the file is being stored
  h.storage.complete_one();
  h.executor.run();
  ASSERT_EQ(h.app.requested.size(), 2u);
  EXPECT_EQ(h.app.requested[1], h.driver->applied_index());
  EXPECT_EQ(h.app.file_targets[1].stored_index, 3u);
  EXPECT_TRUE(h.app.fatal.empty());
}

// After an own snapshot the core's log is compacted compact_step entries at a time, each step a
// task of its own: whatever was posted meanwhile (here a proposal's pump) runs between steps.
TEST(RaftDriver, TheCoreLogIsCompactedInStepsWithOtherTasksBetweenThem) {
  RaftDriverOptions o;
  o.snapshot_every = 10;
  o.keep_tail = 0;
  o.compact_step = 3;
  Harness h({1}, o);
  h.app.hold_snapshot_requests = true;
  h.elect();
  for (int i = 0; i < 9; ++i) {  // with the leader's no-op, 10 entries
    ASSERT_TRUE(h.driver->propose("e" + std::to_string(i)).ok());
    h.settle();
  }
  ASSERT_EQ(h.app.requested, (std::vector<Index>{10}));
  h.app.replies[0](10, "snap@10");
  ASSERT_EQ(h.executor.pending(), 1u);
  ASSERT_TRUE(h.executor.run_one());  // the answer: stored, and the first step
  EXPECT_EQ(h.observer.taken_at, (std::vector<Index>{10}));
  EXPECT_EQ(h.driver->core().log().first_index(), 4u);
  ASSERT_TRUE(h.driver->propose("later").ok());  // its pump is posted behind the next step
  ASSERT_EQ(h.executor.pending(), 2u);
  ASSERT_TRUE(h.executor.run_one());
  EXPECT_EQ(h.driver->core().log().first_index(), 7u);
  const size_t ops_before = h.storage.ops.size();
  ASSERT_TRUE(h.executor.run_one());  // the pump: "later" goes to storage between two steps
  EXPECT_EQ(h.storage.ops.size(), ops_before + 1);
  EXPECT_EQ(h.driver->core().log().first_index(), 7u);
  ASSERT_TRUE(h.executor.run_one());
  EXPECT_EQ(h.driver->core().log().first_index(), 10u);
  ASSERT_TRUE(h.executor.run_one());  // the last step is the rest: entry 10
  EXPECT_EQ(h.driver->core().log().first_index(), 11u);
  EXPECT_FALSE(h.executor.run_one());  // and nothing more is posted
  h.settle();
  EXPECT_EQ(h.applied_data().back(), "later");
  EXPECT_EQ(h.driver->core().log().first_index(), 11u);
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

}  // namespace
}  // namespace zkraft::consensus
