// Unit tests for zk_load's pure parts: percentile/gap arithmetic and the --servers parser.

#include <gtest/gtest.h>

#include "tools/load_bench/latency_stats.h"
#include "tools/load_bench/zk_connection.h"

namespace zkraft::tools {
namespace {

TEST(LatencyStats, NearestRankPercentiles) {
  std::vector<uint32_t> us;
  for (uint32_t i = 1000; i >= 1; --i) us.push_back(i * 1000);  // 1..1000 ms, reversed
  LatencySummary s = summarize(us);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_DOUBLE_EQ(s.p50_ms, 500.0);
  EXPECT_DOUBLE_EQ(s.p99_ms, 990.0);
  EXPECT_DOUBLE_EQ(s.p999_ms, 999.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 1000.0);
  EXPECT_DOUBLE_EQ(s.mean_ms, 500.5);
}

TEST(LatencyStats, SingleSampleAndEmpty) {
  std::vector<uint32_t> one{2500};
  LatencySummary s = summarize(one);
  EXPECT_DOUBLE_EQ(s.p50_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.p999_ms, 2.5);
  std::vector<uint32_t> none;
  EXPECT_EQ(summarize(none).count, 0u);
}

TEST(LatencyStats, LargestGapFindsTheWidestHoleInUnsortedTimes) {
  std::vector<int64_t> t{5000, 1000, 2000, 250000, 3000, 260000};
  Gap g = largest_gap(t);
  EXPECT_DOUBLE_EQ(g.length_ms, 245.0);
  EXPECT_EQ(g.from_unix_us, 5000);
  EXPECT_EQ(g.to_unix_us, 250000);
  std::vector<int64_t> single{7};
  EXPECT_DOUBLE_EQ(largest_gap(single).length_ms, 0.0);
}

TEST(ParseServers, ListWithDefaultPort) {
  std::vector<HostPort> s;
  ASSERT_TRUE(parse_servers("127.0.0.1:2181,localhost,203.0.0.2:2999", s));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].to_string(), "127.0.0.1:2181");
  EXPECT_EQ(s[1].to_string(), "localhost:2181");
  EXPECT_EQ(s[2].port, 2999);
}

TEST(ParseServers, RejectsBadPortsAndEmptyLists) {
  std::vector<HostPort> s;
  EXPECT_FALSE(parse_servers("h:0", s));
  EXPECT_FALSE(parse_servers("h:70000", s));
  EXPECT_FALSE(parse_servers("h:abc", s));
  EXPECT_FALSE(parse_servers(":2181", s));
  EXPECT_FALSE(parse_servers("", s));
}

}  // namespace
}  // namespace zkraft::tools
