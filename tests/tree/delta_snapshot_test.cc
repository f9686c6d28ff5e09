// ZnodeTree's deltas: a full snapshot plus the deltas written after it restore the tree exactly
// (the same serialize() bytes, so the same child order, ACL table and quota paths), and a delta
// that is not the next one for the state it is given, or is cut or damaged, fails the restore
// without changing the tree or stopping the process.
#include <gtest/gtest.h>

#include <random>

#include "tests/tree/random_tree_ops.h"
#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

// A tree that tracks changes, with quota nodes and config data, after `writes` writes of a
// random stream that the test goes on with.
struct TrackedTree {
  TrackedTree(uint64_t seed, int writes) : ops(seed) {
    t.track_changes(true);
    add_quota_and_config(t, zxid);
    for (int i = 0; i < writes; ++i) apply_random_op(t, ops, ++zxid, log);
  }
  ZnodeTree t;
  OpStream ops;
  std::string log;
  int64_t zxid = 0;
};

std::string delta_of(ZnodeTree& t) {
  jute::Writer w;
  t.write_delta(w);
  return w.take();
}

// Restores `full` and then `deltas` into a scratch tree, and only if all apply, moves it into
// `out` (as the state machine's restore does).
bool restore_chain(ZnodeTree& out, const std::string& full, const std::vector<std::string>& deltas) {
  ZnodeTree scratch;
  jute::Reader r(full);
  if (!scratch.deserialize(r)) return false;
  for (const auto& d : deltas) {
    jute::Reader dr(d);
    if (!scratch.apply_delta(dr)) return false;
  }
  out = std::move(scratch);
  return true;
}

TEST(DeltaSnapshotTest, RandomWritesBetweenPointsRestoreExactlyFromTheFullSnapshotAndItsDeltas) {
  size_t deltas_checked = 0, links_seen = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    TrackedTree tracked(seed, 200);
    auto& [t, ops, log, zxid] = tracked;
    std::mt19937_64 rounds(seed * 104729);
    EXPECT_FALSE(t.delta_possible());  // no point yet
    std::string full = snapshot_of(t);
    t.start_change_record();
    std::vector<std::string> deltas;
    for (int round = 0; round < 25; ++round) {
      const size_t count_before = t.node_count();
      // 0 to 79 writes, now and then the config text; every so often a full snapshot again.
      for (uint64_t n = rounds() % 80; n > 0; --n) {
        apply_random_op(t, ops, ++zxid, log);
        if (rounds() % 40 == 0) t.set_config_data("version=" + std::to_string(zxid));
      }
      if (rounds() % 7 == 0) {
        full = snapshot_of(t);
        t.start_change_record();
        deltas.clear();
        continue;
      }
      ASSERT_TRUE(t.delta_possible());
      const size_t count_at_point = count_before;
      const uint64_t estimate = t.pending_delta_bytes();
      deltas.push_back(delta_of(t));
      EXPECT_LE(estimate, deltas.back().size());
      if (t.node_count() != count_at_point) ++links_seen;  // nodes came or went in this delta
      ZnodeTree loaded;
      ASSERT_TRUE(restore_chain(loaded, full, deltas)) << "round " << round;
      ASSERT_EQ(snapshot_of(loaded), snapshot_of(t)) << "round " << round;
      EXPECT_EQ(loaded.rolling_digest(), t.rolling_digest());
      EXPECT_EQ(loaded.tree_digest(), t.tree_digest());
      EXPECT_EQ(loaded.approximate_data_size(), t.approximate_data_size());
      EXPECT_EQ(loaded.ephemerals_by_session(), t.ephemerals_by_session());
      EXPECT_EQ(loaded.reap_candidates(zxid * 10 + 100000, 1000), t.reap_candidates(zxid * 10 + 100000, 1000));
      ++deltas_checked;
    }
    EXPECT_NE(log.find("|0:"), std::string::npos);  // the stream changed the tree
  }
  EXPECT_GT(deltas_checked, 500u);
  EXPECT_GT(links_seen, 100u);
}

// Writes a delta in steps (begin_live_delta) and, between steps, 0 to 3 random writes.
std::string live_delta_of(ZnodeTree& t, OpStream& ops, std::mt19937_64& rng, int64_t& zxid, std::string& log) {
  jute::Writer w;
  t.begin_live_delta(w);
  EXPECT_TRUE(t.live_snapshot_under_way());
  for (bool done = false; !done;) {
    for (uint64_t n = rng() % 4; n > 0; --n) apply_random_op(t, ops, ++zxid, log);
    done = t.continue_live_snapshot(w, 1 + rng() % 3);
  }
  EXPECT_FALSE(t.live_snapshot_under_way());
  return w.take();
}

// Written in steps while writes go on, a delta is the state at its start: with the snapshot and
// deltas before it, it restores that state exactly, whatever the writes between its steps
// changed or removed (they belong to the next delta).
TEST(DeltaSnapshotTest, ALiveDeltaIsTheStateAtItsStartWhateverTheWritesBetweenItsSteps) {
  size_t deltas_checked = 0, written_across_writes = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    TrackedTree tracked(seed, 200);
    auto& [t, ops, log, zxid] = tracked;
    std::mt19937_64 rng(seed * 7919);
    std::string full = snapshot_of(t);
    t.start_change_record();
    std::vector<std::string> deltas;
    for (int round = 0; round < 20; ++round) {
      for (uint64_t n = rng() % 80; n > 0; --n) apply_random_op(t, ops, ++zxid, log);
      if (rng() % 6 == 0) {  // now and then a live full snapshot, with writes during it too
        jute::Writer w;
        t.begin_live_snapshot(w);
        for (bool done = false; !done;) {
          apply_random_op(t, ops, ++zxid, log);
          done = t.continue_live_snapshot(w, 3);
        }
        full = w.take();
        deltas.clear();
        continue;
      }
      ASSERT_TRUE(t.delta_possible());
      const std::string at_start = snapshot_of(t);
      const int64_t zxid_at_start = zxid;
      deltas.push_back(live_delta_of(t, ops, rng, zxid, log));
      if (zxid > zxid_at_start) ++written_across_writes;
      ZnodeTree loaded;
      ASSERT_TRUE(restore_chain(loaded, full, deltas)) << "round " << round;
      ASSERT_EQ(snapshot_of(loaded), at_start) << "round " << round;
      ++deltas_checked;
    }
  }
  EXPECT_GT(deltas_checked, 400u);
  EXPECT_GT(written_across_writes, 300u);
}

// With no write between its steps, a delta written in steps is write_delta's bytes (one node
// changed and still there, so the records' order cannot differ), and the links go over many
// steps.
TEST(DeltaSnapshotTest, ALiveDeltaWithoutWritesIsTheWholeDelta) {
  jute::Stat st;
  std::vector<WatchTrigger> out;
  std::string live, whole;
  for (bool in_steps : {true, false}) {
    ZnodeTree t;
    t.track_changes(true);
    int64_t zxid = 0;
    ASSERT_EQ(create(t, ++zxid, "/p"), err::kOk);
    t.start_change_record();
    for (int i = 0; i < 40; ++i) ASSERT_EQ(create(t, ++zxid, "/p/n" + std::to_string(i)), err::kOk);
    for (int i = 0; i < 40; ++i) ASSERT_EQ(t.remove(ctx(++zxid), "/p/n" + std::to_string(i), -1, out), err::kOk);
    ASSERT_EQ(t.set_data(ctx(++zxid), "/p", buf("v"), -1, st, out), err::kOk);
    jute::Writer w;
    if (in_steps) {
      t.begin_live_delta(w);
      size_t steps = 1;
      while (!t.continue_live_snapshot(w, 1)) ++steps;
      EXPECT_GT(steps, 10u);  // 80 links of ~30 bytes, 64 bytes a step
      live = w.take();
    } else {
      t.write_delta(w);
      whole = w.take();
    }
  }
  EXPECT_EQ(live, whole);
}

// A restore that replaces the tree while a delta is written in steps leaves the delta as it
// began: it goes on from the replaced tree.
TEST(DeltaSnapshotTest, ALiveDeltaGoesOnFromTheTreeAReplaceTookAway) {
  TrackedTree tracked(3, 150);
  auto& [t, ops, log, zxid] = tracked;
  const std::string full = snapshot_of(t);
  t.start_change_record();
  for (int i = 0; i < 80; ++i) apply_random_op(t, ops, ++zxid, log);
  const std::string at_start = snapshot_of(t);
  jute::Writer w;
  t.begin_live_delta(w);
  ASSERT_FALSE(t.continue_live_snapshot(w, 1));
  ZnodeTree other;
  ASSERT_EQ(create(other, 1, "/elsewhere"), err::kOk);
  t.replace_with(std::move(other));
  EXPECT_FALSE(t.delta_possible());
  while (!t.continue_live_snapshot(w, 2)) apply_random_op(t, ops, ++zxid, log);
  ZnodeTree loaded;
  ASSERT_TRUE(restore_chain(loaded, full, {w.take()}));
  EXPECT_EQ(snapshot_of(loaded), at_start);
}

// A restored tree goes on as the original: the same writes after the restore log the same
// results and end in the same state.
TEST(DeltaSnapshotTest, ARestoredTreeGoesOnAsTheOriginal) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed);
    TrackedTree tracked(seed, 150);
    auto& [t, ops, log, zxid] = tracked;
    const std::string full = snapshot_of(t);
    t.start_change_record();
    std::vector<std::string> deltas;
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < 60; ++i) apply_random_op(t, ops, ++zxid, log);
      deltas.push_back(delta_of(t));
    }
    ZnodeTree loaded;
    ASSERT_TRUE(restore_chain(loaded, full, deltas));
    OpStream a(seed * 31), b(seed * 31);
    std::string log_a, log_b;
    for (int i = 0; i < 150; ++i) {
      ++zxid;
      apply_random_op(t, a, zxid, log_a);
      apply_random_op(loaded, b, zxid, log_b);
    }
    EXPECT_EQ(log_a, log_b);
    EXPECT_EQ(snapshot_of(loaded), snapshot_of(t));
  }
}

// A live snapshot is a point too: its bytes plus the deltas after it restore the tree.
TEST(DeltaSnapshotTest, ALiveSnapshotStartsTheChangeRecord) {
  TrackedTree tracked(7, 200);
  auto& [t, ops, log, zxid] = tracked;
  jute::Writer w;
  t.begin_live_snapshot(w);
  EXPECT_TRUE(t.delta_possible());
  // Writes while the walk goes on belong to the first delta.
  for (bool done = false; !done;) {
    apply_random_op(t, ops, ++zxid, log);
    done = t.continue_live_snapshot(w, 2);
  }
  const std::string full = w.take();
  for (int i = 0; i < 50; ++i) apply_random_op(t, ops, ++zxid, log);
  std::vector<std::string> deltas{delta_of(t)};
  ZnodeTree loaded;
  ASSERT_TRUE(restore_chain(loaded, full, deltas));
  EXPECT_EQ(snapshot_of(loaded), snapshot_of(t));
}

// Only the next delta fits a state: one applied to the wrong state, or two in the wrong order,
// fail the node count or digest check, and the tree restored into stays as it was.
TEST(DeltaSnapshotTest, ADeltaForAnotherStateFailsTheRestoreAndChangesNothing) {
  ZnodeTree t;
  t.track_changes(true);
  int64_t zxid = 0;
  add_quota_and_config(t, zxid);
  ASSERT_EQ(create(t, ++zxid, "/x", "1"), err::kOk);
  const std::string full = snapshot_of(t);
  t.start_change_record();
  jute::Stat st;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.set_data(ctx(++zxid), "/x", buf("2"), -1, st, out), err::kOk);
  const std::string d1 = delta_of(t);
  ASSERT_EQ(create(t, ++zxid, "/y"), err::kOk);
  const std::string d2 = delta_of(t);
  ASSERT_EQ(t.set_data(ctx(++zxid), "/x", buf("3"), -1, st, out), err::kOk);
  const std::string d3 = delta_of(t);

  ZnodeTree loaded;
  ASSERT_TRUE(restore_chain(loaded, full, {d1, d2, d3}));
  EXPECT_EQ(snapshot_of(loaded), snapshot_of(t));

  const std::string before = snapshot_of(loaded);
  EXPECT_FALSE(restore_chain(loaded, full, {d2}));      // /y's link applies, the digest does not
  EXPECT_FALSE(restore_chain(loaded, full, {d1, d3}));  // d2's node missing
  EXPECT_FALSE(restore_chain(loaded, full, {d2, d1}));
  EXPECT_EQ(snapshot_of(loaded), before);
}

// Cut at every length, or with a byte changed anywhere, a delta never stops the process, never
// leaves the tree changed on failure, and a cut one always fails.
TEST(DeltaSnapshotTest, CutAndDamagedDeltasAreRefusedSafely) {
  TrackedTree tracked(11, 100);
  auto& [t, ops, log, zxid] = tracked;
  const std::string full = snapshot_of(t);
  t.start_change_record();
  for (int i = 0; i < 60; ++i) apply_random_op(t, ops, ++zxid, log);
  const std::string delta = delta_of(t);
  ASSERT_GT(delta.size(), 200u);
  const std::string want = snapshot_of(t);

  ZnodeTree loaded;
  for (size_t cut = 0; cut < delta.size(); ++cut) {
    ASSERT_FALSE(restore_chain(loaded, full, {delta.substr(0, cut)})) << "cut at " << cut;
  }
  std::mt19937_64 rng(5);
  size_t refused = 0;
  for (size_t at = 0; at < delta.size(); ++at) {
    std::string bad = delta;
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    ZnodeTree out;
    const std::string empty = snapshot_of(out);
    if (!restore_chain(out, full, {bad})) {
      ++refused;
      EXPECT_EQ(snapshot_of(out), empty) << "byte " << at;
    }
  }
  // The ACL table is outside the rolling digest (a flipped permission bit reads as another
  // ACL), so not every change is refused; most are.
  EXPECT_GT(refused, delta.size() * 9 / 10);
  ASSERT_TRUE(restore_chain(loaded, full, {delta}));
  EXPECT_EQ(snapshot_of(loaded), want);
}

TEST(DeltaSnapshotTest, ARestoreOrTrackingSwitchedOnLeavesNoPointUntilTheNextFullSnapshot) {
  ZnodeTree t;
  EXPECT_FALSE(t.tracking_changes());
  EXPECT_FALSE(t.delta_possible());
  t.start_change_record();  // without tracking: nothing
  EXPECT_FALSE(t.delta_possible());
  t.track_changes(true);
  EXPECT_FALSE(t.delta_possible());
  t.start_change_record();
  EXPECT_TRUE(t.delta_possible());
  const std::string full = snapshot_of(t);
  jute::Reader r(full);
  ASSERT_TRUE(t.deserialize(r));
  EXPECT_TRUE(t.tracking_changes());
  EXPECT_FALSE(t.delta_possible());
  t.start_change_record();
  EXPECT_TRUE(t.delta_possible());
  t.track_changes(false);
  EXPECT_FALSE(t.delta_possible());
}

// What a delta costs follows the writes, not the tree: 1,000 setData on a tree of 20,000
// nodes write a delta of one record.
TEST(DeltaSnapshotTest, ADeltaHoldsTheChangedNodesOnly) {
  ZnodeTree t;
  t.track_changes(true);
  int64_t zxid = 0;
  ASSERT_EQ(create(t, ++zxid, "/big"), err::kOk);
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(create(t, ++zxid, "/big/n" + std::to_string(i), std::string(100, 'x')), err::kOk);
  }
  const std::string full = snapshot_of(t);
  t.start_change_record();
  jute::Stat st;
  std::vector<WatchTrigger> out;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(t.set_data(ctx(++zxid), "/big/n7", buf(std::to_string(i)), -1, st, out), err::kOk);
  }
  EXPECT_LT(t.pending_delta_bytes(), 200u);
  const std::string delta = delta_of(t);
  EXPECT_LT(delta.size(), 400u);
  EXPECT_GT(full.size(), 20000u * 100);
  ZnodeTree loaded;
  ASSERT_TRUE(restore_chain(loaded, full, {delta}));
  EXPECT_EQ(snapshot_of(loaded), snapshot_of(t));
}

// With a limit, a record that outgrows it is dropped until the next point, so the memory it
// holds stays bounded however rarely snapshots come; after the next point deltas work again.
TEST(DeltaSnapshotTest, ARecordPastItsLimitIsDroppedUntilTheNextPoint) {
  ZnodeTree t;
  t.track_changes(true, 20000);
  int64_t zxid = 0;
  ASSERT_EQ(create(t, ++zxid, "/p"), err::kOk);
  std::string full = snapshot_of(t);
  t.start_change_record();
  for (int i = 0; i < 50; ++i) ASSERT_EQ(create(t, ++zxid, "/p/a" + std::to_string(i), "x"), err::kOk);
  ASSERT_TRUE(t.delta_possible());
  std::vector<std::string> deltas{delta_of(t)};
  for (int i = 0; i < 400; ++i) ASSERT_EQ(create(t, ++zxid, "/p/b" + std::to_string(i), "x"), err::kOk);
  EXPECT_FALSE(t.delta_possible());  // 400 records would pass 20,000 bytes
  EXPECT_EQ(t.pending_delta_bytes(), 0u);  // nothing held
  full = snapshot_of(t);
  t.start_change_record();
  ASSERT_TRUE(t.delta_possible());
  jute::Stat st;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.set_data(ctx(++zxid), "/p/b7", buf("y"), -1, st, out), err::kOk);
  deltas = {delta_of(t)};
  ZnodeTree loaded;
  ASSERT_TRUE(restore_chain(loaded, full, deltas));
  EXPECT_EQ(snapshot_of(loaded), snapshot_of(t));
}

}  // namespace
}  // namespace zkraft::tree
