// RaftCore::quorum_contact_age_ticks: how long a server has gone without knowing it is in contact
// with a quorum. The server stops answering clients when it grows past a bound, so it must grow
// on a cut-off follower and on an isolated leader, and stay small everywhere a quorum is heard.

#include <gtest/gtest.h>

#include "consensus/raft_core.h"
#include "tests/consensus/raft_core_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::TestNet;

// One tick everywhere, then every message delivered (a heartbeat round trip fits in a tick).
void tick_and_settle(TestNet& net, int n) {
  for (int i = 0; i < n; ++i) {
    net.tick_all();
    net.stabilize();
  }
}

TEST(RaftCoreContact, SingleVoterLeaderIsAlwaysInContact) {
  TestNet net;
  net.add(1, {1});
  EXPECT_EQ(net.at(1).quorum_contact_age_ticks(), RaftCore::kNoQuorumContact);  // not leading yet
  net.elect(1);
  ASSERT_EQ(net.at(1).role(), Role::kLeader);
  tick_and_settle(net, 30);
  EXPECT_EQ(net.at(1).quorum_contact_age_ticks(), 0u);
}

TEST(RaftCoreContact, HealthyEnsembleStaysWithinAHeartbeat) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  ASSERT_EQ(net.at(1).role(), Role::kLeader);
  for (int i = 0; i < 40; ++i) {
    tick_and_settle(net, 1);
    for (NodeId id : {1, 2, 3}) {
      EXPECT_LE(net.at(id).quorum_contact_age_ticks(), 2u) << "node " << id << " tick " << i;
    }
  }
  EXPECT_EQ(net.at(1).role(), Role::kLeader);
}

TEST(RaftCoreContact, CutOffFollowerAgesTickByTickThenHasNone) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  tick_and_settle(net, 2);
  const uint64_t before = net.at(3).quorum_contact_age_ticks();
  ASSERT_LE(before, 2u);
  net.isolate(3);
  tick_and_settle(net, 5);
  EXPECT_EQ(net.at(3).quorum_contact_age_ticks(), before + 5);
  // The leader still hears node 2: a majority of {1, 2, 3}.
  EXPECT_LE(net.at(1).quorum_contact_age_ticks(), 2u);
  // Once its election timer fires the follower campaigns and knows no leader at all.
  tick_and_settle(net, 30);
  EXPECT_NE(net.at(3).role(), Role::kLeader);
  EXPECT_EQ(net.at(3).quorum_contact_age_ticks(), RaftCore::kNoQuorumContact);
  // Healed, it follows the leader again and is in contact.
  net.heal();
  tick_and_settle(net, 30);
  EXPECT_LE(net.at(3).quorum_contact_age_ticks(), 2u);
}

TEST(RaftCoreContact, IsolatedLeaderAgesUntilItStepsDown) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  tick_and_settle(net, 2);
  ASSERT_LE(net.at(1).quorum_contact_age_ticks(), 2u);
  net.isolate(1);
  tick_and_settle(net, 4);
  // It hears no voter but itself: the quorum-th (2nd) youngest contact is at least 4 ticks old.
  EXPECT_GE(net.at(1).quorum_contact_age_ticks(), 4u);
  EXPECT_LE(net.at(1).quorum_contact_age_ticks(), 6u);
  EXPECT_EQ(net.at(1).role(), Role::kLeader);
  // CheckQuorum makes it step down; then it knows no leader.
  tick_and_settle(net, 30);
  EXPECT_NE(net.at(1).role(), Role::kLeader);
  EXPECT_EQ(net.at(1).quorum_contact_age_ticks(), RaftCore::kNoQuorumContact);
}

TEST(RaftCoreContact, LeaderOfFiveNeedsTwoFollowers) {
  TestNet net;
  for (NodeId id : {1, 2, 3, 4, 5}) net.add(id, {1, 2, 3, 4, 5}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  tick_and_settle(net, 2);
  net.isolate(5);
  net.isolate(4);
  // Only links to 4 and 5 are cut (isolate cuts both ways); 1, 2, 3 still talk.
  tick_and_settle(net, 4);
  EXPECT_LE(net.at(1).quorum_contact_age_ticks(), 2u);
  net.isolate(3);
  tick_and_settle(net, 4);
  EXPECT_GE(net.at(1).quorum_contact_age_ticks(), 4u);
}

}  // namespace
}  // namespace zkraft::consensus
