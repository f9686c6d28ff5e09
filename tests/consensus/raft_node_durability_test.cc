// RaftNode durability: what was committed survives a power cut of every server, a follower
// acknowledges nothing while its fsync runs, and a server whose disk fails stops.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/consensus/raft_node_test_cluster.h"
#include "tests/consensus/raft_node_sync_gate_env.h"
#include "tests/consensus/storage_fault_env.h"

namespace zkraft::consensus::testing {
namespace {

using namespace std::chrono_literals;

const Membership kThree{{1, 2, 3}, {}};

TEST(RaftNodeDurability, CommittedEntriesSurvivePowerLossOfWholeCluster) {
  for (TearMode mode : {TearMode::kDropUnsynced, TearMode::kTornWrite, TearMode::kGarbageTail}) {
    SCOPED_TRACE(static_cast<int>(mode));
    CrashEnv envs[3];  // outlive the cluster
    std::mt19937 rng(static_cast<unsigned>(mode) + 7);
    RaftNodeCluster c(fast_options());
    for (NodeId id : {1, 2, 3}) c.set_env(id, &envs[id - 1]);
    c.start({1, 2, 3}, kThree);
    NodeId lead = c.wait_for_leader();
    ASSERT_NE(lead, 0u);

    // Committed = applied on the leader = fsynced on a majority.
    std::vector<std::string> committed;
    Index last = 0;
    for (int i = 0; i < 60; ++i) {
      std::string p = "d" + std::to_string(i);
      ProposeResult r = c.node(lead).propose(p);
      ASSERT_TRUE(r.ok());
      committed.push_back(p);
      last = r.index;
    }
    ASSERT_TRUE(c.run_until([&] { return c.node(lead).applied_index() >= last; }));
    ASSERT_EQ(c.app(lead).data(), committed);

    for (NodeId id : {1, 2, 3}) c.kill(id);
    for (auto& env : envs) env.crash(mode, rng);
    for (NodeId id : {1, 2, 3}) c.open_node(id);
    for (NodeId id : {1, 2, 3}) c.start_node(id);
    ASSERT_NE(c.wait_for_leader(), 0u);
    ASSERT_TRUE(c.run_until([&] {
      for (NodeId id : {1, 2, 3}) {
        if (c.app(id).data().size() < committed.size()) return false;
      }
      return c.converged();
    }));
    for (NodeId id : {1, 2, 3}) EXPECT_EQ(c.app(id).data(), committed) << "node " << id;
  }
}

TEST(RaftNodeDurability, FailedDiskStopsTheNodeAndNothingCommitsWithoutADurableMajority) {
  CrashEnv envs[3];
  RaftNodeCluster c(fast_options());
  for (NodeId id : {1, 2, 3}) c.set_env(id, &envs[id - 1]);
  c.start({1, 2, 3}, kThree);
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  ProposeResult first = c.node(lead).propose("before");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(c.wait_converged());

  NodeId dead = lead == 1 ? 2 : 1;
  NodeId frozen = 6 - lead - dead;
  c.kill(dead);
  c.app(frozen).expect_fatal = true;
  envs[frozen - 1].freeze();  // every later write on `frozen` fails

  ProposeResult r = c.node(lead).propose("needs-a-durable-majority");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(c.run_until([&] { return !c.app(frozen).fatal_errors.empty(); }));
  // The frozen follower never acknowledged, so the leader (alone durable) cannot commit. Give it
  // ample time to (wrongly) do so.
  c.run_until([] { return false; }, 500ms);
  EXPECT_LT(c.node(lead).commit_index(), r.index);
  EXPECT_LT(c.node(lead).applied_index(), r.index);
  EXPECT_LT(c.app(frozen).applied.back().first, r.index);
}

TEST(RaftNodeDurability, NoAcknowledgementWhileTheFollowersFsyncRuns) {
  SyncGateEnv gates[3];
  RaftNodeCluster c(fast_options());
  for (NodeId id : {1, 2, 3}) c.set_env(id, &gates[id - 1]);
  c.start({1, 2, 3}, kThree);
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  ASSERT_TRUE(c.node(lead).propose("before").ok());
  ASSERT_TRUE(c.wait_converged());

  NodeId dead = lead == 1 ? 2 : 1;
  NodeId slow = 6 - lead - dead;
  c.kill(dead);
  gates[slow - 1].close_gate();
  ProposeResult r = c.node(lead).propose("needs-the-slow-fsync");
  ASSERT_TRUE(r.ok());
  // The slow follower received the entry and is inside its fsync...
  ASSERT_TRUE(c.run_until([&] { return gates[slow - 1].blocked_syncs() > 0; }));
  // ...so it has promised nothing yet: the leader (one durable copy of two needed) cannot commit.
  c.run_until([] { return false; }, 300ms);
  EXPECT_LT(c.node(lead).commit_index(), r.index);
  EXPECT_LT(c.node(slow).commit_index(), r.index);

  gates[slow - 1].open_gate();
  // Once durable on both, it commits (possibly under a new leader: CheckQuorum may have deposed
  // the old one while the follower was silent).
  ASSERT_TRUE(c.run_until([&] {
    for (NodeId id : {lead, slow}) {
      const auto d = c.app(id).data();
      if (d.empty() || d.back() != "needs-the-slow-fsync") return false;
    }
    return true;
  }));
}

}  // namespace
}  // namespace zkraft::consensus::testing
