// ZnodeTree's live snapshot: while random writes go on between its steps, the bytes it writes are
// exactly serialize()'s bytes at its start, snapshot after snapshot.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/tree/random_tree_ops.h"
#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

TEST(LiveSnapshotTest, WithoutWritesItIsSerialize) {
  ZnodeTree t;
  int64_t zxid = 0;
  add_quota_and_config(t, zxid);
  const std::string expected = snapshot_of(t);
  for (size_t step : {size_t{1}, size_t{3}, size_t{1000}}) {
    jute::Writer w;
    t.begin_live_snapshot(w);
    EXPECT_TRUE(t.live_snapshot_under_way());
    while (!t.continue_live_snapshot(w, step)) {
    }
    EXPECT_FALSE(t.live_snapshot_under_way());
    EXPECT_EQ(w.bytes(), expected) << "step " << step;
  }
}

TEST(LiveSnapshotTest, RandomWritesBetweenStepsLeaveTheBytesOfTheStart) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    ZnodeTree t;
    OpStream ops(seed);
    std::mt19937_64 steps(seed * 7919);
    std::string log;
    int64_t zxid = 0;
    add_quota_and_config(t, zxid);
    for (int i = 0; i < 300; ++i) apply_random_op(t, ops, ++zxid, log);
    size_t written_while_writing = 0;
    for (int round = 0; round < 20; ++round) {
      const std::string expected = snapshot_of(t);
      const uint64_t digest = t.digest();
      jute::Writer w;
      LiveSnapshotCheck check = t.begin_live_snapshot(w);
      size_t checked = 0;  // the check takes each step's bytes as a piece, as the file thread does
      for (bool done = false; !done;) {
        // A few writes, then a step of 1 to 3 records; some steps have no writes before them.
        for (uint64_t n = steps() % 5; n > 0; --n) {
          apply_random_op(t, ops, ++zxid, log);
          if (steps() % 50 == 0) t.set_config_data("version=" + std::to_string(zxid));
          ++written_while_writing;
        }
        done = t.continue_live_snapshot(w, 1 + steps() % 3);
        ASSERT_TRUE(check.add(w.bytes().substr(checked)));
        checked = w.size();
      }
      EXPECT_FALSE(t.live_snapshot_under_way());
      ASSERT_EQ(w.bytes(), expected) << "round " << round;
      EXPECT_TRUE(check.holds_the_start()) << "round " << round;
      ZnodeTree loaded;
      jute::Reader r(w.bytes());
      ASSERT_TRUE(loaded.deserialize(r));
      EXPECT_EQ(loaded.digest(), digest);
    }
    EXPECT_GT(written_while_writing, 300u);
    EXPECT_NE(log.find("|0:"), std::string::npos);  // the stream changed the tree
  }
}

// The check of a snapshot's records against the tree at its start: it passes the bytes the walk
// wrote, and fails them with one byte changed, one record short, or a piece cut inside a record.
TEST(LiveSnapshotTest, TheCheckFailsBytesThatAreNotTheTreeAtTheStart) {
  ZnodeTree t;
  int64_t zxid = 0;
  add_quota_and_config(t, zxid);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(create(t, ++zxid, "/a/n" + std::to_string(i), "data"), err::kOk);
  jute::Writer w;
  const LiveSnapshotCheck start = t.begin_live_snapshot(w);
  const size_t header = w.size();
  while (!t.continue_live_snapshot(w, 7)) {
  }
  const std::string bytes(w.bytes());
  {
    LiveSnapshotCheck c = start;
    ASSERT_TRUE(c.add(bytes));
    EXPECT_TRUE(c.holds_the_start());
    EXPECT_EQ(c.records_seen(), t.node_count() - 1);  // node_count() counts the root twice
  }
  {
    LiveSnapshotCheck c = start;  // the headers and the records in two pieces, split at a record
    ASSERT_TRUE(c.add(std::string_view(bytes).substr(0, header)));
    ASSERT_TRUE(c.add(std::string_view(bytes).substr(header)));
    EXPECT_TRUE(c.holds_the_start());
  }
  {
    std::string changed = bytes;
    const size_t at = changed.rfind("data");  // the last record's data
    ASSERT_NE(at, std::string::npos);
    changed[at] = 'D';
    LiveSnapshotCheck c = start;
    ASSERT_TRUE(c.add(changed));
    EXPECT_FALSE(c.holds_the_start()) << "a changed byte of data";
  }
  {
    // Without the last record ("/a/n49": its path, data, 6 longs and 5 ints).
    const size_t last = 4 + std::string("/a/n49").size() + 4 + 4 + 6 * 8 + 5 * 4;
    ASSERT_EQ(bytes.substr(bytes.size() - last + 4, 6), "/a/n49");
    LiveSnapshotCheck c = start;
    ASSERT_TRUE(c.add(std::string_view(bytes).substr(0, bytes.size() - last)));
    EXPECT_FALSE(c.holds_the_start()) << "a record short";
  }
  {
    LiveSnapshotCheck c = start;
    EXPECT_FALSE(c.add(std::string_view(bytes).substr(0, bytes.size() - 3))) << "a piece cut inside a record";
  }
}

// A node removed before its record is written, then a node made at the same path (and perhaps at
// the same address): the snapshot writes the removed one.
TEST(LiveSnapshotTest, ARemovedNodeIsWrittenAsItWasEvenIfItsPathIsTakenAgain) {
  ZnodeTree t;
  for (int i = 1; i <= 20; ++i) ASSERT_EQ(create(t, i, "/n" + std::to_string(i), "old"), err::kOk);
  const std::string expected = snapshot_of(t);
  jute::Writer w;
  t.begin_live_snapshot(w);
  ASSERT_FALSE(t.continue_live_snapshot(w, 2));
  std::vector<WatchTrigger> out;
  for (int i = 1; i <= 20; ++i) {
    ASSERT_EQ(t.remove(ctx(100 + i), "/n" + std::to_string(i), -1, out), err::kOk);
    ASSERT_EQ(create(t, 200 + i, "/n" + std::to_string(i), "new"), err::kOk);
  }
  while (!t.continue_live_snapshot(w, 1)) {
  }
  EXPECT_EQ(w.bytes(), expected);
}

// The walk reads a written node's child list in place. Each kind of change to that list midway
// (a written child removed, so the last one moves into its place; the last child removed; a
// child created; a failed multi's undo putting a removed child back) leaves the snapshot of the
// start, at every point of the list.
TEST(LiveSnapshotTest, AChildListReadInPlaceThatChangesMidwayIsWrittenAsItWas) {
  enum class Change { kRemoveWritten, kRemoveLast, kCreate, kUndoneRemove };
  for (Change change : {Change::kRemoveWritten, Change::kRemoveLast, Change::kCreate, Change::kUndoneRemove}) {
    // The walk's order: the root, /zookeeper and its two children (made first), /p, then its 10
    // children; so 6 to 15 records read are 0 to 10 of /p's children.
    for (size_t read = 1; read <= 15; ++read) {
      const size_t children_read = read > 5 ? read - 5 : 0;
      SCOPED_TRACE(::testing::Message() << "change " << static_cast<int>(change) << ", records read " << read);
      ZnodeTree t;
      int64_t zxid = 0;
      ASSERT_EQ(create(t, ++zxid, "/p"), err::kOk);
      for (int i = 0; i < 10; ++i) ASSERT_EQ(create(t, ++zxid, "/p/c" + std::to_string(i), "v"), err::kOk);
      const std::string expected = snapshot_of(t);
      jute::Writer w;
      t.begin_live_snapshot(w);
      ASSERT_FALSE(t.continue_live_snapshot(w, read));
      // The walk is where the loop says it is.
      if (children_read > 0) {
        ASSERT_NE(w.bytes().find("/p/c" + std::to_string(children_read - 1)), std::string::npos);
      }
      if (children_read < 10) {
        ASSERT_EQ(w.bytes().find("/p/c" + std::to_string(children_read)), std::string::npos);
      }
      std::vector<WatchTrigger> out;
      const std::string first = "/p/c0", last = "/p/c9";
      switch (change) {
        case Change::kRemoveWritten:
          if (children_read > 0) {
            ASSERT_EQ(t.remove(ctx(++zxid), first, -1, out), err::kOk);
          }
          break;
        case Change::kRemoveLast: ASSERT_EQ(t.remove(ctx(++zxid), last, -1, out), err::kOk); break;
        case Change::kCreate: ASSERT_EQ(create(t, ++zxid, "/p/new", "v"), err::kOk); break;
        case Change::kUndoneRemove: {
          // The second op fails, so the first one's remove is undone: /p/c0 goes back to its place.
          std::vector<MultiOp> ops{DeleteOp{first, -1}, DeleteOp{"/p/missing", -1}};
          bool ok = true;
          t.multi(ctx(++zxid), ops, out, ok);
          ASSERT_FALSE(ok);
          break;
        }
      }
      while (!t.continue_live_snapshot(w, 1)) {
      }
      EXPECT_EQ(w.bytes(), expected);
    }
  }
}

// A list of kChildListKeptInPlace children or more is read in place, from a kept pre-image too,
// while children are added after the entries of the start: nothing is copied until a change
// reaches those entries, and the bytes are the tree's at the start whatever comes.
TEST(LiveSnapshotTest, ALongChildListIsReadInPlaceWhileChildrenAreAddedAfterIt) {
  constexpr size_t kLong = ZnodeTree::kChildListKeptInPlace + 5;
  enum class Then { kNothing, kRemoveFirst, kRemoveLastOfStart, kRemoveAdded, kUndoneRemove, kSetParent };
  for (Then then : {Then::kNothing, Then::kRemoveFirst, Then::kRemoveLastOfStart, Then::kRemoveAdded,
                    Then::kUndoneRemove, Then::kSetParent}) {
    // The walk's order: the root, /zookeeper and its two children, /p, then /p's children.
    for (size_t read : {size_t{1}, size_t{5}, size_t{6}, 5 + kLong / 2, 5 + kLong - 1, 5 + kLong}) {
      SCOPED_TRACE(::testing::Message() << "then " << static_cast<int>(then) << ", records read " << read);
      ZnodeTree t;
      int64_t zxid = 0;
      ASSERT_EQ(create(t, ++zxid, "/p"), err::kOk);
      for (size_t i = 0; i < kLong; ++i) ASSERT_EQ(create(t, ++zxid, "/p/c" + std::to_string(i)), err::kOk);
      const std::string expected = snapshot_of(t);
      jute::Writer w;
      t.begin_live_snapshot(w);
      ASSERT_FALSE(t.continue_live_snapshot(w, read));
      for (int i = 0; i < 3; ++i) ASSERT_EQ(create(t, ++zxid, "/p/new" + std::to_string(i), "v"), err::kOk);
      EXPECT_EQ(t.live_snapshot_entries_copied(), 0u) << "children added after the start copy nothing";
      std::vector<WatchTrigger> out;
      bool copies = false;
      switch (then) {
        case Then::kNothing: break;
        case Then::kRemoveFirst:
          // A remove moves the last child into the hole: the rest of the list not read yet is
          // copied, even if the hole was read (nothing is left to read once the walk is past it).
          ASSERT_EQ(remove(t, ++zxid, "/p/c0"), err::kOk);
          copies = read < 5 + kLong;
          break;
        case Then::kRemoveLastOfStart:
          ASSERT_EQ(remove(t, ++zxid, "/p/c" + std::to_string(kLong - 1)), err::kOk);
          copies = read < 5 + kLong;
          break;
        case Then::kRemoveAdded: ASSERT_EQ(remove(t, ++zxid, "/p/new0"), err::kOk); break;
        case Then::kUndoneRemove: {
          // The remove moves /p/new2 into /p/c0's place, and its undo puts both back.
          std::vector<MultiOp> ops{DeleteOp{"/p/c0", -1}, DeleteOp{"/p/missing", -1}};
          bool ok = true;
          t.multi(ctx(++zxid), ops, out, ok);
          ASSERT_FALSE(ok);
          copies = read < 5 + kLong;
          break;
        }
        case Then::kSetParent: {
          jute::Stat st;
          ASSERT_EQ(t.set_data(ctx(++zxid), "/p", buf("new"), -1, st, out), err::kOk);
          break;
        }
      }
      if (copies) {
        EXPECT_GT(t.live_snapshot_entries_copied(), 0u);
      } else {
        EXPECT_EQ(t.live_snapshot_entries_copied(), 0u);
      }
      for (int i = 3; i < 6; ++i) ASSERT_EQ(create(t, ++zxid, "/p/new" + std::to_string(i), "v"), err::kOk);
      while (!t.continue_live_snapshot(w, 1000)) {
        ++zxid;
        ASSERT_EQ(create(t, zxid, "/p/more" + std::to_string(zxid), "v"), err::kOk);
      }
      EXPECT_EQ(w.bytes(), expected);
    }
  }
}

// Random writes under a long list and elsewhere between random steps, snapshot after snapshot.
TEST(LiveSnapshotTest, RandomWritesUnderALongListLeaveTheBytesOfTheStart) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    ZnodeTree t;
    int64_t zxid = 0;
    ASSERT_EQ(create(t, ++zxid, "/a"), err::kOk);
    ASSERT_EQ(create(t, ++zxid, "/p"), err::kOk);
    std::vector<std::string> kids;
    for (size_t i = 0; i < ZnodeTree::kChildListKeptInPlace + 50; ++i) {
      kids.push_back("/p/c" + std::to_string(i));
      ASSERT_EQ(create(t, ++zxid, kids.back()), err::kOk);
    }
    for (int round = 0; round < 6; ++round) {
      const std::string expected = snapshot_of(t);
      jute::Writer w;
      t.begin_live_snapshot(w);
      for (bool done = false; !done;) {
        for (uint64_t n = rng() % 4; n > 0; --n) {
          std::vector<WatchTrigger> out;
          const uint64_t what = rng() % 100;
          if (what < 70 || kids.size() < 10) {
            kids.push_back("/p/n" + std::to_string(++zxid));
            ASSERT_EQ(create(t, zxid, kids.back()), err::kOk);
          } else if (what < 80) {
            const size_t i = rng() % kids.size();
            ASSERT_EQ(remove(t, ++zxid, kids[i]), err::kOk);
            kids[i] = kids.back();
            kids.pop_back();
          } else if (what < 88) {
            jute::Stat st;
            ++zxid;
            ASSERT_EQ(t.set_data(ctx(zxid), "/p", buf(std::to_string(zxid)), -1, st, out), err::kOk);
          } else if (what < 94) {
            std::vector<MultiOp> ops{DeleteOp{kids[rng() % kids.size()], -1}, DeleteOp{"/p/missing", -1}};
            bool ok = true;
            t.multi(ctx(++zxid), ops, out, ok);
            ASSERT_FALSE(ok);
          } else {
            ++zxid;
            ASSERT_EQ(create(t, zxid, "/a/n" + std::to_string(zxid)), err::kOk);
          }
        }
        done = t.continue_live_snapshot(w, 1 + rng() % 700);
      }
      ASSERT_EQ(w.bytes(), expected) << "round " << round;
    }
  }
}

// A restore replaces the tree while a snapshot of it is under way: the snapshot still writes the
// tree as it was at its start, and writes to the new tree keep nothing for it.
TEST(LiveSnapshotTest, ARestoreMidwayLeavesTheSnapshotOfTheReplacedTree) {
  ZnodeTree t;
  for (int i = 1; i <= 30; ++i) ASSERT_EQ(create(t, i, "/n" + std::to_string(i), "old"), err::kOk);
  const std::string expected = snapshot_of(t);
  ZnodeTree other;
  for (int i = 1; i <= 10; ++i) ASSERT_EQ(create(other, i, "/m" + std::to_string(i), "other"), err::kOk);
  const std::string other_bytes = snapshot_of(other);
  jute::Writer w;
  t.begin_live_snapshot(w);
  ASSERT_FALSE(t.continue_live_snapshot(w, 5));
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.remove(ctx(100), "/n20", -1, out), err::kOk);  // kept before the restore
  jute::Reader r(other_bytes);
  ASSERT_TRUE(t.deserialize(r));
  EXPECT_TRUE(t.live_snapshot_under_way());
  jute::Stat st;
  ASSERT_EQ(t.set_data(ctx(101), "/m3", buf("new"), -1, st, out), err::kOk);
  ASSERT_EQ(t.remove(ctx(102), "/m4", -1, out), err::kOk);
  while (!t.continue_live_snapshot(w, 3)) {
  }
  EXPECT_EQ(w.bytes(), expected);
  EXPECT_FALSE(t.contains("/n1"));
  EXPECT_TRUE(t.contains("/m1"));
  // And the next snapshot is of the new tree.
  const std::string now = snapshot_of(t);
  jute::Writer w2;
  t.begin_live_snapshot(w2);
  while (!t.continue_live_snapshot(w2, 4)) {
  }
  EXPECT_EQ(w2.bytes(), now);
}

// A restore while the walk reads a child list in place (nothing changed it before the restore):
// the replaced tree's lists stay where they were and unchanged, so the walk reads on from them,
// whatever the new tree's lists do.
TEST(LiveSnapshotTest, ARestoreWhileAListIsReadInPlaceLeavesTheSnapshotOfTheReplacedTree) {
  ZnodeTree t;
  for (int i = 1; i <= 30; ++i) ASSERT_EQ(create(t, i, "/n" + std::to_string(i), "old"), err::kOk);
  const std::string expected = snapshot_of(t);
  ZnodeTree other;
  for (int i = 1; i <= 10; ++i) ASSERT_EQ(create(other, i, "/n" + std::to_string(i), "other"), err::kOk);
  const std::string other_bytes = snapshot_of(other);
  jute::Writer w;
  t.begin_live_snapshot(w);
  ASSERT_FALSE(t.continue_live_snapshot(w, 8));  // the root, /zookeeper and its two, /n1 to /n4
  ASSERT_NE(w.bytes().find("/n4"), std::string::npos);
  ASSERT_EQ(w.bytes().find("/n5"), std::string::npos);
  jute::Reader r(other_bytes);
  ASSERT_TRUE(t.deserialize(r));
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.remove(ctx(100), "/n1", -1, out), err::kOk);  // the new root's list changes
  ASSERT_EQ(create(t, 101, "/n11", "new"), err::kOk);
  while (!t.continue_live_snapshot(w, 3)) {
  }
  EXPECT_EQ(w.bytes(), expected);
}

}  // namespace
}  // namespace zkraft::tree
