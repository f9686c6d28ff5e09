// raft_options: how the zoo.cfg snapshot keys become the Raft node's snapshot and tail bounds.
#include <gtest/gtest.h>

#include <string>

#include "server/config.h"
#include "server/raft_options.h"

namespace zkraft::server {
namespace {

consensus::RaftNodeOptions options_from(const std::string& zoo_cfg) {
  Config c;
  std::string err;
  EXPECT_TRUE(parse_zoo_cfg("dataDir=/d\n" + zoo_cfg, c, &err)) << err;
  auto o = raft_options(c, &err);
  EXPECT_TRUE(o.has_value()) << err;
  return o.value_or(consensus::RaftNodeOptions{});
}

TEST(RaftOptions, SnapSizeLimitInKbBoundsTheInMemoryLogByBytes) {
  // Default: 64 MiB since the last snapshot, a kept tail of at most 8 MiB (and 5000 entries).
  auto d = options_from("");
  EXPECT_EQ(d.snapshot_every, 100000u);
  EXPECT_EQ(d.keep_tail, 5000u);
  EXPECT_EQ(d.snapshot_bytes, 64ull << 20);
  EXPECT_EQ(d.keep_tail_bytes, 8ull << 20);
  // ZooKeeper's spelling, in KiB; a limit below 8 MiB bounds the tail too.
  auto small = options_from("snapSizeLimitInKb=2048\n");
  EXPECT_EQ(small.snapshot_bytes, 2ull << 20);
  EXPECT_EQ(small.keep_tail_bytes, 2ull << 20);
  auto big = options_from("zookeeper.snapSizeLimitInKb=4194304\n");  // ZooKeeper's default
  EXPECT_EQ(big.snapshot_bytes, 4ull << 30);
  EXPECT_EQ(big.keep_tail_bytes, 8ull << 20);
  // Non-positive turns the size trigger off, as in ZooKeeper; the tail stays bounded.
  for (const char* off : {"snapSizeLimitInKb=0\n", "snapSizeLimitInKb=-1\n"}) {
    auto o = options_from(off);
    EXPECT_EQ(o.snapshot_bytes, 0u) << off;
    EXPECT_EQ(o.keep_tail_bytes, 8ull << 20) << off;
  }
  // Too large to count in bytes: saturates instead of wrapping to a small limit.
  auto huge = options_from("snapSizeLimitInKb=9223372036854775807\n");
  EXPECT_EQ(huge.snapshot_bytes, UINT64_MAX);
}

TEST(RaftOptions, ElectionTimeoutIsHalfOfSyncLimitTicksBoundedBothWays) {
  const std::string ensemble =
      "server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\nserver.3=127.0.0.1:2890:3890\n";
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("dataDir=/d\n" + ensemble + "tickTime=2000\nsyncLimit=5\n", c, &err))
      << err;
  c.server_id = 1;
  auto o = raft_options(c, &err);
  ASSERT_TRUE(o.has_value()) << err;
  EXPECT_EQ(int64_t{o->election_ticks} * o->tick_ms, 5000);  // 5 x 2000 / 2
  // Both may be INT32_MAX in a config file: the timeout stops at a day instead of overflowing.
  c.tick_time_ms = 2147483647;
  c.sync_limit = 2147483647;
  o = raft_options(c, &err);
  ASSERT_TRUE(o.has_value()) << err;
  EXPECT_EQ(int64_t{o->election_ticks} * o->tick_ms, 24 * 3600 * 1000);
  // A short one is raised to a second.
  c.tick_time_ms = 10;
  c.sync_limit = 2;
  o = raft_options(c, &err);
  ASSERT_TRUE(o.has_value()) << err;
  EXPECT_EQ(int64_t{o->election_ticks} * o->tick_ms, 1000);
}

}  // namespace
}  // namespace zkraft::server
