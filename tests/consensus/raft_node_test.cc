// RaftNode end to end: real LevelDB (fsync on), real TCP on 127.0.0.1, one io_context thread.
// Waits are bounded by generous timeouts (they only decide how long a failing test hangs).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "consensus/storage_codec.h"
#include "tests/consensus/raft_node_test_cluster.h"

namespace zkraft::consensus::testing {
namespace {

using namespace std::chrono_literals;

const Membership kThree{{1, 2, 3}, {}};

std::vector<std::string> numbered(const std::string& prefix, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

// Proposes every payload on the current leader (re-finding it if leadership moves) and waits
// until all live nodes applied them.
void propose_all(RaftNodeCluster& c, const std::vector<std::string>& payloads) {
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  for (const auto& p : payloads) {
    ProposeResult r = c.node(lead).propose(p);
    ASSERT_TRUE(r.ok()) << raft_error_name(r.error);
  }
  ASSERT_TRUE(c.wait_converged()) << "cluster did not converge";
}

// Commits `before` on three started nodes, stops a follower (its log keeps them) and commits
// `while_down` on the other two. Returns {leader, stopped follower}.
std::pair<NodeId, NodeId> write_while_a_follower_is_down(RaftNodeCluster& c, const std::vector<std::string>& before,
                                                        const std::vector<std::string>& while_down) {
  propose_all(c, before);
  const NodeId lead = c.wait_for_leader();
  const NodeId victim = lead == 3 ? 1 : 3;
  c.kill(victim);
  for (const auto& p : while_down) EXPECT_TRUE(c.node(lead).propose(p).ok());
  EXPECT_TRUE(c.wait_converged());
  return {lead, victim};
}

TEST(RaftNode, ThreeNodesElectReplicateAndApplyIdentically) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  EXPECT_TRUE(c.app(lead).leader_changes.back().self);

  auto payloads = numbered("v", 0, 200);
  propose_all(c, payloads);
  for (NodeId id : c.ids()) {
    EXPECT_EQ(c.app(id).data(), payloads) << "node " << id;
    EXPECT_EQ(c.node(id).applied_index(), c.node(lead).commit_index());
    EXPECT_EQ(c.node(id).leader(), lead);
    EXPECT_GT(c.node(id).fsync_count(), 0u);
  }
  // Indexes are the log's: contiguous from 1 (no-ops included).
  const auto& rec = c.app(lead).applied;
  for (size_t i = 0; i < rec.size(); ++i) EXPECT_EQ(rec[i].first, i + 1);
  // Group commit: fewer fsyncs than entries on the leader.
  EXPECT_LT(c.node(lead).storage_stats().fsyncs, c.node(lead).storage_stats().entries);
}

TEST(RaftNode, CallbacksNeverRunInsideApplicationCalls) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  Index last = 0;
  for (int i = 0; i < 50; ++i) {
    for (NodeId id : c.ids()) {
      c.app(id).in_node_call = true;
      if (id == lead) {
        ProposeResult r = c.node(id).propose("r" + std::to_string(i));
        ASSERT_TRUE(r.ok());
        last = r.index;
      }
      EXPECT_EQ(c.node(id).read_index(1000 + i), RaftError::kOk);
      c.app(id).in_node_call = false;
    }
    // Let some of them complete between rounds, so later calls meet Readies of every kind.
    c.run_until([&] { return c.node(lead).applied_index() >= last; });
  }
  ASSERT_TRUE(c.wait_converged());
  EXPECT_EQ(c.app(lead).data().size(), 50u);
}

TEST(RaftNode, SingleNodeClusterCommitsAndAnswersReadIndexOutsideTheCall) {
  // One voter: its own fsync commits, and a ReadIndex needs no other server, so the answer is
  // ready at once; it must still arrive from the io_context, not inside read_index().
  RaftNodeCluster c(fast_options());
  c.start({1}, Membership{{1}, {}});
  ASSERT_EQ(c.wait_for_leader(), 1u);
  for (int i = 0; i < 20; ++i) {
    c.app(1).in_node_call = true;
    EXPECT_EQ(c.node(1).read_index(7000 + i), RaftError::kOk);
    ProposeResult r = c.node(1).propose("solo" + std::to_string(i));
    c.app(1).in_node_call = false;
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(c.run_until([&] { return c.app(1).read_states.count(7000 + i) && c.node(1).applied_index() >= r.index; }));
  }
  EXPECT_EQ(c.app(1).data().size(), 20u);
}

TEST(RaftNode, ProposeOnFollowerIsRefusedWithLeaderHint) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  NodeId follower = lead == 1 ? 2 : 1;
  ProposeResult r = c.node(follower).propose("x");
  EXPECT_EQ(r.error, RaftError::kNotLeader);
  EXPECT_EQ(r.leader, lead);
}

TEST(RaftNode, FollowerForwardsThroughAppMessageAndLeaderProposes) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  c.app(lead).on_message = [&c, lead](NodeId, std::string payload) {
    EXPECT_TRUE(c.node(lead).propose(std::move(payload)).ok());
  };
  NodeId follower = lead == 3 ? 2 : 3;
  c.node(follower).send_app_message(lead, "forwarded-1");
  c.node(follower).send_app_message(lead, "forwarded-2");
  // A message to self is delivered too.
  c.node(lead).send_app_message(lead, "self-3");
  ASSERT_TRUE(c.run_until([&] { return c.app(follower).data().size() == 3 && c.converged(); }));
  // Forwarded messages keep their order; the message to self may come first or between them.
  auto applied = c.app(follower).data();
  std::vector<std::string> forwarded;
  for (const auto& d : applied) {
    if (d != "self-3") forwarded.push_back(d);
  }
  EXPECT_EQ(forwarded, (std::vector<std::string>{"forwarded-1", "forwarded-2"}));
  EXPECT_EQ(std::count(applied.begin(), applied.end(), "self-3"), 1);
  ASSERT_EQ(c.app(lead).app_messages.size(), 3u);
  for (const auto& [from, payload] : c.app(lead).app_messages) {
    EXPECT_EQ(from, payload == "self-3" ? lead : follower) << payload;
  }
}

TEST(RaftNode, ReadIndexCoversEveryCommittedWrite) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  Index last_write = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 10; ++i) {
      ProposeResult r = c.node(lead).propose("w" + std::to_string(round * 10 + i));
      ASSERT_TRUE(r.ok());
      last_write = r.index;
    }
    // Wait until the writes are committed (applied on the leader), then ask every node.
    ASSERT_TRUE(c.run_until([&] { return c.node(lead).applied_index() >= last_write; }));
    const uint64_t ctx_base = 100 * (round + 1);
    for (NodeId id : c.ids()) ASSERT_EQ(c.node(id).read_index(ctx_base + id), RaftError::kOk);
    ASSERT_TRUE(c.run_until([&] {
      for (NodeId id : c.ids()) {
        if (!c.app(id).read_states.count(ctx_base + id)) return false;
      }
      return true;
    }));
    for (NodeId id : c.ids()) {
      EXPECT_GE(c.app(id).read_states[ctx_base + id], last_write) << "node " << id << " round " << round;
    }
  }
}

TEST(RaftNode, StoppedNodeRestartsFromItsDirectoryAndCatchesUp) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  auto first = numbered("a", 0, 50);
  auto second = numbered("b", 0, 50);
  const auto [lead, victim] = write_while_a_follower_is_down(c, first, second);

  c.restart(victim);  // a fresh application: everything comes back from its log + the leader
  EXPECT_EQ(c.app(victim).snapshots_restored, 0);
  ASSERT_TRUE(c.wait_converged());
  std::vector<std::string> all = first;
  all.insert(all.end(), second.begin(), second.end());
  EXPECT_EQ(c.app(victim).data(), all);
  EXPECT_EQ(c.app(victim).applied, c.app(lead).applied);
}

// With a log memory budget of a few entries, the leader has evicted what the stopped follower
// misses: it reads them back from LevelDB (load_entries) instead of sending its snapshot.
TEST(RaftNode, AFollowerBehindTheEvictedEntriesCatchesUpFromTheLeadersStorage) {
  RaftNodeOptions o = fast_options();
  o.max_log_memory_bytes = 512;
  o.snapshot_every = 0;
  RaftNodeCluster c(o);
  c.start({1, 2, 3}, kThree);
  auto first = numbered("a", 0, 20);
  auto second = numbered("b", 0, 200);
  const auto [lead, victim] = write_while_a_follower_is_down(c, first, second);
  const RaftStatus before = c.node(lead).status();
  EXPECT_GT(before.evicted_index, 150u);
  EXPECT_LE(before.log_memory_bytes, 512u);

  c.restart(victim);
  ASSERT_TRUE(c.wait_converged());
  EXPECT_EQ(c.app(victim).snapshots_restored, 0);
  std::vector<std::string> all = first;
  all.insert(all.end(), second.begin(), second.end());
  EXPECT_EQ(c.app(victim).data(), all);
  EXPECT_EQ(c.app(victim).applied, c.app(lead).applied);
  EXPECT_LE(c.node(victim).status().log_memory_bytes, 512u);
}

TEST(RaftNode, WholeClusterRestartReappliesCommittedLog) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  auto payloads = numbered("p", 0, 30);
  propose_all(c, payloads);
  for (NodeId id : {1, 2, 3}) c.kill(id);
  for (NodeId id : {1, 2, 3}) c.open_node(id);
  for (NodeId id : {1, 2, 3}) c.start_node(id);
  ASSERT_NE(c.wait_for_leader(), 0u);
  ASSERT_TRUE(c.run_until([&] {
    for (NodeId id : {1, 2, 3}) {
      if (c.app(id).data().size() < payloads.size()) return false;
    }
    return c.converged();
  }));
  for (NodeId id : {1, 2, 3}) EXPECT_EQ(c.app(id).data(), payloads);
}

// The snapshots are the app's bytes, or files the app wrote itself (as the server's forked child
// does), which the leader must read back from its published file to send to the wiped node.
// With appends, every snapshot after the first is the entries since the stored one appended to
// its file: the wiped node is sent the whole file, and a restart restores it.
void snapshot_compaction_and_install(bool app_writes_files, bool app_appends = false) {
  RaftNodeOptions o = fast_options();
  o.snapshot_every = 40;
  o.keep_tail = 10;
  RaftNodeCluster c(o);
  c.apps_write_snapshot_files = app_writes_files;
  c.apps_append_snapshot_files = app_appends;
  c.start({1, 2, 3}, kThree);
  auto payloads = numbered("s", 0, 150);
  propose_all(c, payloads);
  NodeId lead = c.wait_for_leader();
  RaftStatus st = c.node(lead).status();
  EXPECT_GT(c.app(lead).snapshots_taken, 0);
  EXPECT_GT(st.snapshot_index, 0u);
  EXPECT_GT(st.first_index, 1u) << "log was not compacted";
  EXPECT_LE(st.first_index, st.snapshot_index - o.keep_tail + 1) << "compaction did not keep the tail";

  NodeId victim = lead == 2 ? 3 : 2;
  c.wipe(victim);
  auto more = numbered("t", 0, 60);  // moves the leader's compaction point further
  for (const auto& p : more) ASSERT_TRUE(c.node(lead).propose(p).ok());
  ASSERT_TRUE(c.wait_converged());
  ASSERT_GT(c.node(lead).status().first_index, 1u);

  c.restart(victim);  // empty directory: only a snapshot can bring it up to date
  ASSERT_TRUE(c.wait_converged(20s));
  EXPECT_GE(c.app(victim).snapshots_restored, 1);
  std::vector<std::string> all = payloads;
  all.insert(all.end(), more.begin(), more.end());
  EXPECT_EQ(c.app(victim).data(), all);
  EXPECT_EQ(c.app(victim).applied, c.app(lead).applied);

  // A node restarting on a directory with a snapshot restores it in open() and replays after it.
  NodeId other = 6 - lead - victim;
  const int other_appended = c.app(other).snapshots_appended;
  c.kill(other);
  c.open_node(other);
  EXPECT_EQ(c.app(other).snapshots_restored, 1);
  ASSERT_FALSE(c.app(other).restored_at.empty());
  EXPECT_GT(c.app(other).restored_at[0], 0u);
  c.start_node(other);
  ASSERT_TRUE(c.wait_converged());
  EXPECT_EQ(c.app(other).data(), all);
  if (app_writes_files) {
    EXPECT_GT(c.app(lead).snapshots_written_to_files, 0);
    EXPECT_EQ(c.app(lead).snapshots_written_to_files,
              c.app(lead).snapshots_taken + c.app(lead).snapshots_appended);
  } else {
    EXPECT_EQ(c.app(lead).snapshots_written_to_files, 0);
  }
  if (app_appends) {
    // Two rounds of proposals, two snapshots on each node: the first whole, the second appended.
    EXPECT_EQ(c.app(lead).snapshots_taken, 1);
    EXPECT_GE(c.app(lead).snapshots_appended, 1);
    EXPECT_GE(other_appended, 1);  // so its restart restored a file with an append
  } else {
    EXPECT_EQ(c.app(lead).snapshots_appended, 0);
  }
}

TEST(RaftNode, SnapshotCompactionAndWipedNodeCatchesUpByInstallSnapshot) { snapshot_compaction_and_install(false); }

TEST(RaftNode, SnapshotFilesWrittenByTheAppCompactAndInstallOnAWipedNode) { snapshot_compaction_and_install(true); }

TEST(RaftNode, SnapshotsAppendedToTheStoredFileCompactAndInstallOnAWipedNode) {
  snapshot_compaction_and_install(true, true);
}

TEST(RaftNode, LaggingNodeGetsSnapshotOverItsOldLogAndRestartsFromIt) {
  RaftNodeOptions o = fast_options();
  o.snapshot_every = 30;
  o.keep_tail = 5;
  RaftNodeCluster c(o);
  c.start({1, 2, 3}, kThree);
  auto first = numbered("o", 0, 20);
  auto second = numbered("q", 0, 100);
  const auto [lead, victim] = write_while_a_follower_is_down(c, first, second);  // it keeps the first 20
  ASSERT_GT(c.node(lead).status().first_index, c.app(lead).applied.size() / 2) << "leader did not compact";

  std::vector<std::string> all = first;
  all.insert(all.end(), second.begin(), second.end());
  c.restart(victim);
  ASSERT_TRUE(c.wait_converged(20s));
  EXPECT_GE(c.app(victim).snapshots_restored, 1) << "caught up without a snapshot?";
  EXPECT_EQ(c.app(victim).data(), all);

  // Its directory now holds the installed snapshot and the log after it.
  auto third = numbered("z", 0, 10);
  propose_all(c, third);
  all.insert(all.end(), third.begin(), third.end());
  c.kill(victim);
  c.open_node(victim);
  EXPECT_EQ(c.app(victim).snapshots_restored, 1);
  c.start_node(victim);
  ASSERT_TRUE(c.wait_converged());
  EXPECT_EQ(c.app(victim).data(), all);
  EXPECT_EQ(c.app(victim).applied, c.app(lead).applied);
}

// open() checks the snapshot file's checksum (on a thread of its own, while it reads the log
// after the snapshot): a file changed on disk stops the node from opening, before anything is
// applied from it.
TEST(RaftNode, ASnapshotFileThatFailsItsChecksumStopsTheOpen) {
  RaftNodeOptions o = fast_options();
  o.snapshot_every = 20;
  o.keep_tail = 5;
  RaftNodeCluster c(o);
  c.apps_write_snapshot_files = true;
  c.start({1}, Membership{{1}, {}});
  propose_all(c, numbered("c", 0, 50));
  ASSERT_TRUE(c.run_until([&] { return c.node(1).status().snapshot_index > 0; }));
  c.kill(1);
  c.open_node(1);  // the intact file opens, and the log after it is read
  EXPECT_EQ(c.app(1).snapshots_restored, 1);
  c.kill(1);

  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::recursive_directory_iterator(c.root())) {
    if (f.is_regular_file() && storage::parse_snapshot_file_name(f.path().filename().string())) {
      files.push_back(f.path());
    }
  }
  ASSERT_EQ(files.size(), 1u);
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    ASSERT_GT(f.tellg(), 10);
    const std::streamoff middle = static_cast<std::streamoff>(f.tellg()) / 2;
    f.seekg(middle);
    const char was = static_cast<char>(f.get());
    f.seekp(middle);
    f.put(static_cast<char>(~was));  // one byte changed, the size kept
  }
  const std::string error = c.try_open_node(1);
  EXPECT_NE(error.find("fails its checksum"), std::string::npos) << error;
}

TEST(RaftNode, LeaderTransportStopLeadsToNewLeaderQuickly) {
  // Production timing: 50 ms ticks, election timeout 1-2 s. The fast path (peer down -> pre-vote)
  // should find a new leader well under that.
  RaftNodeOptions o = fast_options();
  o.tick_ms = 50;
  o.election_ticks = 20;
  o.heartbeat_ticks = 2;
  RaftNodeCluster c(o);
  c.start({1, 2, 3}, kThree);
  NodeId old = c.wait_for_leader(15s);
  ASSERT_NE(old, 0u);
  propose_all(c, numbered("f", 0, 10));
  const Term old_term = c.node(old).term();

  const auto t0 = std::chrono::steady_clock::now();
  c.node(old).stop();
  NodeId fresh = 0;
  ASSERT_TRUE(c.run_until(
      [&] {
        for (NodeId id : c.ids()) {
          if (id != old && c.node(id).is_leader()) {
            fresh = id;
            return true;
          }
        }
        return false;
      },
      10s));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::printf("[ failover ] new leader %llu after %lld ms (election timeout 1000-2000 ms)\n",
              static_cast<unsigned long long>(fresh), static_cast<long long>(ms.count()));
  RecordProperty("failover_ms", static_cast<int>(ms.count()));
  EXPECT_GT(c.node(fresh).term(), old_term);
  EXPECT_LT(ms, 10s);
  ASSERT_FALSE(c.app(fresh).leader_changes.empty());
  EXPECT_TRUE(c.app(fresh).leader_changes.back().self);
  EXPECT_EQ(c.app(fresh).leader_changes.back().leader, fresh);
  EXPECT_EQ(c.app(fresh).leader_changes.back().term, c.node(fresh).term());

  // The two survivors still commit.
  ProposeResult r = c.node(fresh).propose("after-failover");
  ASSERT_TRUE(r.ok());
  NodeId other = 6 - old - fresh;
  ASSERT_TRUE(c.run_until([&] {
    return c.node(other).applied_index() >= r.index && c.node(fresh).applied_index() >= r.index;
  }));
  EXPECT_EQ(c.app(other).data().back(), "after-failover");
  EXPECT_EQ(c.app(other).leader_changes.back().leader, fresh);
  EXPECT_FALSE(c.app(other).leader_changes.back().self);
}

TEST(RaftNode, TransferLeadership) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  NodeId lead = c.wait_for_leader();
  ASSERT_NE(lead, 0u);
  propose_all(c, numbered("x", 0, 5));
  NodeId target = lead == 1 ? 2 : 1;
  ASSERT_EQ(c.node(lead).transfer_leadership(target), RaftError::kOk);
  ASSERT_TRUE(c.run_until([&] { return c.agreed_leader() == target; }));
  propose_all(c, numbered("y", 0, 5));
}

TEST(RaftNode, AddLearnerThenPromoteToVoter) {
  RaftNodeCluster c(fast_options());
  c.start({1, 2, 3}, kThree);
  auto before = numbered("m", 0, 30);
  propose_all(c, before);
  NodeId lead = c.wait_for_leader();

  // The new server starts with the cluster's bootstrap membership; it is not a voter.
  c.restart(4);
  ASSERT_TRUE(c.node(lead).change_membership({ConfChangeType::kAddLearner, 4}).ok());
  ASSERT_TRUE(c.wait_converged());
  EXPECT_EQ(c.app(4).data(), before);
  for (NodeId id : c.ids()) {
    ASSERT_FALSE(c.app(id).memberships.empty()) << "node " << id;
    EXPECT_EQ(c.app(id).memberships.back(), (Membership{{1, 2, 3}, {4}})) << "node " << id;
  }
  EXPECT_FALSE(c.node(4).is_leader());

  ProposeResult pr;
  ASSERT_TRUE(c.run_until([&] {
    pr = c.node(lead).change_membership({ConfChangeType::kPromoteLearner, 4});
    return pr.error != RaftError::kConfChangePending;
  }));
  ASSERT_TRUE(pr.ok()) << raft_error_name(pr.error);
  ASSERT_TRUE(c.wait_converged());
  for (NodeId id : c.ids()) EXPECT_EQ(c.node(id).applied_membership(), (Membership{{1, 2, 3, 4}, {}}));

  // With four voters the quorum is three: losing one old voter still commits, and node 4 counts.
  NodeId gone = lead == 1 ? 2 : 1;
  c.kill(gone);
  auto after = numbered("n", 0, 20);
  propose_all(c, after);
  std::vector<std::string> all = before;
  all.insert(all.end(), after.begin(), after.end());
  EXPECT_EQ(c.app(4).data(), all);

  // Removing the dead voter brings the cluster back to three voters.
  lead = c.wait_for_leader();
  ASSERT_TRUE(c.run_until([&] {
    pr = c.node(lead).change_membership({ConfChangeType::kRemoveNode, gone});
    return pr.error != RaftError::kConfChangePending;
  }));
  ASSERT_TRUE(pr.ok()) << raft_error_name(pr.error);
  ASSERT_TRUE(c.wait_converged());
  Membership three = {{1, 2, 3, 4}, {}};
  three.voters.erase(std::find(three.voters.begin(), three.voters.end(), gone));
  for (NodeId id : c.ids()) {
    EXPECT_EQ(c.node(id).applied_membership(), three) << "node " << id;
    EXPECT_EQ(c.app(id).memberships.back(), three) << "node " << id;
  }
}

}  // namespace
}  // namespace zkraft::consensus::testing
