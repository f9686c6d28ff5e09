#include "session/session_expiry_tracker.h"

#include <gtest/gtest.h>

#include "session/session_table.h"

namespace zkraft::session {
namespace {

using Ids = std::vector<int64_t>;

TEST(SessionExpiryTracker, DeadlineRoundsUpToNextTick) {
  SessionExpiryTracker t(2000);
  t.touch(1, 4000, 10000);  // 14000 -> next multiple strictly after: 16000
  EXPECT_EQ(t.deadline(1), 16000);
  t.touch(2, 4000, 10500);  // 14500 -> 16000: same bucket
  EXPECT_EQ(t.deadline(2), 16000);
  t.touch(3, 4000, 11999);  // 15999 -> 16000
  EXPECT_EQ(t.deadline(3), 16000);
  t.touch(4, 4000, 12000);  // 16000 -> 18000
  EXPECT_EQ(t.deadline(4), 18000);
  EXPECT_EQ(t.round_up(0), 2000);
  EXPECT_EQ(t.next_deadline(), 16000);
  ASSERT_EQ(t.buckets().size(), 2u);
  EXPECT_EQ(t.buckets()[0].deadline_ms, 16000);
  EXPECT_EQ(t.buckets()[0].ids, (Ids{1, 2, 3}));
  EXPECT_EQ(t.buckets()[1].ids, (Ids{4}));
}

TEST(SessionExpiryTracker, ExpiresOnlyWhenBucketTimeReached) {
  SessionExpiryTracker t(1000);
  t.touch(7, 3000, 0);  // 4000
  t.touch(8, 5000, 0);  // 6000
  EXPECT_EQ(t.expired(3999), Ids{});
  EXPECT_EQ(t.expired(4000), Ids{7});
  EXPECT_FALSE(t.contains(7));
  EXPECT_EQ(t.expired(4000), Ids{});  // returned once
  EXPECT_EQ(t.expired(100000), Ids{8});
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.next_deadline(), std::nullopt);
}

TEST(SessionExpiryTracker, TouchPostponesExpiry) {
  SessionExpiryTracker t(1000);
  t.touch(1, 3000, 0);      // 4000
  t.touch(1, 3000, 2500);   // 6000
  EXPECT_EQ(t.expired(5000), Ids{});
  EXPECT_TRUE(t.touch(1, 5500));  // remembered timeout: 8500 -> 9000
  EXPECT_EQ(t.deadline(1), 9000);
  EXPECT_EQ(t.expired(8999), Ids{});
  EXPECT_EQ(t.expired(9000), Ids{1});
  EXPECT_FALSE(t.touch(1, 9000));  // unknown now
  ASSERT_EQ(t.buckets().size(), 0u);  // old buckets left no empty sets behind
}

TEST(SessionExpiryTracker, TouchWithNewTimeout) {
  SessionExpiryTracker t(1000);
  t.touch(1, 3000, 0);
  t.touch(1, 10000, 0);  // reconnect negotiated a longer timeout
  EXPECT_EQ(t.deadline(1), 11000);
  EXPECT_TRUE(t.touch(1, 1000));
  EXPECT_EQ(t.deadline(1), 12000);
}

TEST(SessionExpiryTracker, RemoveStopsTracking) {
  SessionExpiryTracker t(1000);
  t.touch(1, 3000, 0);
  t.touch(2, 3000, 0);
  EXPECT_TRUE(t.remove(1));
  EXPECT_FALSE(t.remove(1));
  EXPECT_EQ(t.expired(10000), Ids{2});
}

TEST(SessionExpiryTracker, ExpiredReturnsAscendingAcrossBuckets) {
  SessionExpiryTracker t(1000);
  t.touch(30, 1000, 0);  // 2000
  t.touch(10, 2000, 0);  // 3000
  t.touch(20, 1000, 0);  // 2000
  EXPECT_EQ(t.expired(5000), (Ids{10, 20, 30}));
}

TEST(SessionExpiryTracker, ResetAllGivesFreshTimeouts) {
  SessionExpiryTracker t(1000);
  t.touch(1, 3000, 0);     // 4000
  t.touch(2, 10000, 0);    // 11000
  t.reset_all(50000);
  EXPECT_EQ(t.deadline(1), 54000);
  EXPECT_EQ(t.deadline(2), 61000);
  EXPECT_EQ(t.expired(53999), Ids{});
  EXPECT_EQ(t.expired(54000), Ids{1});
  EXPECT_EQ(t.buckets().size(), 1u);
}

TEST(SessionExpiryTracker, ResetFromTable) {
  SessionTable table;
  table.add(5, 4000, SessionPassword{});
  table.add(6, 8000, SessionPassword{});
  SessionExpiryTracker t(2000);
  t.touch(99, 4000, 0);  // not in the table: dropped
  t.reset_from(table, 1000);
  EXPECT_FALSE(t.contains(99));
  EXPECT_EQ(t.deadline(5), 6000);
  EXPECT_EQ(t.deadline(6), 10000);
  EXPECT_EQ(t.size(), 2u);
}

}  // namespace
}  // namespace zkraft::session
