#include "tree/znode_tree.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/tree/tree_test_util.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;
namespace perms = jute::perms;
using jute::ACL;
using jute::Id;
using jute::Stat;

Stat expected_stat(int64_t czxid, int64_t mzxid, int64_t pzxid, int32_t version, int32_t cversion,
                   int32_t aversion, int64_t owner, int32_t data_length, int32_t num_children) {
  Stat s;
  s.czxid = czxid;
  s.mzxid = mzxid;
  s.ctime = czxid * 1000;
  s.mtime = mzxid * 1000;
  s.pzxid = pzxid;
  s.version = version;
  s.cversion = cversion;
  s.aversion = aversion;
  s.ephemeral_owner = owner;
  s.data_length = data_length;
  s.num_children = num_children;
  return s;
}

TEST(ZnodeTreeTest, FreshTreeMatchesZooKeeper) {
  ZnodeTree t;
  Stat root = stat(t, "/");
  EXPECT_EQ(root.cversion, -1);
  EXPECT_EQ(root.num_children, 1);
  EXPECT_EQ(root.czxid, 0);
  EXPECT_EQ(root.pzxid, 0);
  EXPECT_EQ(root.aversion, 0);
  Stat zk = stat(t, "/zookeeper");
  EXPECT_EQ(zk.cversion, -2);
  EXPECT_EQ(zk.num_children, 2);
  Stat config = stat(t, "/zookeeper/config");
  EXPECT_EQ(config.aversion, -1);
  EXPECT_EQ(config.cversion, 0);
  EXPECT_EQ(stat(t, "/zookeeper/quota"), Stat{});

  EXPECT_EQ(children(t, "/"), std::vector<std::string>{"zookeeper"});
  EXPECT_EQ(children(t, "/zookeeper"), (std::vector<std::string>{"quota", "config"}));

  std::vector<ACL> acl;
  Stat s;
  ASSERT_EQ(t.get_acl("/", kNobody, acl, s), err::kOk);
  EXPECT_EQ(acl, kOpen);
  ASSERT_EQ(t.get_acl("/zookeeper/config", kNobody, acl, s), err::kOk);
  EXPECT_EQ(acl, kReadOnly);

  jute::Buffer data;
  ASSERT_EQ(t.get_data("/", kNobody, data, s), err::kOk);
  EXPECT_FALSE(data.is_null);
  EXPECT_TRUE(data.bytes.empty());

  EXPECT_EQ(t.node_count(), 5u);  // 4 znodes + ZooKeeper's root alias
  EXPECT_EQ(t.approximate_data_size(), 44);  // "" + "/" + "/zookeeper" + "/zookeeper/quota" + "/zookeeper/config"
  EXPECT_EQ(t.ephemeral_count(), 0u);
  EXPECT_EQ(t.last_zxid(), 0);
  int32_t n = 0;
  ASSERT_EQ(t.get_all_children_number("/", kNobody, n), err::kOk);
  EXPECT_EQ(n, 3);
}

TEST(ZnodeTreeTest, EmptyPathIsTheRootForReads) {
  ZnodeTree t;
  Stat s;
  ASSERT_EQ(t.exists("", kNobody, s), err::kOk);
  EXPECT_EQ(s.num_children, 1);
  EXPECT_EQ(t.exists("relative", kNobody, s), err::kNoNode);
  EXPECT_EQ(t.exists("/a//b", kNobody, s), err::kNoNode);
}

TEST(ZnodeTreeTest, CreateSetsStatsAndTriggers) {
  ZnodeTree t;
  std::string created;
  Stat s;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.create(ctx(1), "/a", buf("x"), kOpen, 0, -1, created, &s, out), err::kOk);
  EXPECT_EQ(created, "/a");
  EXPECT_EQ(s, expected_stat(1, 1, 1, 0, 0, 0, 0, 1, 0));
  EXPECT_EQ(out, (std::vector<WatchTrigger>{{EventType::kNodeCreated, "/a"},
                                           {EventType::kNodeChildrenChanged, "/"}}));
  // Root: one create -> internal cversion 1 -> client 1*2 - 2 children = 0; pzxid = 1.
  Stat root = stat(t, "/");
  EXPECT_EQ(root.cversion, 0);
  EXPECT_EQ(root.pzxid, 1);
  EXPECT_EQ(root.num_children, 2);

  out.clear();
  ASSERT_EQ(t.create(ctx(2), "/a/b", buf(""), kOpen, 0, -1, created, &s, out), err::kOk);
  EXPECT_EQ(out, (std::vector<WatchTrigger>{{EventType::kNodeCreated, "/a/b"},
                                           {EventType::kNodeChildrenChanged, "/a"}}));
  EXPECT_EQ(stat(t, "/a"), expected_stat(1, 1, 2, 0, 1, 0, 0, 1, 1));

  EXPECT_EQ(t.last_zxid(), 2);
  EXPECT_EQ(t.node_count(), 7u);
  EXPECT_EQ(t.approximate_data_size(), 44 + 2 + 1 + 4);
}

TEST(ZnodeTreeTest, CreateNullAndEmptyDataStayDistinct) {
  ZnodeTree t;
  std::string created;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.create(ctx(1), "/null", jute::Buffer::null(), kOpen, 0, -1, created, nullptr, out), err::kOk);
  ASSERT_EQ(t.create(ctx(2), "/empty", buf(""), kOpen, 0, -1, created, nullptr, out), err::kOk);
  jute::Buffer d;
  Stat s;
  ASSERT_EQ(t.get_data("/null", kNobody, d, s), err::kOk);
  EXPECT_TRUE(d.is_null);
  EXPECT_EQ(s.data_length, 0);
  ASSERT_EQ(t.get_data("/empty", kNobody, d, s), err::kOk);
  EXPECT_FALSE(d.is_null);
}

TEST(ZnodeTreeTest, CreateErrorOrder) {
  ZnodeTree t;
  std::vector<ACL> read_only_parent{{perms::kRead, {"world", "anyone"}}};
  ASSERT_EQ(create(t, 1, "/ro", "", 0, read_only_parent), err::kOk);
  ASSERT_EQ(create(t, 2, "/a"), err::kOk);
  ASSERT_EQ(create(t, 3, "/eph", "", 1, kOpen, 77), err::kOk);

  // Flags and TTL first, before anything about the path.
  EXPECT_EQ(create(t, 10, "bad", "", 99), err::kBadArguments);
  EXPECT_EQ(create(t, 10, "/x", "", 7), err::kBadArguments);
  EXPECT_EQ(create(t, 10, "/x", "", 0, kOpen, 0, nullptr, 5), err::kBadArguments);   // ttl on non-TTL
  EXPECT_EQ(create(t, 10, "/x", "", 5, kOpen, 0, nullptr, 0), err::kBadArguments);   // ttl 0
  EXPECT_EQ(create(t, 10, "/x", "", 5, kOpen, 0, nullptr, -1), err::kBadArguments);
  EXPECT_EQ(create(t, 10, "/x", "", 6, kOpen, 0, nullptr, kMaxTtlMs + 1), err::kBadArguments);
  // Path needs a '/' and no NUL.
  EXPECT_EQ(create(t, 10, "noslash"), err::kBadArguments);
  EXPECT_EQ(create(t, 10, std::string("/a\0b", 4)), err::kBadArguments);
  // ACL before the parent lookup.
  EXPECT_EQ(create(t, 10, "/missing/x", "", 0, {}), err::kInvalidAcl);
  EXPECT_EQ(create(t, 10, "/missing/x", "", 0, {{perms::kAll, {"auth", ""}}}), err::kInvalidAcl);
  EXPECT_EQ(create(t, 10, "/missing/x", "", 0, {{perms::kAll, {"bogus", "x"}}}), err::kInvalidAcl);
  EXPECT_EQ(create(t, 10, "/missing/x"), err::kNoNode);
  // ZooKeeper looks up the parent before it validates the whole path: "/missing//x" has parent
  // "/missing/", which does not exist.
  EXPECT_EQ(create(t, 10, "/missing//x"), err::kNoNode);
  // CREATE permission before validation and existence.
  EXPECT_EQ(create(t, 10, "/ro/x"), err::kNoAuth);
  EXPECT_EQ(create(t, 10, "/ro/"), err::kNoAuth);
  // Full validation once the parent passed.
  EXPECT_EQ(create(t, 10, "/a/"), err::kBadArguments);
  EXPECT_EQ(create(t, 10, "/a/.."), err::kBadArguments);
  EXPECT_EQ(create(t, 10, "/"), err::kNodeExists);
  EXPECT_EQ(create(t, 10, "/a"), err::kNodeExists);
  EXPECT_EQ(create(t, 10, "/eph/child"), err::kNoChildrenForEphemerals);
  EXPECT_EQ(create(t, 10, "/eph/child", "", 2), err::kNoChildrenForEphemerals);

  // Failed creates changed nothing but last_zxid.
  EXPECT_EQ(t.last_zxid(), 10);
  EXPECT_EQ(stat(t, "/a").cversion, 0);
  EXPECT_EQ(stat(t, "/").pzxid, 3);
  EXPECT_EQ(t.node_count(), 8u);
}

TEST(ZnodeTreeTest, CreateUnderZookeeperIsAllowed) {
  ZnodeTree t;
  EXPECT_EQ(create(t, 1, "/zookeeper/mine"), err::kOk);
}

TEST(ZnodeTreeTest, SequentialNames) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/q"), err::kOk);
  ASSERT_EQ(create(t, 2, "/q/plain"), err::kOk);
  std::string p;
  ASSERT_EQ(create(t, 3, "/q/s-", "", 2, kOpen, 0, &p), err::kOk);
  EXPECT_EQ(p, "/q/s-0000000001");  // the counter counts every child create
  ASSERT_EQ(remove(t, 4, p), err::kOk);
  ASSERT_EQ(create(t, 5, "/q/s-", "", 3, kOpen, 9, &p), err::kOk);
  EXPECT_EQ(p, "/q/s-0000000002");  // deletes never lower it
  ASSERT_EQ(remove(t, 6, "/q/plain"), err::kOk);
  ASSERT_EQ(create(t, 7, "/q/", "", 2, kOpen, 0, &p), err::kOk);
  EXPECT_EQ(p, "/q/0000000003");  // a trailing '/' is fine for sequential nodes
  // creates: plain, s-1, s-2, 3 = 4; deletes: 2 -> client cversion 6 with 2 children.
  Stat q = stat(t, "/q");
  EXPECT_EQ(q.cversion, 6);
  EXPECT_EQ(q.num_children, 2);
  EXPECT_EQ(q.pzxid, 7);

  // A sequential name colliding with an existing node is NodeExists.
  ASSERT_EQ(create(t, 8, "/r"), err::kOk);
  ASSERT_EQ(create(t, 9, "/r/n0000000001"), err::kOk);  // counter now 1
  EXPECT_EQ(create(t, 10, "/r/n", "", 2), err::kNodeExists);
  EXPECT_EQ(create(t, 11, "/r/n", "", 2), err::kNodeExists);  // a failure does not count
  ASSERT_EQ(create(t, 12, "/r/m"), err::kOk);
  ASSERT_EQ(create(t, 13, "/r/n", "", 2, kOpen, 0, &p), err::kOk);
  EXPECT_EQ(p, "/r/n0000000002");
}

TEST(ZnodeTreeTest, DeleteUpdatesParentAndTriggers) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/a"), err::kOk);
  ASSERT_EQ(create(t, 2, "/a/b"), err::kOk);
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.remove(ctx(3), "/a/b", 0, out), err::kOk);
  EXPECT_EQ(out, (std::vector<WatchTrigger>{{EventType::kNodeDeleted, "/a/b"},
                                           {EventType::kNodeChildrenChanged, "/a"}}));
  // 1 create + 1 delete.
  EXPECT_EQ(stat(t, "/a"), expected_stat(1, 1, 3, 0, 2, 0, 0, 0, 0));
  EXPECT_FALSE(t.contains("/a/b"));
  EXPECT_EQ(t.node_count(), 6u);
  EXPECT_EQ(t.approximate_data_size(), 44 + 2);
}

TEST(ZnodeTreeTest, DeleteErrorOrder) {
  ZnodeTree t;
  std::vector<ACL> no_delete{{perms::kAll & ~perms::kDelete, {"world", "anyone"}}};
  ASSERT_EQ(create(t, 1, "/nd", "", 0, no_delete), err::kOk);
  ASSERT_EQ(create(t, 2, "/nd/x"), err::kOk);
  ASSERT_EQ(create(t, 3, "/p"), err::kOk);
  ASSERT_EQ(create(t, 4, "/p/c"), err::kOk);

  for (const char* special : {"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"}) {
    EXPECT_EQ(remove(t, 10, special), err::kBadArguments) << special;
  }
  EXPECT_EQ(remove(t, 10, "noslash"), err::kBadArguments);
  EXPECT_EQ(remove(t, 10, std::string("/p\0", 3)), err::kBadArguments);
  EXPECT_EQ(remove(t, 10, "/missing/x"), err::kNoNode);
  // DELETE on the parent is checked before the node's existence.
  EXPECT_EQ(remove(t, 10, "/nd/nothere"), err::kNoAuth);
  EXPECT_EQ(remove(t, 10, "/nd/x"), err::kNoAuth);
  EXPECT_EQ(remove(t, 10, "/p/nothere"), err::kNoNode);
  // Version before emptiness.
  EXPECT_EQ(remove(t, 10, "/p", 5), err::kBadVersion);
  EXPECT_EQ(remove(t, 10, "/p", 0), err::kNotEmpty);
  EXPECT_EQ(remove(t, 10, "/p/c", 1), err::kBadVersion);
  EXPECT_EQ(remove(t, 10, "/p/c", 0), err::kOk);
  EXPECT_EQ(remove(t, 11, "/p"), err::kOk);
  // The deleted node's own ACL does not matter, only the parent's.
  std::vector<ACL> nothing{{perms::kRead, {"world", "anyone"}}};
  ASSERT_EQ(create(t, 12, "/locked", "", 0, nothing), err::kOk);
  EXPECT_EQ(remove(t, 13, "/locked"), err::kOk);
}

TEST(ZnodeTreeTest, SetDataStatsErrorsAndTriggers) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/a", "x"), err::kOk);
  Stat s;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.set_data(ctx(5), "/a", buf("yy"), 0, s, out), err::kOk);
  EXPECT_EQ(s, expected_stat(1, 5, 1, 1, 0, 0, 0, 2, 0));
  EXPECT_EQ(out, (std::vector<WatchTrigger>{{EventType::kNodeDataChanged, "/a"}}));
  EXPECT_EQ(t.approximate_data_size(), 44 + 2 + 2);
  out.clear();
  EXPECT_EQ(t.set_data(ctx(6), "/a", buf("z"), 0, s, out), err::kBadVersion);
  EXPECT_EQ(t.set_data(ctx(6), "/a/", buf("z"), -1, s, out), err::kBadArguments);
  EXPECT_EQ(t.set_data(ctx(6), "/nope", buf("z"), -1, s, out), err::kNoNode);
  EXPECT_TRUE(out.empty());
  ASSERT_EQ(t.set_data(ctx(7), "/a", jute::Buffer::null(), 1, s, out), err::kOk);
  EXPECT_EQ(s.version, 2);
  EXPECT_EQ(s.data_length, 0);
  jute::Buffer d;
  ASSERT_EQ(t.get_data("/a", kNobody, d, s), err::kOk);
  EXPECT_TRUE(d.is_null);
  EXPECT_EQ(t.approximate_data_size(), 44 + 2);

  // WRITE is needed; NoAuth comes before BadVersion.
  ASSERT_EQ(create(t, 8, "/ro", "", 0, kReadOnly), err::kOk);
  EXPECT_EQ(t.set_data(ctx(9), "/ro", buf("z"), 42, s, out), err::kNoAuth);
  // Setting data on the root works and counts the root once.
  ASSERT_EQ(t.set_data(ctx(10), "/", buf("abc"), -1, s, out), err::kOk);
  EXPECT_EQ(t.approximate_data_size(), 44 + 2 + 3 + 3);
}

TEST(ZnodeTreeTest, SetAclOrderAndAversion) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/a"), err::kOk);
  Stat s;
  EXPECT_EQ(t.set_acl(ctx(2), "/a/", kOpen, -1, s), err::kBadArguments);
  EXPECT_EQ(t.set_acl(ctx(2), "/missing", {}, -1, s), err::kInvalidAcl);  // ACL before existence
  EXPECT_EQ(t.set_acl(ctx(2), "/missing", kOpen, -1, s), err::kNoNode);
  EXPECT_EQ(t.set_acl(ctx(2), "/a", kOpen, 3, s), err::kBadVersion);
  ASSERT_EQ(t.set_acl(ctx(2), "/a", kReadOnly, 0, s), err::kOk);
  EXPECT_EQ(s.aversion, 1);
  EXPECT_EQ(s.version, 0);
  EXPECT_EQ(s.mzxid, 1);  // setACL does not touch mzxid
  // Without ADMIN now; NoAuth before BadVersion.
  EXPECT_EQ(t.set_acl(ctx(3), "/a", kOpen, 7, s), err::kNoAuth);
  std::vector<Id> super{{"super", ""}};
  EXPECT_EQ(t.set_acl(ctx(4, 0, &super), "/a", kOpen, 1, s), err::kOk);
  EXPECT_EQ(s.aversion, 2);
}

TEST(ZnodeTreeTest, AuthAclExpandsToCallerDigest) {
  ZnodeTree t;
  std::vector<Id> alice{{"ip", "127.0.0.1"}, {"digest", "alice:hash"}};
  std::vector<Id> bob{{"digest", "bob:hash"}};
  ASSERT_EQ(create(t, 1, "/private", "secret", 0, {{perms::kAll, {"auth", ""}}}, 0, nullptr, -1, &alice),
            err::kOk);
  std::vector<ACL> acl;
  Stat s;
  ASSERT_EQ(t.get_acl("/private", alice, acl, s), err::kOk);
  EXPECT_EQ(acl, (std::vector<ACL>{{perms::kAll, {"digest", "alice:hash"}}}));
  jute::Buffer d;
  EXPECT_EQ(t.get_data("/private", bob, d, s), err::kNoAuth);
  EXPECT_EQ(t.get_data("/private", kNobody, d, s), err::kNoAuth);
  EXPECT_EQ(t.get_data("/private", alice, d, s), err::kOk);
  EXPECT_EQ(d.bytes, "secret");
}

TEST(ZnodeTreeTest, ReadPermissions) {
  ZnodeTree t;
  std::vector<ACL> admin_only{{perms::kAdmin, {"digest", "adm:h"}}, {perms::kRead, {"digest", "rd:h"}}};
  ASSERT_EQ(create(t, 1, "/n", "d", 0, admin_only), err::kOk);
  ASSERT_EQ(create(t, 2, "/open"), err::kOk);
  std::vector<Id> admin{{"digest", "adm:h"}};
  std::vector<Id> reader{{"digest", "rd:h"}};
  Stat s;
  jute::Buffer d;
  std::vector<std::string> kids;
  std::vector<ACL> acl;
  int32_t n = 0;

  EXPECT_EQ(t.get_data("/n", admin, d, s), err::kNoAuth);
  EXPECT_EQ(t.get_data("/n", reader, d, s), err::kOk);
  EXPECT_EQ(t.exists("/n", admin, s), err::kNoAuth);
  EXPECT_EQ(t.exists("/n", reader, s), err::kOk);
  EXPECT_EQ(t.exists("/missing", admin, s), err::kNoNode);
  EXPECT_EQ(t.exists(std::string("/n\0", 3), reader, s), err::kBadArguments);
  EXPECT_EQ(t.get_children("/n", admin, kids, &s), err::kNoAuth);
  EXPECT_EQ(t.get_children("/n", reader, kids, &s), err::kOk);
  EXPECT_EQ(t.get_all_children_number("/n", admin, n), err::kNoAuth);
  EXPECT_EQ(t.check_version("/n", admin, -1), err::kNoAuth);

  // getACL: READ or ADMIN; without ADMIN the digest hashes are masked.
  EXPECT_EQ(t.get_acl("/n", kNobody, acl, s), err::kNoAuth);
  ASSERT_EQ(t.get_acl("/n", reader, acl, s), err::kOk);
  EXPECT_EQ(acl, (std::vector<ACL>{{perms::kAdmin, {"digest", "adm:x"}},
                                   {perms::kRead, {"digest", "rd:x"}}}));
  ASSERT_EQ(t.get_acl("/n", admin, acl, s), err::kOk);
  EXPECT_EQ(acl, admin_only);
  std::vector<Id> super{{"super", ""}};
  ASSERT_EQ(t.get_acl("/n", super, acl, s), err::kOk);
  EXPECT_EQ(acl, admin_only);
}

TEST(ZnodeTreeTest, IpAclOnReads) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/lan", "", 0, {{perms::kRead, {"ip", "203.0.0.0/8"}}}), err::kOk);
  jute::Buffer d;
  Stat s;
  EXPECT_EQ(t.get_data("/lan", {{"ip", "203.20.30.40"}}, d, s), err::kOk);
  EXPECT_EQ(t.get_data("/lan", {{"ip", "127.0.0.1"}}, d, s), err::kNoAuth);
}

TEST(ZnodeTreeTest, GetAllChildrenNumber) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/a"), err::kOk);
  ASSERT_EQ(create(t, 2, "/a/b"), err::kOk);
  ASSERT_EQ(create(t, 3, "/a/b/c"), err::kOk);
  ASSERT_EQ(create(t, 4, "/a/d"), err::kOk);
  ASSERT_EQ(create(t, 5, "/ab"), err::kOk);  // a prefix sibling, not a descendant
  int32_t n = -1;
  ASSERT_EQ(t.get_all_children_number("/a", kNobody, n), err::kOk);
  EXPECT_EQ(n, 3);
  ASSERT_EQ(t.get_all_children_number("/a/b/c", kNobody, n), err::kOk);
  EXPECT_EQ(n, 0);
  ASSERT_EQ(t.get_all_children_number("/", kNobody, n), err::kOk);
  EXPECT_EQ(n, 3 + 5);
  ASSERT_EQ(t.get_all_children_number("", kNobody, n), err::kOk);
  EXPECT_EQ(n, 3 + 5 + 1);  // ZooKeeper's quirk: "" also counts the "/" alias
  EXPECT_EQ(t.get_all_children_number("/x", kNobody, n), err::kNoNode);
}

TEST(ZnodeTreeTest, CheckVersion) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/a"), err::kOk);
  EXPECT_EQ(t.check_version("/a", kNobody, 0), err::kOk);
  EXPECT_EQ(t.check_version("/a", kNobody, -1), err::kOk);
  EXPECT_EQ(t.check_version("/a", kNobody, 1), err::kBadVersion);
  EXPECT_EQ(t.check_version("/b", kNobody, 0), err::kNoNode);
  EXPECT_EQ(t.check_version("a", kNobody, 0), err::kBadArguments);
}

TEST(ZnodeTreeTest, EphemeralsIndexAndOwner) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/app"), err::kOk);
  ASSERT_EQ(create(t, 2, "/app/e1", "", 1, kOpen, 0x100), err::kOk);
  ASSERT_EQ(create(t, 3, "/app/e2", "", 3, kOpen, 0x100), err::kOk);
  ASSERT_EQ(create(t, 4, "/other", "", 1, kOpen, 0x100), err::kOk);
  ASSERT_EQ(create(t, 5, "/x", "", 1, kOpen, 0x200), err::kOk);
  EXPECT_EQ(stat(t, "/app/e1").ephemeral_owner, 0x100);
  EXPECT_EQ(stat(t, "/app").ephemeral_owner, 0);
  EXPECT_EQ(t.ephemeral_count(), 4u);
  EXPECT_EQ(t.ephemerals_of(0x100, "/app"),
            (std::vector<std::string>{"/app/e1", "/app/e20000000001"}));
  EXPECT_EQ(t.ephemerals_of(0x100, "").size(), 3u);
  EXPECT_EQ(t.ephemerals_of(0x100, " / ").size(), 3u);
  EXPECT_EQ(t.ephemerals_of(0x300, "/").size(), 0u);
  // An ephemeral without a session is stored as a persistent node, as in ZooKeeper.
  ASSERT_EQ(create(t, 6, "/nosession", "", 1), err::kOk);
  EXPECT_EQ(stat(t, "/nosession").ephemeral_owner, 0);
  EXPECT_EQ(create(t, 7, "/nosession/child"), err::kOk);
  EXPECT_EQ(t.ephemeral_count(), 4u);
  ASSERT_EQ(remove(t, 8, "/app/e1"), err::kOk);
  EXPECT_EQ(t.ephemeral_count(), 3u);
}

TEST(ZnodeTreeTest, LastZxidAdvancesOnFailures) {
  ZnodeTree t;
  EXPECT_EQ(remove(t, 3, "/missing"), err::kNoNode);
  EXPECT_EQ(t.last_zxid(), 3);
  t.set_last_zxid(9);
  EXPECT_EQ(t.last_zxid(), 9);
}

TEST(ZnodeTreeTest, ChildOrderIsStableAcrossDeletes) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/p"), err::kOk);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(create(t, 2 + i, "/p/c" + std::to_string(i)), err::kOk);
  ASSERT_EQ(remove(t, 10, "/p/c1"), err::kOk);
  std::vector<std::string> kids = children(t, "/p");
  std::vector<std::string> sorted = kids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"c0", "c2", "c3", "c4"}));
  EXPECT_EQ(children(t, "/p"), kids);  // same answer twice
}

}  // namespace
}  // namespace zkraft::tree

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

TEST(ZnodeTreeTriggerAclTest, TriggersCarryTheAclOfTheChangedNode) {
  ZnodeTree t;
  std::vector<jute::ACL> secret{{jute::perms::kAll, {"digest", "u:h"}}};
  ASSERT_EQ(create(t, 1, "/pub"), err::kOk);
  std::string created;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.create(ctx(2), "/pub/s", buf("x"), secret, 0, -1, created, nullptr, out), err::kOk);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out[0].acl && out[1].acl);
  EXPECT_EQ(*out[0].acl, secret);  // NodeCreated: the new node's ACL
  EXPECT_EQ(*out[1].acl, kOpen);   // NodeChildrenChanged: the parent's ACL
  EXPECT_FALSE(acl_allows(*out[0].acl, jute::perms::kRead, {}, t.schemes()));
  out.clear();
  jute::Stat s;
  std::vector<jute::Id> u{{"digest", "u:h"}};
  ASSERT_EQ(t.set_data(ctx(3, 0, &u), "/pub/s", buf("y"), -1, s, out), err::kOk);
  EXPECT_EQ(*out.at(0).acl, secret);
  out.clear();
  ASSERT_EQ(t.remove(ctx(4), "/pub/s", -1, out), err::kOk);
  // The ACL outlives the node (its cache entry is gone once nothing refers to it).
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(*out[0].acl, secret);
  EXPECT_EQ(*out[1].acl, kOpen);
}

TEST(ZnodeTreeTriggerAclTest, EphemeralsBySession) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/b", "", 1, kOpen, 2), err::kOk);
  ASSERT_EQ(create(t, 2, "/a", "", 1, kOpen, 2), err::kOk);
  ASSERT_EQ(create(t, 3, "/c", "", 1, kOpen, 1), err::kOk);
  auto all = t.ephemerals_by_session();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1], std::vector<std::string>{"/c"});
  EXPECT_EQ(all[2], (std::vector<std::string>{"/a", "/b"}));
}

}  // namespace
}  // namespace zkraft::tree

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

// A tree whose "/w" has made 2^31 - 1 child creates, loaded from a hand-written snapshot.
ZnodeTree tree_with_counter_at_max() {
  jute::Writer w;
  w.write_int(0x5a4b5452);
  w.write_int(1);
  w.write_long(0);  // last zxid
  w.write_int(2);   // next ACL id
  w.write_int(1);
  w.write_int(1);
  jute::encode(w, kOpen);
  w.write_int(0);  // quota paths
  w.write_long(2);
  auto node = [&](const std::string& path, int32_t cversion) {
    w.write_string(path);
    w.write_buffer(buf(""));
    for (int i = 0; i < 6; ++i) w.write_long(0);
    w.write_int(0);
    w.write_int(cversion);
    w.write_int(0);
    w.write_int(1);
    w.write_int(0);
  };
  node("/", 1);
  node("/w", 2147483647);
  ZnodeTree t;
  jute::Reader r(w.bytes());
  EXPECT_TRUE(t.deserialize(r));
  return t;
}

TEST(SequenceWrapTest, CounterWrapsLikeAJavaInt) {
  ZnodeTree t = tree_with_counter_at_max();
  EXPECT_EQ(stat(t, "/w").cversion, -2);  // (2^31-1)*2 wraps to -2, minus 0 children
  std::string p;
  ASSERT_EQ(create(t, 1, "/w/s", "", 2, kOpen, 0, &p), err::kOk);
  EXPECT_EQ(p, "/w/s2147483647");
  ASSERT_EQ(create(t, 2, "/w/s", "", 2, kOpen, 0, &p), err::kOk);
  EXPECT_EQ(p, "/w/s-2147483648");  // %010d of the wrapped counter, as String.format gives
  ASSERT_EQ(create(t, 3, "/w/s", "", 2, kOpen, 0, &p), err::kOk);
  EXPECT_EQ(p, "/w/s-2147483647");
  // Internal -2147483646 (three creates past max): *2 wraps to 4, minus 3 children = 1.
  EXPECT_EQ(stat(t, "/w").cversion, 1);
}

}  // namespace
}  // namespace zkraft::tree
