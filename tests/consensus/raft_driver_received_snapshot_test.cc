// RaftDriver and a leader's snapshot as a follower receives it: the chunks go to storage as they
// come and are acknowledged only once written, the stored snapshot is read back to restore from,
// and the entries after it wait for both.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "consensus/raft_driver.h"
#include "tests/consensus/raft_driver_test_harness.h"

namespace zkraft::consensus {
namespace {

using namespace driver_test;  // NOLINT: the fakes are these tests' vocabulary

// The first chunk (offset 0) of leader 2's snapshot at index 10 of term 1, to node 1.
Message chunk_from_leader(std::string bytes, bool done) {
  Message m;
  m.type = MessageType::kSnapshot;
  m.from = 2;
  m.to = 1;
  m.term = 1;
  m.snapshot.index = 10;
  m.snapshot.term = 1;
  m.snapshot.membership.voters = {1, 2, 3};
  m.snapshot_chunk = std::move(bytes);
  m.snapshot_offset = 0;
  m.snapshot_done = done;
  m.commit = 10;
  return m;
}

TEST(RaftDriver, LeaderSnapshotIsStoredBeforeTheEntriesAfterItAndRestoredAfterBoth) {
  Harness h({1, 2, 3});
  h.executor.run();
  const Message snap = chunk_from_leader("leader-state", /*done=*/true);
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
  const Message snap = chunk_from_leader("leader-state", /*done=*/true);
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
  const Message snap = chunk_from_leader("first-half", /*done=*/false);
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
