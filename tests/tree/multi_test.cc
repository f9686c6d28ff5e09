#include <gtest/gtest.h>

#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

CreateOp make_create(std::string path, int32_t mode = 0, std::string data = "") {
  return CreateOp{std::move(path), buf(data), kOpen, mode, -1};
}

TEST(MultiTest, SuccessAppliesAllWithOneZxid) {
  ZnodeTree t;
  std::vector<MultiOp> ops{make_create("/m", 0, "a"), make_create("/m/c"),
                           SetDataOp{"/m", buf("bb"), 0}, CheckOp{"/m", 1},
                           make_create("/m/s-", 2), DeleteOp{"/m/c", 0}};
  std::vector<WatchTrigger> out;
  bool ok = false;
  auto results = t.multi(ctx(7), ops, out, ok);
  ASSERT_TRUE(ok);
  ASSERT_EQ(results.size(), ops.size());
  for (const auto& r : results) EXPECT_EQ(r.err, err::kOk);
  EXPECT_EQ(results[0].path, "/m");
  EXPECT_EQ(results[0].stat.czxid, 7);
  EXPECT_EQ(results[0].stat.version, 0);  // stat as of the create itself
  EXPECT_EQ(results[1].path, "/m/c");
  EXPECT_EQ(results[2].stat.version, 1);
  EXPECT_EQ(results[2].stat.data_length, 2);
  EXPECT_EQ(results[2].stat.num_children, 1);
  EXPECT_EQ(results[4].path, "/m/s-0000000001");

  EXPECT_EQ(out, (std::vector<WatchTrigger>{
                     {EventType::kNodeCreated, "/m"},
                     {EventType::kNodeChildrenChanged, "/"},
                     {EventType::kNodeCreated, "/m/c"},
                     {EventType::kNodeChildrenChanged, "/m"},
                     {EventType::kNodeDataChanged, "/m"},
                     {EventType::kNodeCreated, "/m/s-0000000001"},
                     {EventType::kNodeChildrenChanged, "/m"},
                     {EventType::kNodeDeleted, "/m/c"},
                     {EventType::kNodeChildrenChanged, "/m"},
                 }));
  jute::Stat m = stat(t, "/m");
  EXPECT_EQ(m.czxid, 7);
  EXPECT_EQ(m.mzxid, 7);
  EXPECT_EQ(m.pzxid, 7);
  EXPECT_EQ(m.cversion, 3);  // two creates + one delete
  EXPECT_EQ(m.num_children, 1);
  EXPECT_EQ(t.last_zxid(), 7);
}

TEST(MultiTest, FailureChangesNothingAndReportsLikeZooKeeper) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/p"), err::kOk);
  ASSERT_EQ(create(t, 2, "/p/c1"), err::kOk);
  ASSERT_EQ(create(t, 3, "/p/c2"), err::kOk);
  ASSERT_EQ(create(t, 4, "/p/c3", "", 1, kOpen, 55), err::kOk);
  ZnodeTree twin;
  ASSERT_EQ(create(twin, 1, "/p"), err::kOk);
  ASSERT_EQ(create(twin, 2, "/p/c1"), err::kOk);
  ASSERT_EQ(create(twin, 3, "/p/c2"), err::kOk);
  ASSERT_EQ(create(twin, 4, "/p/c3", "", 1, kOpen, 55), err::kOk);
  std::vector<std::string> order_before = children(t, "/p");

  std::vector<jute::ACL> fresh_acl{{jute::perms::kRead, {"ip", "1.2.3.4"}}};
  std::vector<MultiOp> ops{DeleteOp{"/p/c1", -1},
                           CreateOp{"/p/new", buf("x"), fresh_acl, 0, -1},
                           SetDataOp{"/p", buf("changed"), -1},
                           DeleteOp{"/p/c3", -1},
                           make_create("/p/seq-", 2),
                           DeleteOp{"/p/missing", -1},
                           make_create("/never")};
  std::vector<WatchTrigger> out;
  bool ok = true;
  auto results = t.multi(ctx(10), ops, out, ok);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(out.empty());
  ASSERT_EQ(results.size(), 7u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(results[i].err, err::kOk) << i;
    EXPECT_TRUE(results[i].path.empty());
  }
  EXPECT_EQ(results[5].err, err::kNoNode);
  EXPECT_EQ(results[6].err, err::kRuntimeInconsistency);

  EXPECT_EQ(children(t, "/p"), order_before);
  EXPECT_EQ(t.ephemeral_count(), 1u);
  EXPECT_EQ(t.ephemerals_of(55, "/"), std::vector<std::string>{"/p/c3"});
  EXPECT_EQ(t.approximate_data_size(), twin.approximate_data_size());
  EXPECT_EQ(t.node_count(), twin.node_count());
  twin.set_last_zxid(10);
  EXPECT_EQ(t.digest(), twin.digest());
  EXPECT_EQ(t.rolling_digest(), twin.rolling_digest());

  // The next sequential name is unaffected by the aborted create.
  std::string p;
  ASSERT_EQ(create(t, 11, "/p/s-", "", 2, kOpen, 0, &p), err::kOk);
  EXPECT_EQ(p, "/p/s-0000000003");
}

TEST(MultiTest, FirstOpFailing) {
  ZnodeTree t;
  std::vector<MultiOp> ops{CheckOp{"/missing", -1}, make_create("/a")};
  std::vector<WatchTrigger> out;
  bool ok = true;
  auto results = t.multi(ctx(1), ops, out, ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(results[0].err, err::kNoNode);
  EXPECT_EQ(results[1].err, err::kRuntimeInconsistency);
  EXPECT_FALSE(t.contains("/a"));
}

TEST(MultiTest, CheckVersionFailure) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/a"), err::kOk);
  std::vector<MultiOp> ops{SetDataOp{"/a", buf("1"), -1}, CheckOp{"/a", 0}};
  std::vector<WatchTrigger> out;
  bool ok = true;
  auto results = t.multi(ctx(2), ops, out, ok);
  EXPECT_FALSE(ok);  // the check sees version 1 after the setData
  EXPECT_EQ(results[0].err, err::kOk);
  EXPECT_EQ(results[1].err, err::kBadVersion);
  EXPECT_EQ(stat(t, "/a").version, 0);
}

TEST(MultiTest, CreateThenDeleteSameNode) {
  ZnodeTree t;
  std::vector<MultiOp> ops{make_create("/tmp"), DeleteOp{"/tmp", 0}};
  std::vector<WatchTrigger> out;
  bool ok = false;
  auto results = t.multi(ctx(3), ops, out, ok);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(t.contains("/tmp"));
  EXPECT_EQ(stat(t, "/").cversion, 1);  // one create + one delete, plus -1 for /zookeeper
  EXPECT_EQ(out.size(), 4u);
}

TEST(MultiTest, EmptyMultiSucceeds) {
  ZnodeTree t;
  std::vector<WatchTrigger> out;
  bool ok = false;
  auto results = t.multi(ctx(4), {}, out, ok);
  EXPECT_TRUE(ok);
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(t.last_zxid(), 4);
}

TEST(MultiTest, RollbackRestoresDeletedSubtreeAndAcls) {
  ZnodeTree t;
  std::vector<jute::ACL> unique_acl{{jute::perms::kAll, {"digest", "u:h"}}};
  std::vector<jute::Id> u{{"digest", "u:h"}};
  ASSERT_EQ(create(t, 1, "/d"), err::kOk);
  ASSERT_EQ(create(t, 2, "/d/x", "payload", 0, unique_acl), err::kOk);
  uint64_t before = t.digest();
  jute::Stat d_before = stat(t, "/d");
  TxnContext c = ctx(3, 0, &u);
  std::vector<MultiOp> ops{DeleteOp{"/d/x", -1}, DeleteOp{"/d", -1}, make_create("/d"),
                           CheckOp{"/d", 5}};
  std::vector<WatchTrigger> out;
  bool ok = true;
  auto results = t.multi(c, ops, out, ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(results[3].err, err::kBadVersion);
  jute::Buffer data;
  jute::Stat s;
  ASSERT_EQ(t.get_data("/d/x", u, data, s), err::kOk);
  EXPECT_EQ(data.bytes, "payload");
  EXPECT_EQ(t.get_data("/d/x", kNobody, data, s), err::kNoAuth);
  EXPECT_EQ(stat(t, "/d"), d_before);
  t.set_last_zxid(2);
  EXPECT_EQ(t.digest(), before);
}

}  // namespace
}  // namespace zkraft::tree
