#include <gtest/gtest.h>

#include <random>
#include <set>

#include "tests/tree/random_tree_ops.h"
#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

bool restore(ZnodeTree& t, const std::string& bytes) {
  jute::Reader r(bytes);
  return t.deserialize(r);
}

// A tree with every kind of state a snapshot must carry.
ZnodeTree rich_tree() {
  ZnodeTree t;
  std::vector<jute::Id> alice{{"digest", "alice:h"}};
  EXPECT_EQ(create(t, 1, "/app", "cfg"), err::kOk);
  EXPECT_EQ(create(t, 2, "/app/null"), err::kOk);
  std::vector<WatchTrigger> out;
  std::string p;
  EXPECT_EQ(t.create(ctx(3), "/app/nulldata", jute::Buffer::null(), kOpen, 0, -1, p, nullptr, out), err::kOk);
  EXPECT_EQ(create(t, 4, "/app/e", "", 3, kOpen, 0x1234), err::kOk);
  EXPECT_EQ(create(t, 5, "/app/c", "", 4), err::kOk);
  EXPECT_EQ(create(t, 6, "/app/c/k"), err::kOk);
  EXPECT_EQ(remove(t, 7, "/app/c/k"), err::kOk);
  EXPECT_EQ(create(t, 8, "/app/t", "", 6, kOpen, 0, nullptr, 3600000), err::kOk);
  EXPECT_EQ(create(t, 9, "/priv", "s", 0, {{jute::perms::kAll, {"auth", ""}}}, 0, nullptr, -1, &alice),
            err::kOk);
  jute::Stat s;
  EXPECT_EQ(t.set_data(ctx(10), "/app", buf("cfg2"), 0, s, out), err::kOk);
  EXPECT_EQ(t.set_acl(ctx(11), "/app/null", kReadOnly, -1, s), err::kOk);
  EXPECT_EQ(create(t, 12, "/app/s-", "", 2), err::kOk);
  t.set_last_zxid(13);
  return t;
}

TEST(SnapshotTest, FreshTreeRoundTrip) {
  ZnodeTree a;
  ZnodeTree b;
  ASSERT_EQ(create(b, 1, "/junk"), err::kOk);  // replaced by the load
  ASSERT_TRUE(restore(b, snapshot_of(a)));
  EXPECT_EQ(a.digest(), b.digest());
  EXPECT_EQ(snapshot_of(a), snapshot_of(b));
  EXPECT_FALSE(b.contains("/junk"));
  EXPECT_EQ(b.node_count(), 5u);
  EXPECT_EQ(b.approximate_data_size(), 44);
}

TEST(SnapshotTest, RichTreeRoundTripKeepsEverything) {
  ZnodeTree a = rich_tree();
  ZnodeTree b;
  ASSERT_TRUE(restore(b, snapshot_of(a)));
  EXPECT_EQ(a.digest(), b.digest());
  EXPECT_EQ(snapshot_of(a), snapshot_of(b));
  EXPECT_EQ(b.last_zxid(), 13);
  EXPECT_EQ(b.node_count(), a.node_count());
  EXPECT_EQ(b.ephemeral_count(), 1u);
  EXPECT_EQ(b.approximate_data_size(), a.approximate_data_size());
  EXPECT_EQ(children(b, "/app"), children(a, "/app"));
  for (const char* path : {"/", "/app", "/app/null", "/app/nulldata", "/app/e0000000002", "/app/c",
                           "/app/t0000000004", "/priv", "/zookeeper/config"}) {
    EXPECT_EQ(stat(b, path), stat(a, path)) << path;
  }
  jute::Buffer d;
  jute::Stat s;
  ASSERT_EQ(b.get_data("/app/nulldata", kNobody, d, s), err::kOk);
  EXPECT_TRUE(d.is_null);
  ASSERT_EQ(b.get_data("/app/null", kNobody, d, s), err::kOk);
  EXPECT_FALSE(d.is_null);
  EXPECT_EQ(b.get_data("/priv", kNobody, d, s), err::kNoAuth);
  std::vector<jute::Id> alice{{"digest", "alice:h"}};
  EXPECT_EQ(b.get_data("/priv", alice, d, s), err::kOk);
  EXPECT_EQ(b.reap_candidates(8000 + 3600001, 10), a.reap_candidates(8000 + 3600001, 10));
  EXPECT_EQ(b.reap_candidates(8000 + 3600001, 10).size(), 2u);

  // Both continue identically: sequence counters, sessions, ACL ids.
  for (ZnodeTree* t : {&a, &b}) {
    std::string p;
    ASSERT_EQ(create(*t, 14, "/app/s-", "", 2, kOpen, 0, &p), err::kOk);
    EXPECT_EQ(p, "/app/s-0000000006");
    std::vector<WatchTrigger> out;
    t->close_session(ctx(15), 0x1234, out);
    EXPECT_EQ(out.size(), 2u);
    ASSERT_EQ(create(*t, 16, "/new", "", 0, {{jute::perms::kRead, {"ip", "9.9.9.9"}}}), err::kOk);
  }
  EXPECT_EQ(a.digest(), b.digest());
}

TEST(SnapshotTest, DigestSeesDifferences) {
  ZnodeTree a = rich_tree();
  ZnodeTree b = rich_tree();
  EXPECT_EQ(a.digest(), b.digest());
  EXPECT_EQ(a.rolling_digest(), b.rolling_digest());
  EXPECT_NE(a.rolling_digest(), ZnodeTree().rolling_digest());
  jute::Stat s;
  std::vector<WatchTrigger> out;
  ASSERT_EQ(b.set_data(ctx(14), "/app", buf("cfg2"), -1, s, out), err::kOk);  // same data, new version
  a.set_last_zxid(14);
  EXPECT_NE(a.digest(), b.digest());
  EXPECT_NE(a.rolling_digest(), b.rolling_digest());
  ZnodeTree c = rich_tree();
  ZnodeTree d = rich_tree();
  ASSERT_EQ(d.set_data(ctx(13), "/app/nulldata", buf(""), -1, s, out), err::kOk);
  ASSERT_EQ(d.set_data(ctx(13), "/app/nulldata", jute::Buffer::null(), -1, s, out), err::kOk);
  ASSERT_EQ(c.set_data(ctx(13), "/app/nulldata", buf(""), -1, s, out), err::kOk);
  ASSERT_EQ(c.set_data(ctx(13), "/app/nulldata", buf(""), -1, s, out), err::kOk);
  EXPECT_NE(c.digest(), d.digest());  // null vs empty data
  EXPECT_NE(c.rolling_digest(), d.rolling_digest());
}

TEST(SnapshotTest, MalformedInputIsRejectedWithoutChange) {
  const std::string good = snapshot_of(rich_tree());
  ZnodeTree t;
  ASSERT_EQ(create(t, 1, "/mine"), err::kOk);
  const uint64_t before = t.digest();
  // Every truncation fails.
  for (size_t n = 0; n < good.size(); ++n) {
    ASSERT_FALSE(restore(t, good.substr(0, n))) << n;
  }
  // Single-byte corruptions must not crash; most are rejected, and whatever loads is consistent.
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    ZnodeTree u;
    if (restore(u, bad)) {
      EXPECT_EQ(u.node_count(), static_cast<size_t>([&] {
                  int32_t n = 0;
                  EXPECT_EQ(u.get_all_children_number("/", {{"super", ""}}, n), err::kOk);
                  return n + 2;
                }()));
    }
  }
  std::mt19937_64 rng(42);
  for (int k = 0; k < 200; ++k) {
    std::string junk(static_cast<size_t>(rng() % 300), '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    EXPECT_FALSE(restore(t, junk));
  }
  EXPECT_EQ(t.digest(), before);
  EXPECT_TRUE(t.contains("/mine"));
}

TEST(SnapshotTest, RejectsStructuralLies) {
  // A hand-built snapshot whose second node's parent does not exist.
  jute::Writer w;
  w.write_int(0x5a4b5452);
  w.write_int(1);
  w.write_long(0);
  w.write_int(2);
  w.write_int(1);
  w.write_int(1);
  jute::encode(w, kOpen);
  w.write_int(0);  // no quota paths
  w.write_long(2);
  auto node = [&](const std::string& path) {
    w.write_string(path);
    w.write_buffer(buf(""));
    for (int i = 0; i < 6; ++i) w.write_long(0);
    for (int i = 0; i < 3; ++i) w.write_int(0);
    w.write_int(1);
    w.write_int(0);
  };
  node("/");
  std::string prefix = w.bytes();
  {
    jute::Writer ok;
    ok.write_raw(prefix);
    ZnodeTree t;
    // Only "/" present but the count says 2: rejected for being short.
    EXPECT_FALSE(restore(t, ok.bytes()));
  }
  node("/orphan/child");
  ZnodeTree t;
  EXPECT_FALSE(restore(t, w.bytes()));
  EXPECT_TRUE(t.contains("/zookeeper"));
  // The same bytes with a parent that exists load fine, so the rejection above is about the parent.
  jute::Writer good;
  good.write_raw(prefix);
  std::string fixed = good.bytes();
  {
    jute::Writer tail;
    tail.write_string("/child");
    tail.write_buffer(buf(""));
    for (int i = 0; i < 6; ++i) tail.write_long(0);
    for (int i = 0; i < 3; ++i) tail.write_int(0);
    tail.write_int(1);
    tail.write_int(0);
    fixed += tail.bytes();
  }
  ZnodeTree u;
  ASSERT_TRUE(restore(u, fixed));
  EXPECT_TRUE(u.contains("/child"));
  EXPECT_FALSE(u.contains("/zookeeper"));
}

// An ephemeral has no room for a child stamp (its owner sits where a parent's ChildList pointer
// would, tree/znode.h), and none is possible: it never has children. A snapshot that claims one
// is refused, not loaded and not a crash.
TEST(SnapshotTest, RejectsAnEphemeralWithAChildStamp) {
  auto with_ephemeral = [](int64_t pzxid, int32_t cversion) {
    jute::Writer w;
    w.write_int(0x5a4b5452);
    w.write_int(1);
    w.write_long(0);
    w.write_int(2);
    w.write_int(1);
    w.write_int(1);
    jute::encode(w, kOpen);
    w.write_int(0);  // no quota paths
    w.write_long(2);
    auto node = [&](const std::string& path, int64_t czxid, int64_t node_pzxid, int64_t owner,
                    int32_t node_cversion, int32_t kind) {
      w.write_string(path);
      w.write_buffer(buf(""));
      for (int64_t v : {czxid, czxid, node_pzxid, int64_t{0}, int64_t{0}, owner}) w.write_long(v);
      for (int32_t v : {0, node_cversion, 0}) w.write_int(v);
      w.write_int(1);
      w.write_int(kind);
    };
    node("/", 0, 0, 0, 0, 0);
    node("/e", 7, pzxid, 0x1234, cversion, 1);
    return w.take();
  };
  ZnodeTree ok;
  ASSERT_TRUE(restore(ok, with_ephemeral(7, 0)));
  EXPECT_EQ(stat(ok, "/e").ephemeral_owner, 0x1234);
  ZnodeTree bad_pzxid;
  EXPECT_FALSE(restore(bad_pzxid, with_ephemeral(8, 0)));
  ZnodeTree bad_cversion;
  EXPECT_FALSE(restore(bad_cversion, with_ephemeral(7, 1)));
}

// The loader finds a parent on its stack of the previous node's ancestors (pre-order) and falls
// back to a lookup otherwise; a repeated path is refused wherever it repeats.
std::string hand_built(const std::vector<std::string>& paths) {
  jute::Writer w;
  w.write_int(0x5a4b5452);
  w.write_int(1);
  w.write_long(0);
  w.write_int(2);
  w.write_int(1);
  w.write_int(1);
  jute::encode(w, kOpen);
  w.write_int(0);  // no quota paths
  w.write_long(static_cast<int64_t>(paths.size()));
  for (const std::string& path : paths) {
    w.write_string(path);
    w.write_buffer(buf(""));
    for (int i = 0; i < 6; ++i) w.write_long(0);
    for (int i = 0; i < 3; ++i) w.write_int(0);
    w.write_int(1);
    w.write_int(0);
  }
  return w.take();
}

TEST(SnapshotTest, ParentsOutsidePreOrderStillLoadAndRepeatsAreRefused) {
  {
    // /a/x's parent /a is earlier but not an ancestor of /b, the node before it.
    ZnodeTree t;
    ASSERT_TRUE(restore(t, hand_built({"/", "/a", "/b", "/a/x", "/b/y", "/a/x/z"})));
    for (const char* p : {"/a", "/b", "/a/x", "/b/y", "/a/x/z"}) EXPECT_TRUE(t.contains(p)) << p;
    EXPECT_EQ(t.node_count(), 6u + 1u);  // node_count() counts the root twice, as ZooKeeper does
    std::vector<std::string> kids;
    ASSERT_EQ(t.get_children("/a", {}, kids, nullptr), err::kOk);
    EXPECT_EQ(kids, std::vector<std::string>{"x"});
  }
  for (const auto& paths : std::vector<std::vector<std::string>>{
           {"/", "/a", "/a"},              // right after itself
           {"/", "/a", "/a/x", "/a"},      // an ancestor still on the stack
           {"/", "/a", "/b", "/a"},        // an earlier sibling
           {"/", "/a", "/a/x", "/b", "/a/x"}}) {
    ZnodeTree t;
    EXPECT_FALSE(restore(t, hand_built(paths))) << paths.back() << " twice";
    EXPECT_TRUE(t.contains("/zookeeper"));  // unchanged
  }
}

TEST(SnapshotTest, RestoredDigestsMatchForEveryDataLength) {
  // The load hashes each node in one pass (the path once, then its content and its meta); the
  // digests must equal those the tree kept while created, whatever the data's length is modulo
  // the hash's 8-byte words.
  ZnodeTree t;
  int64_t zxid = 1;
  std::vector<WatchTrigger> out;
  std::string p;
  ASSERT_EQ(t.create(ctx(zxid++), "/null", jute::Buffer::null(), kOpen, 0, -1, p, nullptr, out), err::kOk);
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 79u, 80u, 81u, 100u, 300u}) {
    ASSERT_EQ(create(t, zxid, "/d" + std::to_string(n), std::string(n, static_cast<char>('a' + n % 26))), err::kOk);
    ++zxid;
  }
  ASSERT_EQ(create(t, zxid++, "/d100/e", std::string(90, 'e'), 3, kOpen, 0x99), err::kOk);
  ZnodeTree u;
  ASSERT_TRUE(restore(u, snapshot_of(t)));
  EXPECT_EQ(u.rolling_digest(), t.rolling_digest());
  EXPECT_EQ(u.tree_digest(), t.tree_digest());
  // And the digest still sees a one-byte difference in the data's tail.
  ZnodeTree v;
  std::string bytes = snapshot_of(t);
  const auto at = bytes.find(std::string(300, static_cast<char>('a' + 300 % 26)));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 299] ^= 1;
  ASSERT_TRUE(restore(v, bytes));
  EXPECT_NE(v.rolling_digest(), t.rolling_digest());
}

TEST(SnapshotTest, DigestSeesEveryByteOfPathAndDataAndTrailingZeros) {
  // The node hash reads 8-byte words and zero-pads the last one; each byte run is preceded by
  // its length, so data that differs only by trailing zero bytes must still hash apart, as must a
  // one-byte change at every position of a word.
  auto digest_of = [](const std::string& path, const std::string& data) {
    ZnodeTree t;
    EXPECT_EQ(create(t, 1, path, data), err::kOk);
    return t.rolling_digest();
  };
  const std::string data = "0123456789abcdefghijk";  // two whole words and a 5-byte tail
  const uint64_t base = digest_of("/node-17", data);
  EXPECT_EQ(base, digest_of("/node-17", data));
  EXPECT_NE(base, digest_of("/node-17", data + std::string(1, '\0')));
  EXPECT_NE(base, digest_of("/node-17", data + std::string(3, '\0')));
  EXPECT_NE(digest_of("/z", ""), digest_of("/z", std::string(8, '\0')));
  for (size_t i = 0; i < data.size(); ++i) {
    std::string d = data;
    d[i] ^= 0x01;
    EXPECT_NE(base, digest_of("/node-17", d)) << "data byte " << i;
  }
  const std::string path = "/node-17";
  for (size_t i = 1; i < path.size(); ++i) {
    std::string q = path;
    q[i] = q[i] == 'x' ? 'y' : 'x';
    EXPECT_NE(base, digest_of(q, data)) << "path byte " << i;
  }
}

// Random operations: tests/tree/random_tree_ops.h.

TEST(SnapshotTest, RandomOpsWithMidwayRestoreStayIdentical) {
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    constexpr int kOps = 3000;
    ZnodeTree straight;
    ZnodeTree restarted;
    OpStream s1(seed), s2(seed);
    std::string log1, log2;
    for (int i = 1; i <= kOps; ++i) {
      apply_random_op(straight, s1, i, log1);
      apply_random_op(restarted, s2, i, log2);
      if (i % 1000 == 500) {
        ZnodeTree loaded;
        ASSERT_TRUE(restore(loaded, snapshot_of(restarted))) << "seed " << seed << " op " << i;
        ASSERT_EQ(loaded.digest(), restarted.digest());
        // The loaded tree's rolling digest is built from scratch; the other one was kept up to
        // date through every change.
        ASSERT_EQ(loaded.rolling_digest(), restarted.rolling_digest()) << "seed " << seed << " op " << i;
        restarted = std::move(loaded);
      }
      ASSERT_EQ(straight.rolling_digest(), restarted.rolling_digest()) << "seed " << seed << " op " << i;
      if (i % 250 == 0) {
        ASSERT_EQ(straight.digest(), restarted.digest()) << "seed " << seed << " op " << i;
        ZnodeTree scratch;
        ASSERT_TRUE(restore(scratch, snapshot_of(straight)));
        ASSERT_EQ(scratch.rolling_digest(), straight.rolling_digest()) << "seed " << seed << " op " << i;
      }
    }
    EXPECT_EQ(log1, log2) << "seed " << seed;
    EXPECT_EQ(snapshot_of(straight), snapshot_of(restarted));
    EXPECT_EQ(straight.approximate_data_size(), restarted.approximate_data_size());
    EXPECT_EQ(straight.ephemeral_count(), restarted.ephemeral_count());
    int32_t n = 0;
    ASSERT_EQ(straight.get_all_children_number("/", {{"super", ""}}, n), err::kOk);
    EXPECT_EQ(static_cast<size_t>(n) + 2, straight.node_count());
    // The stream must actually exercise the tree.
    EXPECT_GT(straight.node_count(), 10u) << "seed " << seed;
    EXPECT_NE(log1.find("|0:"), std::string::npos);
  }
}

// tree_digest() is ZooKeeper's tree digest: the nodes outside /zookeeper/ only. The config text
// a server writes at start-up, and the quota nodes, leave it alone.
TEST(TreeDigestTest, LeavesOutTheZookeeperSubtreeOnly) {
  ZnodeTree a, b;
  EXPECT_EQ(a.tree_digest(), b.tree_digest());
  EXPECT_NE(a.tree_digest(), 0u);  // "/" and "/zookeeper" count
  b.set_config_data("server.1=127.0.0.1:1:2:participant;127.0.0.1:3\nversion=0");
  EXPECT_NE(a.rolling_digest(), b.rolling_digest());
  EXPECT_EQ(a.tree_digest(), b.tree_digest());

  // Quota stats under /zookeeper/quota change with /app, but only /app and /zookeeper/quota's
  // parent /zookeeper (pzxid, cversion of the new child) count.
  ZnodeTree q;
  ASSERT_EQ(create(q, 1, "/app", "ab"), err::kOk);
  const uint64_t only_app = q.tree_digest();
  ASSERT_EQ(create(q, 2, "/zookeeper/quota/app"), err::kOk);
  ASSERT_EQ(create(q, 3, "/zookeeper/quota/app/zookeeper_limits", "count=10,bytes=-1"), err::kOk);
  ASSERT_EQ(create(q, 4, "/zookeeper/quota/app/zookeeper_stats", "count=0,bytes=0"), err::kOk);
  EXPECT_EQ(q.tree_digest(), only_app);  // nothing outside /zookeeper/ changed
  const uint64_t rolling = q.rolling_digest();
  jute::Stat st;
  std::vector<WatchTrigger> out;
  jute::Buffer data;
  ASSERT_EQ(q.set_data(ctx(5), "/zookeeper/quota/app/zookeeper_limits", buf("count=20,bytes=-1"), -1, st, out),
            err::kOk);
  EXPECT_NE(q.rolling_digest(), rolling);
  EXPECT_EQ(q.tree_digest(), only_app);

  // Every change outside /zookeeper/ moves it: data, version, ACL, a child's creation.
  uint64_t before = q.tree_digest();
  ASSERT_EQ(q.set_data(ctx(6), "/app", buf("ab"), -1, st, out), err::kOk);  // same bytes, new version
  EXPECT_NE(q.tree_digest(), before);
  before = q.tree_digest();
  ASSERT_EQ(q.set_acl(ctx(7), "/app", kReadOnly, -1, st), err::kOk);
  EXPECT_NE(q.tree_digest(), before);
  before = q.tree_digest();
  ASSERT_EQ(create(q, 8, "/zookeeper/x"), err::kOk);  // /zookeeper's own Stat counts
  EXPECT_NE(q.tree_digest(), before);
}

TEST(TreeDigestTest, SameOperationsGiveTheSameDigestWhateverTheConfigText) {
  ZnodeTree a, b;
  b.set_config_data("server.2=127.0.0.1:1:2:participant;127.0.0.1:3\nversion=0");
  OpStream s1(7), s2(7);
  std::string log1, log2;
  for (int i = 1; i <= 500; ++i) {
    apply_random_op(a, s1, i, log1);
    apply_random_op(b, s2, i, log2);
    ASSERT_EQ(a.tree_digest(), b.tree_digest()) << "op " << i;
  }
  EXPECT_NE(a.rolling_digest(), b.rolling_digest());
}

// A replica that restored from a snapshot (rebuilt from the nodes) goes on with the same tree
// digest as one that applied every change; an aborted multi leaves it as it was.
TEST(TreeDigestTest, RandomOpsWithMidwayRestoreKeepTheSameTreeDigest) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    ZnodeTree straight, restarted;
    OpStream s1(seed), s2(seed);
    std::string log1, log2;
    std::set<uint64_t> seen;
    for (int i = 1; i <= 2000; ++i) {
      apply_random_op(straight, s1, i, log1);
      apply_random_op(restarted, s2, i, log2);
      if (i % 400 == 200) {
        ZnodeTree loaded;
        ASSERT_TRUE(restore(loaded, snapshot_of(restarted)));
        ASSERT_EQ(loaded.tree_digest(), restarted.tree_digest()) << "seed " << seed << " op " << i;
        restarted = std::move(loaded);
      }
      ASSERT_EQ(straight.tree_digest(), restarted.tree_digest()) << "seed " << seed << " op " << i;
      seen.insert(straight.tree_digest());
    }
    // The digest follows the tree (a constant would pass the comparisons above).
    EXPECT_GT(seen.size(), 300u) << "seed " << seed;
  }
}

// The tree digest is the sum of the node hashes outside /zookeeper/: a tree rebuilt from its
// snapshot with the /zookeeper/ subtree differing only in config data has the same value.
TEST(TreeDigestTest, RichTreeRoundTripKeepsIt) {
  ZnodeTree a = rich_tree();
  ZnodeTree b;
  ASSERT_TRUE(restore(b, snapshot_of(a)));
  EXPECT_EQ(a.tree_digest(), b.tree_digest());
  EXPECT_NE(a.tree_digest(), ZnodeTree().tree_digest());
}

}  // namespace
}  // namespace zkraft::tree
