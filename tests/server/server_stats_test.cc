// LatencyStats::zookeeper_avg against what ZooKeeper's AvgMinMaxCounter.getAvg gives. The
// expected values were printed by OpenJDK 17 running getAvg's expression,
// new BigDecimal(total / (double) count).setScale(4, RoundingMode.HALF_UP).doubleValue()
// (ZooKeeper 3.9.4, zookeeper-server/.../metric/AvgMinMaxCounter.java), for each (total, count).

#include <gtest/gtest.h>

#include "server/four_letter_words.h"
#include "server/server_stats.h"

namespace zkraft::server {
namespace {

std::string zookeeper_avg_text(int64_t total, int64_t count) {
  LatencyStats s;
  s.sum_ms = total;
  s.count = count;
  return java_double(s.zookeeper_avg());
}

TEST(LatencyStats, AverageIsRoundedHalfUpToFourDecimalsAsZooKeeperDoes) {
  EXPECT_EQ(zookeeper_avg_text(7, 3), "2.3333");
  EXPECT_EQ(zookeeper_avg_text(2, 3), "0.6667");
  EXPECT_EQ(zookeeper_avg_text(1, 8), "0.125");
  EXPECT_EQ(zookeeper_avg_text(5, 80000), "1.0E-4");   // 6.25e-5, just above the half
  EXPECT_EQ(zookeeper_avg_text(1, 20000), "1.0E-4");   // 5e-5 as a double is above the half
  EXPECT_EQ(zookeeper_avg_text(1, 30000), "0.0");
  EXPECT_EQ(zookeeper_avg_text(123456789, 1000), "123456.789");
  EXPECT_EQ(zookeeper_avg_text(2685653404093858LL, 1000000000000000LL), "2.6857");
  EXPECT_EQ(zookeeper_avg_text(0, 5), "0.0");
  EXPECT_EQ(zookeeper_avg_text(10, 4), "2.5");
  EXPECT_EQ(zookeeper_avg_text(1, 3), "0.3333");
  EXPECT_EQ(zookeeper_avg_text(29, 7), "4.1429");
  EXPECT_EQ(zookeeper_avg_text(99999, 100000), "1.0");
  EXPECT_EQ(zookeeper_avg_text(1, 2), "0.5");
  EXPECT_EQ(zookeeper_avg_text(0, 0), "0.0");
}

}  // namespace
}  // namespace zkraft::server
