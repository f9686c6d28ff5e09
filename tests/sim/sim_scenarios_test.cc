// Named Raft scenarios, each a deterministic script on the simulated cluster. Every scenario
// also runs the SafetyChecker after every event (c.ok()).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "tests/sim/sim_cluster.h"

namespace zkraft::sim {
namespace {

using consensus::ConfChangeType;
using consensus::Index;
using consensus::Message;
using consensus::MessageType;
using consensus::Role;
using consensus::Term;

constexpr uint64_t kElectionMs = 100;  // election_ticks (10) * tick_ms (10)

SimOptions options(int voters, uint64_t seed = 7) {
  SimOptions o;
  o.seed = seed;
  o.voters = voters;
  return o;
}

NodeId wait_leader(SimCluster& c, uint64_t max_ms = 3000) {
  c.run_until([&] { return c.leader() != 0; }, max_ms);
  return c.leader();
}

bool applied_anywhere(SimCluster& c, const std::string& data) {
  for (NodeId id : c.node_ids()) {
    const auto& d = c.applied_data(id);
    if (std::find(d.begin(), d.end(), data) != d.end()) return true;
  }
  return false;
}

bool applied_on(SimCluster& c, NodeId id, const std::string& data) {
  const auto& d = c.applied_data(id);
  return std::find(d.begin(), d.end(), data) != d.end();
}

// Commits `data` through the current leader, retrying across leader changes.
bool commit(SimCluster& c, const std::string& data, uint64_t max_ms = 3000) {
  const uint64_t end = c.now() + max_ms;
  while (c.now() < end) {
    NodeId l = wait_leader(c, end - c.now());
    if (!l) return false;
    if (c.propose(l, data).ok() &&
        c.run_until([&] { return applied_on(c, l, data); }, std::min<uint64_t>(500, end - c.now()))) {
      return true;
    }
  }
  return false;
}

std::vector<NodeId> others(SimCluster& c, std::initializer_list<NodeId> except) {
  std::vector<NodeId> out;
  for (NodeId id : c.node_ids()) {
    if (std::find(except.begin(), except.end(), id) == except.end()) out.push_back(id);
  }
  return out;
}

TEST(Scenario, ElectsLeaderAndCommits) {
  SimCluster c(options(3));
  ASSERT_TRUE(commit(c, "x"));
  ASSERT_TRUE(c.run_until([&] { return applied_on(c, 1, "x") && applied_on(c, 2, "x") && applied_on(c, 3, "x"); }, 1000));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// Raft paper, Figure 8: a leader must not commit an entry of an earlier term by counting
// replicas, because a later leader may still overwrite it. Here the old-term entry "A" reaches a
// majority while its leader's own-term entry cannot; then a node whose log has a newer last term
// wins and overwrites "A". With the rule in place nothing committed is ever lost.
TEST(Scenario, Figure8OldTermEntryIsNotCommittedByCounting) {
  SimOptions o = options(5, 11);
  o.raft.max_msg_bytes = 1;  // one entry per append, so the two entries travel separately
  o.trace = std::getenv("SIM_TRACE") != nullptr;
  SimCluster c(o);
  ASSERT_TRUE(commit(c, "base"));
  ASSERT_TRUE(c.run_until([&] { for (NodeId id : c.node_ids()) if (!applied_on(c, id, "base")) return false; return true; }, 2000));
  const NodeId s1 = c.leader();
  const NodeId s2 = s1 == 1 ? 2 : 1;
  auto rest = others(c, {s1, s2});

  // (a) s1 replicates "A" only to s2.
  c.partition({{s1, s2}, rest});
  ASSERT_TRUE(c.propose(s1, "A").ok());
  const Index a_index = c.core(s1).log().last_index();
  const Term a_term = c.core(s1).term();
  ASSERT_TRUE(c.run_until([&] { return c.core(s2).log().last_index() == a_index; }, 1000));

  // (b) the other three elect a leader x, which is cut off the moment it wins: its no-op at
  // a_index (newer term) stays in its own log only.
  NodeId x = 0;
  ASSERT_TRUE(c.run_until([&] {
    for (NodeId id : rest) if (c.is_up(id) && c.core(id).role() == Role::kLeader) { x = id; return true; }
    return false;
  }, 3000));
  c.isolate(x);
  ASSERT_EQ(c.core(x).log().last_index(), a_index);
  const Term x_term = c.core(x).log().last_term();
  ASSERT_GT(x_term, a_term);
  std::vector<NodeId> cd;
  for (NodeId id : rest) if (id != x) cd.push_back(id);

  // (c) s1/s2 + the two others: a leader y from {s1, s2} spreads "A" to everyone but its own
  // new-term entries (index > a_index) are dropped, so they never reach a majority.
  c.partition({{s1, s2, cd[0], cd[1]}, {x}});
  c.set_drop_filter([&](const Message& m) {
    if (m.type != MessageType::kAppend) return false;
    // Probes the receiver must reject anyway still pass, so the leader can find "A"'s slot.
    if (!c.is_up(m.to) || !c.core(m.to).log().match_term(m.index, m.log_term)) return false;
    for (auto& e : m.entries) if (e.index > a_index) return true;
    return false;
  });
  ASSERT_TRUE(c.run_until([&] {
    return c.core(cd[0]).log().term(a_index) == std::optional<Term>(a_term) &&
           c.core(cd[1]).log().term(a_index) == std::optional<Term>(a_term);
  }, 3000));
  c.run_for(5 * kElectionMs);
  const NodeId y = c.leader();
  ASSERT_TRUE(y == s1 || y == s2);
  // "A" is on 4 of 5 logs, yet not committed: it is not of y's term.
  EXPECT_LT(c.core(y).commit_index(), a_index);
  EXPECT_FALSE(applied_anywhere(c, "A"));

  // (d) s1 and s2 go away; x (newer last term) wins with cd and overwrites "A".
  c.set_drop_filter(nullptr);
  c.partition({{x, cd[0], cd[1]}, {s1}, {s2}});
  ASSERT_TRUE(c.run_until([&] {
    return c.core(cd[0]).commit_index() > a_index && c.core(cd[0]).log().term(a_index) == std::optional<Term>(x_term);
  }, 5000));
  EXPECT_FALSE(applied_anywhere(c, "A"));
  c.heal();
  ASSERT_TRUE(commit(c, "after"));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// PreVote: a node partitioned away for a long time does not raise its term, so when it comes
// back the healthy leader keeps its leadership and term.
TEST(Scenario, RejoiningPartitionedNodeDoesNotDeposeLeader) {
  SimCluster c(options(3, 21));
  ASSERT_TRUE(commit(c, "x"));
  const NodeId l = c.leader();
  const Term t = c.core(l).term();
  const NodeId f = l == 3 ? 2 : 3;
  c.isolate(f);
  c.run_for(50 * kElectionMs);
  EXPECT_EQ(c.core(f).term(), t);  // only pre-votes, which never succeeded
  c.heal();
  c.run_for(20 * kElectionMs);
  EXPECT_EQ(c.leader(), l);
  EXPECT_EQ(c.core(l).term(), t);
  ASSERT_TRUE(commit(c, "y"));
  EXPECT_EQ(c.leader(), l);
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// A leader left with a minority cannot commit; the majority side elects a leader and carries on;
// the minority's proposal disappears when it rejoins.
TEST(Scenario, MinorityCannotCommit) {
  SimCluster c(options(5, 31));
  ASSERT_TRUE(commit(c, "x"));
  const NodeId l = c.leader();
  const NodeId buddy = l == 1 ? 2 : 1;
  c.partition({{l, buddy}, others(c, {l, buddy})});
  ASSERT_TRUE(c.propose(l, "minority").ok());
  c.run_for(30 * kElectionMs);
  EXPECT_FALSE(applied_anywhere(c, "minority"));
  EXPECT_NE(c.core(l).role(), Role::kLeader);  // CheckQuorum made it step down
  NodeId majority_leader = c.leader();
  ASSERT_NE(majority_leader, 0u);
  ASSERT_TRUE(c.propose(majority_leader, "majority").ok());
  ASSERT_TRUE(c.run_until([&] { return applied_on(c, majority_leader, "majority"); }, 2000));
  c.heal();
  ASSERT_TRUE(c.run_until([&] { return applied_on(c, l, "majority"); }, 3000));
  c.run_for(10 * kElectionMs);
  EXPECT_FALSE(applied_anywhere(c, "minority"));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// Four voters split 2/2: neither side has a quorum, nothing commits, no leader survives.
TEST(Scenario, FourNodesSplitTwoTwoCannotCommit) {
  SimCluster c(options(4, 41));
  ASSERT_TRUE(commit(c, "x"));
  c.partition({{1, 2}, {3, 4}});
  for (int i = 0; i < 40; ++i) {
    for (NodeId id : c.node_ids()) c.propose(id, "split" + std::to_string(i));
    c.run_for(kElectionMs);
  }
  for (int i = 0; i < 40; ++i) EXPECT_FALSE(applied_anywhere(c, "split" + std::to_string(i))) << i;
  EXPECT_EQ(c.leader(), 0u);
  c.heal();
  ASSERT_TRUE(commit(c, "healed"));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// A new node joins as a learner, catches up without voting, and is promoted to voter.
TEST(Scenario, LearnerCatchesUpAndIsPromoted) {
  SimOptions o = options(3, 51);
  o.spare_nodes = 1;
  SimCluster c(o);
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(commit(c, "e" + std::to_string(i)));
  NodeId l = c.leader();
  ASSERT_TRUE(c.propose_conf_change(l, {ConfChangeType::kAddLearner, 4}).ok());
  ASSERT_TRUE(c.run_until([&] { return applied_on(c, 4, "e29"); }, 3000));
  EXPECT_EQ(c.core(4).role(), Role::kFollower);
  EXPECT_TRUE(consensus::is_learner(c.core(4).membership(), 4));
  // Learners do not count: the quorum of 3 voters is still 2.
  l = c.leader();
  ASSERT_TRUE(c.run_until([&] { return c.propose_conf_change(c.leader(), {ConfChangeType::kPromoteLearner, 4}).ok(); }, 2000));
  ASSERT_TRUE(c.run_until([&] {
    for (NodeId id : c.node_ids()) if (!consensus::is_voter(c.core(id).membership(), 4)) return false;
    return true;
  }, 3000));
  // Four voters: quorum 3, so one crash is tolerated, and node 4's vote now counts.
  const NodeId victim = c.leader() == 1 ? 2 : 1;
  c.crash(victim);
  ASSERT_TRUE(commit(c, "with4"));
  EXPECT_TRUE(applied_on(c, 4, "with4") || c.run_until([&] { return applied_on(c, 4, "with4"); }, 2000));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// CheckQuorum: a leader cut off from its majority steps down within about an election timeout,
// so clients do not keep talking to a leader that cannot commit.
TEST(Scenario, LeaderCutOffFromMajorityStepsDown) {
  SimCluster c(options(5, 61));
  ASSERT_TRUE(commit(c, "x"));
  const NodeId l = c.leader();
  c.isolate(l);
  const uint64_t start = c.now();
  ASSERT_TRUE(c.run_until([&] { return c.core(l).role() != Role::kLeader; }, 5 * kElectionMs));
  EXPECT_LE(c.now() - start, 2 * kElectionMs + 20);
  // The rest elect a new leader and commit.
  ASSERT_TRUE(c.run_until([&] { NodeId n = c.leader(); return n != 0 && n != l; }, 3000));
  ASSERT_TRUE(commit(c, "y"));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// Three nodes that snapshot every 10 entries and keep a tail of 2; the simulated snapshot is
// 3000 bytes, sent in 5 chunks of 700.
SimOptions snapshotting_options() {
  SimOptions o = options(3, 71);
  o.snapshot_every = 10;
  o.keep_log_tail = 2;
  o.raft.max_snapshot_chunk_bytes = 700;
  return o;
}

// Commits while a follower is cut off, until the leader compacted what it lacks; returns it.
NodeId leave_a_follower_behind(SimCluster& c) {
  EXPECT_TRUE(commit(c, "x"));
  const NodeId slow = c.leader() == 3 ? 2 : 3;
  c.isolate(slow);
  for (int i = 0; i < 60; ++i) EXPECT_TRUE(commit(c, "e" + std::to_string(i)));
  EXPECT_GT(c.core(c.leader()).log().first_index(), c.core(slow).log().last_index() + 1);
  return slow;
}

// A follower that missed entries the leader has compacted is brought back by a chunked
// snapshot, then continues with normal appends.
TEST(Scenario, SlowFollowerIsBroughtBackBySnapshot) {
  SimCluster c(snapshotting_options());
  const NodeId slow = leave_a_follower_behind(c);
  c.heal();
  ASSERT_TRUE(c.run_until([&] { return c.applied(slow) >= c.core(c.leader()).commit_index(); }, 5000));
  EXPECT_GE(c.stats(slow).snapshots_restored, 1u);
  ASSERT_TRUE(commit(c, "after"));
  ASSERT_TRUE(c.run_until([&] { return applied_on(c, slow, "after"); }, 2000));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// The follower above, crashed once some chunks of the snapshot are in its storage but the
// snapshot is not stored: the chunks are lost with the crash (as open() removes a file nothing
// names), and after its restart a new transfer from offset 0 brings it back.
TEST(Scenario, AFollowerCrashedInTheMiddleOfASnapshotTransferCatchesUpAfterItsRestart) {
  SimCluster c(snapshotting_options());
  const NodeId slow = leave_a_follower_behind(c);
  c.heal();
  // An answer to a chunk: that chunk is written (a Ready's answers wait for its writes).
  const uint64_t answers_before = c.counters()["recv.SnapshotResp"];
  ASSERT_TRUE(c.run_until([&] { return c.counters()["recv.SnapshotResp"] > answers_before; }, 5000));
  ASSERT_EQ(c.stats(slow).snapshots_restored, 0u);
  c.crash(slow);
  EXPECT_EQ(c.counters()["snapshot.received_lost"], 1u);  // chunks were written, then lost
  c.run_for(50);
  c.restart(slow);
  ASSERT_TRUE(c.run_until([&] { return c.applied(slow) >= c.core(c.leader()).commit_index(); }, 5000));
  EXPECT_EQ(c.stats(slow).snapshots_restored, 1u);
  EXPECT_EQ(c.counters()["snapshot.received_stored"], 1u);
  ASSERT_TRUE(commit(c, "after"));
  ASSERT_TRUE(c.run_until([&] { return applied_on(c, slow, "after"); }, 2000));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// Leadership transfer: the target catches up, gets TimeoutNow, wins at once (bypassing the
// lease) in the next term; nothing committed is lost.
TEST(Scenario, LeadershipTransfer) {
  SimCluster c(options(5, 81));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(commit(c, "e" + std::to_string(i)));
  const NodeId l = c.leader();
  const Term t = c.core(l).term();
  const NodeId target = l == 5 ? 4 : 5;
  ASSERT_EQ(c.transfer_leadership(l, target), consensus::RaftError::kOk);
  EXPECT_EQ(c.propose(l, "during").error, consensus::RaftError::kTransferInProgress);
  ASSERT_TRUE(c.run_until([&] { return c.leader() == target; }, kElectionMs));
  EXPECT_EQ(c.core(target).term(), t + 1);
  ASSERT_TRUE(commit(c, "after"));
  EXPECT_TRUE(applied_on(c, target, "e9"));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// ReadIndex: a leader partitioned away cannot confirm its leadership, so it answers no read
// index, while the new leader's read index covers everything it committed.
TEST(Scenario, DeposedLeaderAnswersNoReadIndex) {
  SimCluster c(options(5, 91));
  ASSERT_TRUE(commit(c, "x"));
  const NodeId old = c.leader();
  c.isolate(old);
  ASSERT_EQ(c.read_index(old, 1001), consensus::RaftError::kOk);  // still believes it leads
  ASSERT_TRUE(c.run_until([&] { NodeId n = c.leader(); return n != 0 && n != old; }, 3000));
  const NodeId fresh = c.leader();
  ASSERT_TRUE(commit(c, "newer"));
  c.run_for(10 * kElectionMs);
  EXPECT_TRUE(c.read_states(old).empty());
  ASSERT_EQ(c.read_index(fresh, 2002), consensus::RaftError::kOk);
  ASSERT_TRUE(c.run_until([&] { return !c.read_states(fresh).empty(); }, 1000));
  EXPECT_EQ(c.read_states(fresh)[0].context, 2002u);
  EXPECT_GE(c.read_states(fresh)[0].index, c.core(fresh).commit_index());
  // A follower's read index is served through the leader.
  const NodeId follower = others(c, {old, fresh})[0];
  ASSERT_EQ(c.read_index(follower, 3003), consensus::RaftError::kOk);
  ASSERT_TRUE(c.run_until([&] { return !c.read_states(follower).empty(); }, 1000));
  c.heal();
  c.run_for(10 * kElectionMs);
  EXPECT_TRUE(c.read_states(old).empty());
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// Fast failover: when the followers' transports see the connection to the leader break, they
// pre-vote at once instead of waiting out an election timeout.
TEST(Scenario, FastFailoverOnBrokenLeaderConnection) {
  SimOptions o = options(3, 111);
  o.trace = std::getenv("SIM_TRACE") != nullptr;
  SimCluster c(o);
  ASSERT_TRUE(commit(c, "x"));
  const NodeId old = c.leader();
  c.run_for(3);  // mid-way between heartbeats
  c.crash(old);
  // TCP delivers what was sent before it reports the break: let in-flight messages land.
  c.run_for(11);
  const uint64_t start = c.now();
  for (NodeId id : others(c, {old})) c.broken_leader_connection(id);
  ASSERT_TRUE(c.run_until([&] { return c.leader() != 0; }, 2 * kElectionMs));
  EXPECT_LT(c.now() - start, kElectionMs / 2);  // well under the minimum election timeout
  ASSERT_TRUE(commit(c, "y"));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// A single follower's broken connection (the leader is fine) does not disturb the cluster: the
// other follower still hears the leader and refuses the pre-vote.
TEST(Scenario, SpuriousBrokenConnectionDoesNotDeposeLeader) {
  SimCluster c(options(3, 121));
  ASSERT_TRUE(commit(c, "x"));
  const NodeId l = c.leader();
  const Term t = c.core(l).term();
  const NodeId f = others(c, {l})[0];
  c.broken_leader_connection(f);
  c.run_for(10 * kElectionMs);
  EXPECT_EQ(c.leader(), l);
  EXPECT_EQ(c.core(l).term(), t);
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// A leader can remove itself: it keeps leading until the change commits, then steps down and
// the remaining voters elect a leader among themselves.
TEST(Scenario, LeaderRemovesItself) {
  SimCluster c(options(3, 131));
  ASSERT_TRUE(commit(c, "x"));
  const NodeId l = c.leader();
  ASSERT_TRUE(c.propose_conf_change(l, {ConfChangeType::kRemoveNode, l}).ok());
  ASSERT_TRUE(c.run_until([&] { NodeId n = c.leader(); return n != 0 && n != l; }, 3000));
  EXPECT_FALSE(consensus::is_voter(c.core(c.leader()).membership(), l));
  ASSERT_TRUE(commit(c, "y"));
  c.run_for(20 * kElectionMs);
  EXPECT_NE(c.core(l).role(), Role::kLeader);
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// Asymmetric partition: the leader can still send but hears nothing back. CheckQuorum makes it
// step down; the others elect a new leader and commit; the old one cannot win (its pre-vote
// answers never arrive) and rejoins once the link heals.
TEST(Scenario, AsymmetricPartitionLeaderCannotHear) {
  SimCluster c(options(3, 141));
  ASSERT_TRUE(commit(c, "x"));
  const NodeId l = c.leader();
  for (NodeId id : others(c, {l})) c.block(id, l);
  ASSERT_TRUE(c.run_until([&] { NodeId n = c.leader(); return n != 0 && n != l; }, 20 * kElectionMs));
  EXPECT_NE(c.core(l).role(), Role::kLeader);
  ASSERT_TRUE(commit(c, "y"));
  c.run_for(20 * kElectionMs);
  EXPECT_NE(c.leader(), l);
  c.heal();
  ASSERT_TRUE(c.run_until([&] { return applied_on(c, l, "y"); }, 3000));
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

// Crash and restart of every node: durable state brings the same log back.
TEST(Scenario, FullClusterRestartKeepsCommittedEntries) {
  SimCluster c(options(3, 101));
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(commit(c, "e" + std::to_string(i)));
  for (NodeId id : c.node_ids()) c.crash(id);
  c.run_for(kElectionMs);
  for (NodeId id : c.node_ids()) c.restart(id);
  ASSERT_TRUE(commit(c, "after"));
  for (NodeId id : c.node_ids()) {
    ASSERT_TRUE(c.run_until([&] { return applied_on(c, id, "after"); }, 2000));
  }
  EXPECT_TRUE(c.ok()) << c.checker().violation();
}

}  // namespace
}  // namespace zkraft::sim
