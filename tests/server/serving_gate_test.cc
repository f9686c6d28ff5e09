// ServingGate: the bound from the session timeouts, the mode changes, read-only after the grace.

#include <gtest/gtest.h>

#include "server/replicated_log.h"
#include "server/quorum_contact.h"
#include "server/serving_gate.h"

namespace zkraft::server {
namespace {

TEST(ServingPolicy, BoundIsAThirdOfTheSmallestSessionTimeout) {
  Config c;
  c.tick_time_ms = 2000;  // minSessionTimeout defaults to two ticks
  auto p = ServingPolicy::from_config(c);
  EXPECT_EQ(p.contact_bound_ms, 4000 / 3);
  EXPECT_FALSE(p.bound_is_floored);
  EXPECT_FALSE(p.read_only_enabled);
  EXPECT_EQ(p.read_only_grace_ms, 2000);  // ZooKeeper: max(2000, tickTime)
  c.min_session_timeout_ms = 9000;
  c.tick_time_ms = 3000;
  c.read_only_mode = true;
  p = ServingPolicy::from_config(c);
  EXPECT_EQ(p.contact_bound_ms, 3000);
  EXPECT_EQ(p.read_only_grace_ms, 3000);
  EXPECT_TRUE(p.read_only_enabled);
}

TEST(ServingPolicy, BoundNeverGoesUnderThreeHeartbeats) {
  Config c;
  c.tick_time_ms = 100;  // min session timeout 200: a third would be 66 ms
  auto p = ServingPolicy::from_config(c);
  EXPECT_EQ(p.contact_bound_ms, ServingPolicy::kMinContactBoundMs);
  EXPECT_TRUE(p.bound_is_floored);
}

ServingPolicy policy(bool read_only) {
  ServingPolicy p;
  p.contact_bound_ms = 1000;
  p.read_only_enabled = read_only;
  p.read_only_grace_ms = 2000;
  return p;
}

TEST(ServingGate, StartsCutOffServesWithinTheBoundAndStopsPastIt) {
  ServingGate g(policy(false));
  EXPECT_EQ(g.mode(), ServingMode::kCutOff);
  auto c = g.update(0, 0);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->from, ServingMode::kCutOff);
  EXPECT_EQ(c->to, ServingMode::kServing);
  EXPECT_FALSE(g.update(1000, 100));  // at the bound: still serving
  c = g.update(1001, 200);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->to, ServingMode::kCutOff);
  EXPECT_FALSE(g.serving());
  // Without read-only mode it stays cut off however long it lasts.
  EXPECT_FALSE(g.update(1'000'000, 1'000'000));
  EXPECT_FALSE(g.update(ReplicatedLog::kNoQuorumContact, 2'000'000));
  EXPECT_EQ(g.mode(), ServingMode::kCutOff);
  c = g.update(50, 2'000'100);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->from, ServingMode::kCutOff);
  EXPECT_TRUE(g.serving());
}

TEST(ServingGate, ReadOnlyOnlyAfterTheGraceAndUntilContactReturns) {
  ServingGate g(policy(true));
  g.update(0, 0);
  auto c = g.update(1500, 10'000);  // cut off from here
  ASSERT_TRUE(c);
  EXPECT_EQ(c->to, ServingMode::kCutOff);
  EXPECT_FALSE(g.update(ReplicatedLog::kNoQuorumContact, 12'000));  // the grace, not past it
  c = g.update(ReplicatedLog::kNoQuorumContact, 12'001);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->from, ServingMode::kCutOff);
  EXPECT_EQ(c->to, ServingMode::kReadOnly);
  EXPECT_TRUE(g.read_only());
  EXPECT_FALSE(g.update(5000, 13'000));
  c = g.update(10, 14'000);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->from, ServingMode::kReadOnly);
  EXPECT_EQ(c->to, ServingMode::kServing);
  // A second cut waits out a fresh grace.
  g.update(1500, 20'000);
  EXPECT_EQ(g.mode(), ServingMode::kCutOff);
  EXPECT_FALSE(g.update(1500, 21'000));
  EXPECT_TRUE(g.update(1500, 22'001));
  EXPECT_TRUE(g.read_only());
}

TEST(ServingGate, AServerThatStartsWithoutAQuorumWaitsOutTheGraceToo) {
  ServingGate g(policy(true));
  EXPECT_FALSE(g.update(ReplicatedLog::kNoQuorumContact, 5'000));
  EXPECT_FALSE(g.update(ReplicatedLog::kNoQuorumContact, 7'000));
  auto c = g.update(ReplicatedLog::kNoQuorumContact, 7'001);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->to, ServingMode::kReadOnly);
}

}  // namespace
}  // namespace zkraft::server

namespace zkraft::server {
namespace {

TEST(QuorumContactAge, NeverUnderstatedAndAlwaysFreshForTheOnlyVoter) {
  constexpr int64_t none = ReplicatedLog::kNoQuorumContact;
  EXPECT_EQ(quorum_contact_age_ms(1000, false, 1000, 100), 100);  // the uncounted tick
  EXPECT_EQ(quorum_contact_age_ms(1000, false, 4700, 100), 3800);  // a late copy ages it
  EXPECT_EQ(quorum_contact_age_ms(1000, false, 900, 100), 100);    // never negative
  EXPECT_EQ(quorum_contact_age_ms(none, false, 4700, 100), none);
  // The only voter, leading: however late the Raft thread copied its figures.
  EXPECT_EQ(quorum_contact_age_ms(1000, true, 4700, 100), 0);
  EXPECT_EQ(quorum_contact_age_ms(none, true, 4700, 100), 0);
}

}  // namespace
}  // namespace zkraft::server
