#include <gtest/gtest.h>

#include "tests/tree/tree_test_util.h"
#include "tree/quota_stats.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

std::string data_of(const ZnodeTree& t, const std::string& path) {
  jute::Buffer d;
  jute::Stat s;
  EXPECT_EQ(t.get_data(path, kNobody, d, s), err::kOk) << path;
  return d.bytes;
}

TEST(QuotaStatsTest, ParseAndFormatLikeStatsTrack) {
  auto plain = parse_quota_stats("count=5,bytes=9");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->at("count"), 5);
  EXPECT_EQ(plain->at("bytes"), 9);
  EXPECT_EQ(format_quota_stats(*plain), "count=5,bytes=9");

  const std::string limits = "count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=-1";
  auto hard = parse_quota_stats(limits);
  ASSERT_TRUE(hard);
  EXPECT_EQ(hard->size(), 4u);
  EXPECT_EQ(hard->at("count"), 10);
  EXPECT_EQ(format_quota_stats(*hard), limits);

  EXPECT_EQ(format_quota_stats({}), "count=-1,bytes=-1");
  EXPECT_TRUE(parse_quota_stats("")->empty());
  EXPECT_FALSE(parse_quota_stats("count=,bytes=3"));  // Java: kv[1] out of bounds
  EXPECT_EQ(parse_quota_stats("count==5,bytes=3").value().at("count"), -1);  // empty kv[1] -> -1
  EXPECT_FALSE(parse_quota_stats("count"));
  EXPECT_FALSE(parse_quota_stats("count=x"));
  EXPECT_FALSE(parse_quota_stats(",count=1"));
}

// What zkCli's setquota -n 10 /app does, then the server's upkeep.
TEST(QuotaTest, StatsNodeFollowsChangesUnderTheQuotaPath) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/app", "ab"), err::kOk);
  ASSERT_EQ(create(t, 2, "/app/x", "c"), err::kOk);
  ASSERT_EQ(create(t, 3, "/zookeeper/quota/app"), err::kOk);
  ASSERT_EQ(create(t, 4, "/zookeeper/quota/app/zookeeper_limits", "count=10,bytes=-1"), err::kOk);
  ASSERT_EQ(create(t, 5, "/zookeeper/quota/app/zookeeper_stats", "count=0,bytes=0"), err::kOk);
  const std::string stats = "/zookeeper/quota/app/zookeeper_stats";
  EXPECT_EQ(data_of(t, stats), "count=2,bytes=3");  // recounted when the stats node appears

  ASSERT_EQ(create(t, 6, "/app/y", "dddd"), err::kOk);
  EXPECT_EQ(data_of(t, stats), "count=3,bytes=7");
  jute::Stat s;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(t.set_data(ctx(7), "/app/x", buf("cc"), -1, s, out), err::kOk);
  EXPECT_EQ(data_of(t, stats), "count=3,bytes=8");
  ASSERT_EQ(remove(t, 8, "/app/y"), err::kOk);
  EXPECT_EQ(data_of(t, stats), "count=2,bytes=4");
  ASSERT_EQ(create(t, 9, "/application", "zzz"), err::kOk);  // a name prefix, not below /app
  EXPECT_EQ(data_of(t, stats), "count=2,bytes=4");
  // Upkeep rewrites the data in place: no version or mzxid change.
  jute::Stat st = stat(t, stats);
  EXPECT_EQ(st.version, 0);
  EXPECT_EQ(st.mzxid, 5);
  EXPECT_EQ(t.approximate_data_size(),
            [&] {
              // Recompute by hand: every node's path length (root as 1) plus data.
              int64_t sum = 1 + 10 + 16 + 17;
              for (const char* p : {"/app", "/app/x", "/zookeeper/quota/app",
                                    "/zookeeper/quota/app/zookeeper_limits",
                                    "/zookeeper/quota/app/zookeeper_stats", "/application"}) {
                sum += static_cast<int64_t>(std::string(p).size() + data_of(t, p).size());
              }
              return sum;
            }());

  // An aborted multi leaves the stats alone.
  bool ok = true;
  t.multi(ctx(10), {CreateOp{"/app/m", buf("12345"), kOpen, 0, -1}, CheckOp{"/nope", -1}}, out, ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(data_of(t, stats), "count=2,bytes=4");

  // Snapshots keep the quota paths: both trees go on the same way.
  ZnodeTree restored;
  {
    jute::Writer w;
    t.serialize(w);
    jute::Reader r(w.bytes());
    ASSERT_TRUE(restored.deserialize(r));
  }
  for (ZnodeTree* tree : {&t, &restored}) {
    ASSERT_EQ(create(*tree, 11, "/app/z", "zz"), err::kOk);
    EXPECT_EQ(data_of(*tree, stats), "count=3,bytes=6");
  }
  EXPECT_EQ(t.digest(), restored.digest());
  EXPECT_EQ(t.rolling_digest(), restored.rolling_digest());

  // Deleting the limits node ends the upkeep.
  ASSERT_EQ(remove(t, 12, "/zookeeper/quota/app/zookeeper_limits"), err::kOk);
  ASSERT_EQ(create(t, 13, "/app/w", "w"), err::kOk);
  EXPECT_EQ(data_of(t, stats), "count=3,bytes=6");
}

TEST(QuotaTest, DeepestQuotaWinsAndMultiCreatesQuota) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/a"), err::kOk);
  ASSERT_EQ(create(t, 2, "/a/b"), err::kOk);
  std::vector<WatchTrigger> out;
  bool ok = false;
  // The quota nodes themselves created in one multi, as a client might.
  t.multi(ctx(3),
          {CreateOp{"/zookeeper/quota/a", buf(""), kOpen, 0, -1},
           CreateOp{"/zookeeper/quota/a/zookeeper_limits", buf("count=5,bytes=-1"), kOpen, 0, -1},
           CreateOp{"/zookeeper/quota/a/zookeeper_stats", buf("count=0,bytes=0"), kOpen, 0, -1},
           CreateOp{"/zookeeper/quota/a/b", buf(""), kOpen, 0, -1},
           CreateOp{"/zookeeper/quota/a/b/zookeeper_limits", buf("count=5,bytes=-1"), kOpen, 0, -1},
           CreateOp{"/zookeeper/quota/a/b/zookeeper_stats", buf("count=0,bytes=0"), kOpen, 0, -1}},
          out, ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(data_of(t, "/zookeeper/quota/a/zookeeper_stats"), "count=2,bytes=0");
  EXPECT_EQ(data_of(t, "/zookeeper/quota/a/b/zookeeper_stats"), "count=1,bytes=0");
  ASSERT_EQ(create(t, 4, "/a/b/c", "xyz"), err::kOk);
  EXPECT_EQ(data_of(t, "/zookeeper/quota/a/zookeeper_stats"), "count=2,bytes=0");
  EXPECT_EQ(data_of(t, "/zookeeper/quota/a/b/zookeeper_stats"), "count=2,bytes=3");
  ASSERT_EQ(create(t, 5, "/a/d", "q"), err::kOk);
  EXPECT_EQ(data_of(t, "/zookeeper/quota/a/zookeeper_stats"), "count=3,bytes=1");
  // Removing /a's limits drops the whole trie subtree, /a/b's quota included (PathTrie.deletePath).
  ASSERT_EQ(remove(t, 6, "/zookeeper/quota/a/zookeeper_limits"), err::kOk);
  ASSERT_EQ(create(t, 7, "/a/b/e", "e"), err::kOk);
  EXPECT_EQ(data_of(t, "/zookeeper/quota/a/b/zookeeper_stats"), "count=2,bytes=3");
}

}  // namespace
}  // namespace zkraft::tree

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

void set_quota(ZnodeTree& t, int64_t& zxid, const std::string& path, const std::string& limits) {
  ASSERT_EQ(create(t, ++zxid, "/zookeeper/quota" + path), err::kOk);
  ASSERT_EQ(create(t, ++zxid, "/zookeeper/quota" + path + "/zookeeper_limits", limits), err::kOk);
  ASSERT_EQ(create(t, ++zxid, "/zookeeper/quota" + path + "/zookeeper_stats", "count=0,bytes=0"), err::kOk);
}

TEST(QuotaEnforceTest, HardLimitsRefuseOnlyWhenEnforced) {
  ZnodeTree::Options enforce;
  enforce.enforce_quota = true;
  ZnodeTree strict(enforce);
  ZnodeTree lax;
  for (ZnodeTree* t : {&strict, &lax}) {
    int64_t zxid = 0;
    ASSERT_EQ(create(*t, ++zxid, "/h", "12"), err::kOk);
    set_quota(*t, zxid, "/h", "count=-1,bytes=-1=;byteHardLimit=5;countHardLimit=3");
    ASSERT_EQ(create(*t, ++zxid, "/s"), err::kOk);
    set_quota(*t, zxid, "/s", "count=1,bytes=1");  // soft limits only
  }
  // /h holds 1 node, 2 bytes. Two more nodes fit the count, the third does not.
  EXPECT_EQ(create(strict, 20, "/h/a"), err::kOk);
  EXPECT_EQ(create(strict, 21, "/h/b"), err::kOk);
  EXPECT_EQ(create(strict, 22, "/h/c"), err::kQuotaExceeded);
  EXPECT_EQ(create(lax, 22, "/h/c"), err::kOk);
  // Bytes: 2 used, limit 5.
  jute::Stat s;
  std::vector<WatchTrigger> out;
  EXPECT_EQ(strict.set_data(ctx(23), "/h/a", buf("abc"), -1, s, out), err::kOk);
  EXPECT_EQ(strict.set_data(ctx(24), "/h/a", buf("abcd"), 99, s, out), err::kQuotaExceeded);  // before version
  EXPECT_EQ(strict.set_data(ctx(25), "/h/a", buf("a"), -1, s, out), err::kOk);  // shrinking is fine
  // Soft limits never refuse.
  EXPECT_EQ(create(strict, 26, "/s/a", "lots of data"), err::kOk);
  EXPECT_EQ(create(strict, 27, "/s/b"), err::kOk);
}

// ZooKeeper 3.9's checkQuota: the limit is the hard one when set, else the soft one; a passed
// limit is logged ("Quota exceeded: ..."), and only a hard one refuses, only when enforcing.
// The tree hands the line to its caller; zkraft reports it whether or not it enforces.
TEST(QuotaEnforceTest, PassedLimitsLeaveZooKeepersLogLine) {
  ZnodeTree::Options enforce;
  enforce.enforce_quota = true;
  ZnodeTree strict(enforce);
  ZnodeTree lax;
  for (ZnodeTree* t : {&strict, &lax}) {
    int64_t zxid = 0;
    ASSERT_EQ(create(*t, ++zxid, "/h", "12"), err::kOk);
    set_quota(*t, zxid, "/h", "count=1,bytes=-1=;byteHardLimit=5;countHardLimit=2");
    ASSERT_EQ(create(*t, ++zxid, "/s"), err::kOk);
    set_quota(*t, zxid, "/s", "count=2,bytes=3");
    EXPECT_EQ(t->take_quota_warning(), "");  // nothing passed yet
  }
  // Within every limit: no line. (/h: the soft count 1 is passed, but the hard one rules.)
  EXPECT_EQ(create(strict, 20, "/h/a"), err::kOk);
  EXPECT_EQ(strict.take_quota_warning(), "");
  EXPECT_EQ(create(strict, 21, "/h/b"), err::kQuotaExceeded);
  EXPECT_EQ(strict.take_quota_warning(), "Quota exceeded: /h [current count=3, hardCountLimit=2]");
  EXPECT_EQ(strict.take_quota_warning(), "");  // taken
  EXPECT_EQ(create(lax, 20, "/h/a"), err::kOk);
  EXPECT_EQ(create(lax, 21, "/h/b"), err::kOk);
  EXPECT_EQ(lax.take_quota_warning(), "Quota exceeded: /h [current count=3, hardCountLimit=2]");
  // Soft limits: logged, never refused.
  EXPECT_EQ(create(strict, 22, "/s/a", "abcd"), err::kOk);
  EXPECT_EQ(strict.take_quota_warning(), "Quota exceeded: /s [current bytes=4, softByteLimit=3]");
  EXPECT_EQ(create(strict, 23, "/s/b"), err::kOk);
  EXPECT_EQ(strict.take_quota_warning(), "Quota exceeded: /s [current count=3, softCountLimit=2]");
  // setData counts the difference in bytes only.
  jute::Stat st;
  std::vector<WatchTrigger> out;
  EXPECT_EQ(strict.set_data(ctx(24), "/h/a", buf("abcd"), -1, st, out), err::kQuotaExceeded);  // 2 + 4 > 5
  EXPECT_EQ(strict.take_quota_warning(), "Quota exceeded: /h [current bytes=6, hardByteLimit=5]");
  EXPECT_EQ(strict.set_data(ctx(25), "/h/a", buf("abc"), -1, st, out), err::kOk);  // exactly 5
  EXPECT_EQ(strict.take_quota_warning(), "");
  // A node outside every quota'd path is never checked.
  EXPECT_EQ(create(strict, 26, "/free", std::string(100, 'x')), err::kOk);
  EXPECT_EQ(strict.take_quota_warning(), "");
}

TEST(QuotaEnforceTest, TheDeepestQuotaPrefixDecidesAndARefusedCreateChangesNoStats) {
  ZnodeTree::Options enforce;
  enforce.enforce_quota = true;
  ZnodeTree t(enforce);
  int64_t zxid = 0;
  ASSERT_EQ(create(t, ++zxid, "/p"), err::kOk);
  ASSERT_EQ(create(t, ++zxid, "/p/q"), err::kOk);
  set_quota(t, zxid, "/p", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=100");
  set_quota(t, zxid, "/p/q", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=1");
  EXPECT_EQ(create(t, ++zxid, "/p/q/x"), err::kQuotaExceeded);  // /p/q's limit, though /p has room
  EXPECT_EQ(create(t, ++zxid, "/p/y"), err::kOk);               // /p's
  EXPECT_EQ(data_of(t, "/zookeeper/quota/p/q/zookeeper_stats"), "count=1,bytes=0");
}

}  // namespace
}  // namespace zkraft::tree
