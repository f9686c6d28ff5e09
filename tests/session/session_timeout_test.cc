#include "session/session_timeout.h"

#include <gtest/gtest.h>

namespace zkraft::session {
namespace {

TEST(SessionTimeout, DefaultsAreTwoAndTwentyTicks) {
  TimeoutBounds b = TimeoutBounds::from_config(2000, -1, -1);
  EXPECT_EQ(b.min_ms, 4000);
  EXPECT_EQ(b.max_ms, 40000);
}

TEST(SessionTimeout, DefaultsSaturateInsteadOfOverflowing) {
  // 20 x 811386212 does not fit in 32 bits (found by fuzz_config; UBSan flagged the multiply).
  TimeoutBounds b = TimeoutBounds::from_config(811386212, -1, -1);
  EXPECT_EQ(b.min_ms, 1622772424);
  EXPECT_EQ(b.max_ms, 2147483647);
  b = TimeoutBounds::from_config(2147483647, -1, -1);
  EXPECT_EQ(b.min_ms, 2147483647);
  EXPECT_EQ(b.max_ms, 2147483647);
}

TEST(SessionTimeout, ConfiguredBoundsWin) {
  TimeoutBounds b = TimeoutBounds::from_config(2000, 1000, 90000);
  EXPECT_EQ(b.min_ms, 1000);
  EXPECT_EQ(b.max_ms, 90000);
}

TEST(SessionTimeout, ClampsIntoBounds) {
  TimeoutBounds b{4000, 40000};
  EXPECT_EQ(negotiate_timeout(100, b), 4000);
  EXPECT_EQ(negotiate_timeout(0, b), 4000);
  EXPECT_EQ(negotiate_timeout(-5, b), 4000);
  EXPECT_EQ(negotiate_timeout(4000, b), 4000);
  EXPECT_EQ(negotiate_timeout(10000, b), 10000);
  EXPECT_EQ(negotiate_timeout(40000, b), 40000);
  EXPECT_EQ(negotiate_timeout(1000000, b), 40000);
}

TEST(SessionTimeout, MaxWinsWhenBoundsCross) {
  // ZooKeeper clamps to min first, then to max.
  TimeoutBounds b{50000, 40000};
  EXPECT_EQ(negotiate_timeout(1000, b), 40000);
}

}  // namespace
}  // namespace zkraft::session
