// Named Raft scenarios, each a deterministic script on the simulated cluster.

#include <gtest/gtest.h>

#include "tests/sim/sim_cluster.h"

namespace zkraft::sim {
namespace {

TEST(Scenario, ElectsLeaderAndCommits) {
  SimOptions o;
  SimCluster c(o);
  ASSERT_TRUE(c.run_until([&] { return c.leader() != 0; }, 2000));
  NodeId l = c.leader();
  ASSERT_TRUE(c.propose(l, "x").ok());
  ASSERT_TRUE(c.run_until([&] { return c.applied_data(1).size() == 1 && c.applied_data(2).size() == 1 &&
                                       c.applied_data(3).size() == 1; }, 1000));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

}  // namespace
}  // namespace zkraft::sim
