#include "session/session_id.h"

#include <gtest/gtest.h>

#include <limits>

namespace zkraft::session {
namespace {

// Expected values computed with Java: ((t << 24) >>> 8) | (sid << 56).
TEST(SessionId, ServerIdInTopByteAndTimeBelow) {
  EXPECT_EQ(initial_session_id(5, 0x123456789ALL), static_cast<int64_t>(0x05123456789A0000ULL));
}

TEST(SessionId, TimeBitsAboveFortyAreShiftedOutLikeJava) {
  EXPECT_EQ(initial_session_id(2, 0xFFFFFFFFFFFFLL), static_cast<int64_t>(0x02FFFFFFFFFF0000ULL));
  EXPECT_EQ(initial_session_id(1, 1700000000000LL), static_cast<int64_t>(0x018BCFE568000000ULL));
}

TEST(SessionId, SkipsContainerOwnerMarker) {
  // server 0x80 at time 0 would be Long.MIN_VALUE, which marks containers.
  EXPECT_EQ(initial_session_id(0x80, 0), std::numeric_limits<int64_t>::min() + 1);
}

TEST(SessionIdGenerator, CountsUpFromInitial) {
  SessionIdGenerator g(3, 0x10);
  const int64_t first = initial_session_id(3, 0x10);
  EXPECT_EQ(g.peek(), first);
  EXPECT_EQ(g.next(), first);
  EXPECT_EQ(g.next(), first + 1);
  EXPECT_EQ(g.peek(), first + 2);
}

TEST(SessionIdGenerator, ObserveNeverGoesBackwards) {
  SessionIdGenerator g;
  g.reset(100);
  g.observe(50);
  EXPECT_EQ(g.peek(), 100);
  g.observe(100);
  EXPECT_EQ(g.peek(), 101);
  g.observe(200);
  EXPECT_EQ(g.next(), 201);
}

}  // namespace
}  // namespace zkraft::session
