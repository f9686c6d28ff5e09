// A node's pzxid and cversion live in its ChildList, which a leaf that never had a child does
// not have (tree/znode.h). These tests follow one node through the changes that make, keep and
// restore that list, and check the Stat ZooKeeper gives at each step (DataTree.createNode and
// deleteNode of 3.9: pzxid moves to the zxid of each child create and delete, cversion counts
// creates and deletes as clients see it, and neither goes back when the last child goes).
#include <gtest/gtest.h>

#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

std::string snapshot_of(const ZnodeTree& t) {
  jute::Writer w;
  t.serialize(w);
  return w.take();
}

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

}  // namespace
}  // namespace zkraft::tree
