// How a RaftCore learns of a newer term: a leader that sees one follows, and a stale leader is
// told the term by the follower ahead of it, in every PreVote / CheckQuorum mode.

#include <gtest/gtest.h>

#include "consensus/raft_core.h"
#include "tests/consensus/raft_core_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::TestNet;

TEST(RaftCoreTerms, HigherTermMessageMakesLeaderFollow) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  Message m;
  m.type = MessageType::kAppendResponse;
  m.from = 2;
  m.to = 1;
  m.term = 5;
  net.at(1).step(m);
  EXPECT_EQ(net.at(1).role(), Role::kFollower);
  EXPECT_EQ(net.at(1).term(), 5u);
}

// Without PreVote and CheckQuorum as well: a follower ahead in terms answers a stale leader's
// heartbeat with its term, and the leader steps down. Before, this mode ignored the heartbeat and
// counted on the follower's vote requests reaching the leader, which they do not when the
// follower's configuration leaves the leader out (sim seed 13209 with compact_step 3).
TEST(RaftCoreTerms, AFollowerAheadInTermsMakesAStaleLeaderStepDownWithoutPreVoteOrCheckQuorum) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9, /*pre_vote=*/false, /*check_quorum=*/false);
  net.elect(1);
  ASSERT_EQ(net.at(1).role(), Role::kLeader);
  const Term t = net.at(1).term();
  Message vote;  // from a candidate whose log is behind: refused, but its term is taken
  vote.type = MessageType::kVote;
  vote.from = 3;
  vote.to = 2;
  vote.term = t + 5;
  net.at(2).step(vote);
  ASSERT_EQ(net.at(2).term(), t + 5);
  net.queue.clear();  // the refusal, which would tell node 3 the term too
  net.process_readies();
  net.queue.clear();
  for (int i = 0; i < 5 && net.at(1).role() == Role::kLeader; ++i) {
    net.at(1).tick();
    net.process_readies();
    while (!net.queue.empty()) {
      Message m = net.queue.front();
      net.queue.pop_front();
      if (m.from == 1 && m.to == 2) net.at(2).step(m);  // only 1 -> 2 and 2's answers
      if (m.from == 2 && m.to == 1) net.at(1).step(m);
      net.process_readies();
    }
  }
  EXPECT_EQ(net.at(1).role(), Role::kFollower);
  EXPECT_EQ(net.at(1).term(), t + 5);
}

}  // namespace
}  // namespace zkraft::consensus
