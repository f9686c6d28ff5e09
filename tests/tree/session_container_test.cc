#include <gtest/gtest.h>

#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

TEST(SessionTest, CloseSessionDeletesOnlyItsEphemeralsInSortedOrder) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/a"), err::kOk);
  ASSERT_EQ(create(t, 2, "/b"), err::kOk);
  ASSERT_EQ(create(t, 3, "/b/z", "", 1, kOpen, 5), err::kOk);
  ASSERT_EQ(create(t, 4, "/a/y", "", 1, kOpen, 5), err::kOk);
  ASSERT_EQ(create(t, 5, "/a/keep", "", 1, kOpen, 6), err::kOk);
  ASSERT_EQ(create(t, 6, "/a/persistent"), err::kOk);
  std::vector<WatchTrigger> out;
  t.close_session(ctx(9), 5, out);
  EXPECT_EQ(out, (std::vector<WatchTrigger>{{EventType::kNodeDeleted, "/a/y"},
                                           {EventType::kNodeChildrenChanged, "/a"},
                                           {EventType::kNodeDeleted, "/b/z"},
                                           {EventType::kNodeChildrenChanged, "/b"}}));
  EXPECT_FALSE(t.contains("/a/y"));
  EXPECT_FALSE(t.contains("/b/z"));
  EXPECT_TRUE(t.contains("/a/keep"));
  EXPECT_EQ(t.ephemeral_count(), 1u);
  EXPECT_EQ(stat(t, "/a").pzxid, 9);
  EXPECT_EQ(stat(t, "/a").cversion, 4);  // 3 creates + 1 delete
  EXPECT_EQ(stat(t, "/b").pzxid, 9);
  EXPECT_EQ(t.last_zxid(), 9);
  // Closing again, or an unknown session, does nothing but record the zxid.
  out.clear();
  t.close_session(ctx(10), 5, out);
  t.close_session(ctx(11), 12345, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(t.last_zxid(), 11);
}

TEST(ContainerTest, OwnerHiddenAndReaperRules) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/c", "", 4), err::kOk);
  ASSERT_EQ(create(t, 2, "/fresh", "", 4), err::kOk);
  EXPECT_EQ(stat(t, "/c").ephemeral_owner, 0);
  // Never had a child: not a candidate unless max_never_used_ms says so.
  EXPECT_TRUE(t.reap_candidates(1'000'000, 10).empty());
  ASSERT_EQ(create(t, 3, "/c/child"), err::kOk);
  EXPECT_TRUE(t.reap_candidates(1'000'000, 10).empty());  // has a child
  ASSERT_EQ(remove(t, 4, "/c/child"), err::kOk);
  EXPECT_EQ(t.reap_candidates(0, 10), std::vector<std::string>{"/c"});
  // /fresh: mtime 2000; older than 500 ms at now = 2501, not at 2500.
  EXPECT_EQ(t.reap_candidates(2500, 10, 500), std::vector<std::string>{"/c"});
  EXPECT_EQ(t.reap_candidates(2501, 10, 500), (std::vector<std::string>{"/c", "/fresh"}));
  EXPECT_EQ(t.reap_candidates(2501, 1, 500), std::vector<std::string>{"/c"});
  // Containers may have children of any kind, including ephemerals.
  EXPECT_EQ(create(t, 5, "/c/e", "", 1, kOpen, 3), err::kOk);
}

TEST(ContainerTest, TtlNodes) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/t", "", 5, kOpen, 0, nullptr, 100), err::kOk);
  std::string p;
  ASSERT_EQ(create(t, 2, "/ts-", "", 6, kOpen, 0, &p, 50), err::kOk);
  EXPECT_EQ(p, "/ts-0000000001");  // root counter: /t was its first create
  EXPECT_EQ(stat(t, "/t").ephemeral_owner, 0);
  // /t: mtime 1000, ttl 100 -> candidate once now - 1000 > 100.
  EXPECT_TRUE(t.reap_candidates(1100, 10).empty());
  EXPECT_EQ(t.reap_candidates(1101, 10), std::vector<std::string>{"/t"});
  EXPECT_EQ(t.reap_candidates(2051, 10), (std::vector<std::string>{"/t", "/ts-0000000001"}));
  // A setData refreshes mtime.
  jute::Stat s;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.set_data(ctx(3), "/t", buf("x"), -1, s, out), err::kOk);
  EXPECT_EQ(t.reap_candidates(3100, 10), std::vector<std::string>{"/ts-0000000001"});
  EXPECT_EQ(t.reap_candidates(3101, 10), (std::vector<std::string>{"/t", "/ts-0000000001"}));
  // With a child it is not a candidate.
  ASSERT_EQ(create(t, 4, "/t/c"), err::kOk);
  EXPECT_EQ(t.reap_candidates(100000, 10), std::vector<std::string>{"/ts-0000000001"});
}

TEST(ContainerTest, DeleteContainer) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/c", "", 4), err::kOk);
  ASSERT_EQ(create(t, 2, "/c/x"), err::kOk);
  ASSERT_EQ(create(t, 3, "/e", "", 1, kOpen, 8), err::kOk);
  ASSERT_EQ(create(t, 4, "/plain"), err::kOk);
  std::vector<WatchTrigger> out;
  EXPECT_EQ(t.delete_container(ctx(5), "/zookeeper", out), err::kBadArguments);
  EXPECT_EQ(t.delete_container(ctx(5), "nope", out), err::kBadArguments);
  EXPECT_EQ(t.delete_container(ctx(5), "/missing", out), err::kNoNode);
  EXPECT_EQ(t.delete_container(ctx(5), "/c", out), err::kNotEmpty);
  EXPECT_EQ(t.delete_container(ctx(5), "/e", out), err::kBadVersion);
  EXPECT_TRUE(out.empty());
  ASSERT_EQ(remove(t, 6, "/c/x"), err::kOk);
  ASSERT_EQ(t.delete_container(ctx(7), "/c", out), err::kOk);
  EXPECT_EQ(out, (std::vector<WatchTrigger>{{EventType::kNodeDeleted, "/c"},
                                           {EventType::kNodeChildrenChanged, "/"}}));
  EXPECT_TRUE(t.reap_candidates(0, 10).empty());
  // ZooKeeper's deleteContainer only refuses session ephemerals; a persistent node goes too.
  EXPECT_EQ(t.delete_container(ctx(8), "/plain", out), err::kOk);
}

}  // namespace
}  // namespace zkraft::tree
