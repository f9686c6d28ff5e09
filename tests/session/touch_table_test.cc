#include "session/touch_table.h"

#include <gtest/gtest.h>

#include "session/session_expiry_tracker.h"

namespace zkraft::session {
namespace {

using Touches = std::vector<std::pair<int64_t, int32_t>>;

TEST(TouchTable, DrainReturnsEachTouchedSessionOnceAscending) {
  TouchTable t;
  EXPECT_TRUE(t.empty());
  t.touch(30, 4000);
  t.touch(10, 5000);
  t.touch(30, 6000);  // latest timeout wins
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.drain(), (Touches{{10, 5000}, {30, 6000}}));
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.drain(), Touches{});
}

TEST(TouchTable, ForgetDropsASession) {
  TouchTable t;
  t.touch(1, 4000);
  t.touch(2, 4000);
  t.forget(1);
  t.forget(99);
  EXPECT_EQ(t.drain(), (Touches{{2, 4000}}));
}

TEST(TouchTable, FollowerTouchesKeepLeaderSessionsAlive) {
  SessionExpiryTracker leader(1000);
  leader.touch(5, 3000, 0);  // due at 4000
  TouchTable follower;
  follower.touch(5, 3000);   // the client pinged the follower at t=2500
  for (const auto& [id, timeout] : follower.drain()) leader.touch(id, timeout, 2500);
  EXPECT_EQ(leader.expired(4000), std::vector<int64_t>{});
  EXPECT_EQ(leader.expired(6000), std::vector<int64_t>{5});
}

}  // namespace
}  // namespace zkraft::session
