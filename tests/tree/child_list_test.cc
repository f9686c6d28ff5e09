// A node's pzxid and cversion live in its ChildList, which a leaf that never had a child does
// not have (tree/znode.h). These tests follow one node through the changes that make, keep and
// restore that list, and check the Stat ZooKeeper gives at each step (DataTree.createNode and
// deleteNode of 3.9: pzxid moves to the zxid of each child create and delete, cversion counts
// creates and deletes as clients see it, and neither goes back when the last child goes).
// An ephemeral keeps its owning session where that list's pointer would be, and a TTL node keeps
// its TTL in its list: the last tests follow both through the same changes.
#include <gtest/gtest.h>

#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

ZnodeTree restored(const std::string& bytes) {
  ZnodeTree t;
  jute::Reader r(bytes);
  EXPECT_TRUE(t.deserialize(r));
  return t;
}

void expect_same_stat(const jute::Stat& a, const jute::Stat& b) {
  EXPECT_EQ(a.czxid, b.czxid);
  EXPECT_EQ(a.mzxid, b.mzxid);
  EXPECT_EQ(a.pzxid, b.pzxid);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.cversion, b.cversion);
  EXPECT_EQ(a.num_children, b.num_children);
}

TEST(ChildListTest, ALeafReportsItsCzxidAsPzxidAndNoChildChanges) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 5, "/leaf", "x"), err::kOk);
  jute::Stat s = stat(t, "/leaf");
  EXPECT_EQ(s.czxid, 5);
  EXPECT_EQ(s.pzxid, 5);
  EXPECT_EQ(s.cversion, 0);
  EXPECT_EQ(s.num_children, 0);
}

TEST(ChildListTest, AParentKeepsItsPzxidAndCversionWhenItsLastChildGoes) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/p"), err::kOk);
  ASSERT_EQ(create(t, 2, "/p/a"), err::kOk);
  ASSERT_EQ(create(t, 3, "/p/b"), err::kOk);
  ASSERT_EQ(remove(t, 4, "/p/a"), err::kOk);
  ASSERT_EQ(remove(t, 5, "/p/b"), err::kOk);
  jute::Stat s = stat(t, "/p");
  EXPECT_EQ(s.czxid, 1);
  EXPECT_EQ(s.pzxid, 5);
  EXPECT_EQ(s.cversion, 4);  // two creates and two deletes
  EXPECT_EQ(s.num_children, 0);
  EXPECT_TRUE(children(t, "/p").empty());

  // The sequence counter was kept with them: the next sequential child is the third create.
  std::string path;
  ASSERT_EQ(create(t, 6, "/p/s-", "", 2, kOpen, 0, &path), err::kOk);
  EXPECT_EQ(path, "/p/s-0000000002");
  EXPECT_EQ(stat(t, "/p").cversion, 5);  // 3 creates * 2 - 1 child
  EXPECT_EQ(stat(t, "/p").pzxid, 6);
}

TEST(ChildListTest, ASnapshotCarriesTheChildStampOfLeavesAndEmptiedParents) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/emptied"), err::kOk);
  ASSERT_EQ(create(t, 2, "/emptied/c"), err::kOk);
  ASSERT_EQ(remove(t, 3, "/emptied/c"), err::kOk);
  ASSERT_EQ(create(t, 4, "/leaf"), err::kOk);
  ASSERT_EQ(create(t, 5, "/full"), err::kOk);
  ASSERT_EQ(create(t, 6, "/full/c"), err::kOk);

  ZnodeTree back = restored(snapshot_of(t));
  for (const char* path : {"/", "/emptied", "/leaf", "/full", "/full/c"}) {
    SCOPED_TRACE(path);
    expect_same_stat(stat(back, path), stat(t, path));
  }
  EXPECT_EQ(stat(back, "/emptied").pzxid, 3);
  EXPECT_EQ(stat(back, "/emptied").cversion, 2);
  EXPECT_EQ(stat(back, "/leaf").pzxid, 4);
  EXPECT_EQ(back.digest(), t.digest());
  EXPECT_EQ(snapshot_of(back), snapshot_of(t));
}

TEST(ChildListTest, AFailedMultiPutsBackTheChildStampOfALeafItMadeAParent) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/leaf"), err::kOk);
  ASSERT_EQ(create(t, 2, "/p"), err::kOk);
  ASSERT_EQ(create(t, 3, "/p/only"), err::kOk);
  const jute::Stat leaf_before = stat(t, "/leaf");
  const jute::Stat p_before = stat(t, "/p");
  const uint64_t digest_before = t.rolling_digest();

  // The leaf gets its first child and /p loses its only one; then the multi fails.
  std::vector<MultiOp> ops{CreateOp{"/leaf/c", buf(""), kOpen, 0, -1}, DeleteOp{"/p/only", -1},
                           DeleteOp{"/missing", -1}};
  std::vector<WatchTrigger> out;
  bool ok = true;
  t.multi(ctx(10), ops, out, ok);
  ASSERT_FALSE(ok);

  expect_same_stat(stat(t, "/leaf"), leaf_before);
  expect_same_stat(stat(t, "/p"), p_before);
  EXPECT_EQ(children(t, "/p"), std::vector<std::string>{"only"});
  EXPECT_TRUE(children(t, "/leaf").empty());
  EXPECT_EQ(t.rolling_digest(), digest_before);
}

constexpr int32_t kEphemeralMode = 1;
constexpr int32_t kTtlMode = 5;  // PERSISTENT_WITH_TTL

TEST(ChildListTest, AnEphemeralKeepsItsOwnerThroughAFailedMultiAndASnapshot) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/e", "x", kEphemeralMode, kOpen, 0x1234), err::kOk);
  ASSERT_EQ(create(t, 2, "/e/c"), err::kNoChildrenForEphemerals);
  EXPECT_EQ(stat(t, "/e").ephemeral_owner, 0x1234);

  // The multi deletes the ephemeral (its Znode moves into the undo log) and fails: it comes back.
  std::vector<MultiOp> ops{DeleteOp{"/e", -1}, DeleteOp{"/missing", -1}};
  std::vector<WatchTrigger> out;
  bool ok = true;
  t.multi(ctx(3), ops, out, ok);
  ASSERT_FALSE(ok);
  EXPECT_EQ(stat(t, "/e").ephemeral_owner, 0x1234);
  EXPECT_EQ(stat(t, "/e").pzxid, 1);
  EXPECT_EQ(t.ephemeral_count(), 1u);

  ZnodeTree back = restored(snapshot_of(t));
  EXPECT_EQ(stat(back, "/e").ephemeral_owner, 0x1234);
  EXPECT_EQ(back.digest(), t.digest());
  // The session's close finds it by that owner, in the copy as in the original.
  back.close_session(ctx(4), 0x1234, out);
  EXPECT_FALSE(back.contains("/e"));
  EXPECT_EQ(back.ephemeral_count(), 0u);
}

TEST(ChildListTest, ATtlNodeKeepsItsTtlBesideItsChildren) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/t", "", kTtlMode, kOpen, 0, nullptr, 500), err::kOk);
  jute::Stat s = stat(t, "/t");
  EXPECT_EQ(s.ephemeral_owner, 0);  // DataNode.getClientEphemeralOwner: 0 but for a session
  EXPECT_EQ(s.pzxid, 1);            // a leaf's child stamp, though its list exists for the TTL
  EXPECT_EQ(s.cversion, 0);

  ASSERT_EQ(create(t, 2, "/t/c"), err::kOk);
  EXPECT_EQ(stat(t, "/t").pzxid, 2);
  // Time is zxid * 1000 ms: long past the TTL, but a node with a child is not reaped.
  EXPECT_TRUE(t.reap_candidates(100000, 10).empty());
  ASSERT_EQ(remove(t, 3, "/t/c"), err::kOk);
  EXPECT_EQ(t.reap_candidates(1400, 10), std::vector<std::string>{});  // mtime 1000 + 500 not passed
  EXPECT_EQ(t.reap_candidates(1600, 10), std::vector<std::string>{"/t"});

  ZnodeTree back = restored(snapshot_of(t));
  EXPECT_EQ(back.reap_candidates(1400, 10), std::vector<std::string>{});
  EXPECT_EQ(back.reap_candidates(1600, 10), std::vector<std::string>{"/t"});
  expect_same_stat(stat(back, "/t"), stat(t, "/t"));
  EXPECT_EQ(back.digest(), t.digest());
}

}  // namespace
}  // namespace zkraft::tree
