// Unit tests of RaftCore driven synchronously through TestNet (see raft_core_test_util.h).

#include <gtest/gtest.h>

#include "consensus/raft_core.h"
#include "tests/consensus/raft_core_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::TestNet;

std::vector<Entry> entries_with_terms(std::vector<Term> terms) {
  std::vector<Entry> out;
  for (size_t i = 0; i < terms.size(); ++i) out.push_back(Entry{terms[i], i + 1, EntryType::kNormal, "e"});
  return out;
}

TEST(RaftCore, SingleNodeElectsItselfAndCommitsOnlyAfterPersisting) {
  TestNet net;
  net.add(1, {1});
  auto& c = net.at(1);
  for (int i = 0; i < 20 && c.role() != Role::kLeader; ++i) c.tick();
  ASSERT_EQ(c.role(), Role::kLeader);
  EXPECT_EQ(c.term(), 1u);
  ASSERT_TRUE(c.propose("a").ok());
  // Nothing is committed before the leader's own write is durable.
  Ready rd = c.ready();
  EXPECT_EQ(rd.entries.size(), 2u);  // no-op + "a"
  EXPECT_TRUE(rd.committed_entries.empty());
  ASSERT_TRUE(rd.hard_state.has_value());
  EXPECT_EQ(rd.hard_state->vote, 1u);
  c.advance(rd);
  ASSERT_TRUE(c.has_ready());
  Ready rd2 = c.ready();
  ASSERT_EQ(rd2.committed_entries.size(), 2u);
  EXPECT_EQ(rd2.committed_entries[1].data, "a");
  c.advance(rd2);
  EXPECT_EQ(c.applied_index(), 2u);
}

TEST(RaftCore, ElectionTimeoutIsRandomizedBetweenTand2T) {
  for (uint64_t jitter : {0u, 3u, 9u, 13u}) {
    TestNet net;
    net.add(1, {1}, {}, jitter);
    int ticks = 0;
    while (net.at(1).role() != Role::kLeader) {
      net.at(1).tick();
      ++ticks;
      ASSERT_LT(ticks, 100);
    }
    EXPECT_EQ(ticks, 10 + static_cast<int>(jitter % 10)) << jitter;
  }
}

// A standalone server's start: the only voter need not wait out an election timeout.
TEST(RaftCore, OnlyTheSoleVoterCampaignsWithoutATimeout) {
  for (bool pre_vote : {true, false}) {
    TestNet net;
    net.add(1, {1}, {}, 0, pre_vote);
    net.at(1).campaign_if_sole_voter();
    ASSERT_EQ(net.at(1).role(), Role::kLeader) << pre_vote;
    EXPECT_EQ(net.at(1).term(), 1u);
    net.at(1).campaign_if_sole_voter();  // a leader stays where it is
    EXPECT_EQ(net.at(1).term(), 1u);
    net.stabilize();
    ASSERT_EQ(net.applied[1].size(), 1u);  // its no-op, committed without a tick
  }
  TestNet three;
  for (NodeId id : {1, 2, 3}) three.add(id, {1, 2, 3});
  three.at(1).campaign_if_sole_voter();
  EXPECT_EQ(three.at(1).role(), Role::kFollower);
  EXPECT_EQ(three.at(1).term(), 0u);
  three.stabilize();
  EXPECT_EQ(three.delivered[MessageType::kPreVote], 0);  // no vote was asked for
  TestNet learner;  // server 2 learns from voter 1: the only voter is not itself
  RaftConfig cfg = testing::make_config(2, {1});
  cfg.initial_membership.learners = {2};
  learner.cores[2] = std::make_unique<RaftCore>(cfg, RecoveredState{}, testing::fixed_random(0));
  learner.at(2).campaign_if_sole_voter();
  EXPECT_EQ(learner.at(2).role(), Role::kFollower);
  EXPECT_EQ(learner.at(2).term(), 0u);
}

TEST(RaftCore, ThreeNodesElectWithPreVoteAndReplicate) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  ASSERT_EQ(net.at(1).role(), Role::kLeader);
  EXPECT_EQ(net.at(1).term(), 1u);  // pre-vote did not bump the term
  EXPECT_GT(net.delivered[MessageType::kPreVote], 0);
  ASSERT_TRUE(net.at(1).propose("x").ok());
  net.stabilize();
  for (NodeId id : {1, 2, 3}) {
    ASSERT_EQ(net.applied[id].size(), 2u) << id;
    EXPECT_EQ(net.applied[id][1].data, "x");
  }
  auto pr = net.at(2).propose("y");
  EXPECT_EQ(pr.error, RaftError::kNotLeader);
  EXPECT_EQ(pr.leader, 1u);
}

TEST(RaftCore, FollowerAcknowledgesOnlyAfterPersistLeaderSendsAppendsAtOnce) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  ASSERT_TRUE(net.at(1).propose("x").ok());
  Ready lr = net.at(1).ready();
  ASSERT_FALSE(lr.messages_now.empty());
  for (auto& m : lr.messages_now) EXPECT_EQ(m.type, MessageType::kAppend);
  EXPECT_TRUE(lr.messages_after_persist.empty());
  net.at(2).step(lr.messages_now[0].to == 2 ? lr.messages_now[0] : lr.messages_now[1]);
  Ready fr = net.at(2).ready();
  EXPECT_TRUE(fr.messages_now.empty());
  ASSERT_EQ(fr.messages_after_persist.size(), 1u);
  EXPECT_EQ(fr.messages_after_persist[0].type, MessageType::kAppendResponse);
  EXPECT_EQ(fr.entries.size(), 1u);
}

TEST(RaftCore, VoteRequiresUpToDateLog) {
  RecoveredState longer;
  longer.hard_state.term = 2;
  longer.entries = entries_with_terms({1, 2});
  RecoveredState shorter;
  shorter.hard_state.term = 2;
  shorter.entries = entries_with_terms({1});
  TestNet net;
  net.add(1, {1, 2, 3}, shorter, 0, /*pre_vote=*/false, /*check_quorum=*/false);
  net.add(2, {1, 2, 3}, longer, 9, false, false);
  net.add(3, {1, 2, 3}, longer, 9, false, false);
  for (int i = 0; i < 10; ++i) {
    net.at(1).tick();
    net.stabilize();
  }
  // Node 1 campaigned but nobody with a longer log granted its vote.
  EXPECT_NE(net.at(1).role(), Role::kLeader);
  EXPECT_GT(net.at(1).term(), 2u);
  EXPECT_GT(net.delivered[MessageType::kVoteResponse], 0);
}

// A refused vote request adopts the candidate's term but must not restart the voter's election
// timer. Node 1 (log behind) times out every 10 ticks, node 2 (log ahead) every 15: if each
// refused request restarted node 2's timer, node 2 would never campaign and no leader would ever
// be elected (the liveness failure of sim seeds 316449 and 11 others, all without PreVote).
TEST(RaftCore, RefusedVoteDoesNotRestartTheVotersElectionTimer) {
  RecoveredState longer;
  longer.hard_state.term = 2;
  longer.entries = entries_with_terms({1, 2});
  RecoveredState shorter;
  shorter.hard_state.term = 2;
  shorter.entries = entries_with_terms({1});
  TestNet net;
  net.add(1, {1, 2}, shorter, 0, /*pre_vote=*/false, /*check_quorum=*/false);
  net.add(2, {1, 2}, longer, 5, false, false);
  int ticks = 0;
  while (net.at(2).role() != Role::kLeader && ticks < 60) {
    net.tick_all();
    net.stabilize();
    ++ticks;
  }
  EXPECT_EQ(net.at(2).role(), Role::kLeader);
  EXPECT_LE(ticks, 16);  // node 2's own timeout (15 ticks), however often node 1 asked
  EXPECT_GT(net.delivered[MessageType::kVoteResponse], 0);
}

TEST(RaftCore, LeaseMakesFollowersIgnoreVotesWhileLeaderIsHeard) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  ASSERT_EQ(net.at(1).role(), Role::kLeader);
  // Node 3 is cut off from the leader only; it must not win a pre-vote from node 2.
  net.cut.insert({1, 3});
  net.cut.insert({3, 1});
  for (int i = 0; i < 60; ++i) {
    net.tick_all();
    net.stabilize();
  }
  EXPECT_EQ(net.at(1).role(), Role::kLeader);
  EXPECT_EQ(net.at(1).term(), 1u);
  EXPECT_EQ(net.at(2).term(), 1u);
  EXPECT_EQ(net.at(3).term(), 1u);  // pre-vote never succeeded, so its term never rose
  EXPECT_NE(net.at(3).role(), Role::kLeader);
}

TEST(RaftCore, BrokenLeaderConnectionStartsPreVoteAtOnce) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  // Leader dies: node 2 notices the broken connection and fails over without waiting.
  net.isolate(1);
  net.at(2).broken_leader_connection();
  net.stabilize();
  // Node 3 still has a fresh lease on node 1 and refuses.
  EXPECT_NE(net.at(2).role(), Role::kLeader);
  // Once node 3's lease ran out (an election timeout without the leader), it agrees.
  EXPECT_EQ(net.at(2).role(), Role::kPreCandidate);
  EXPECT_EQ(net.at(2).term(), 1u);
  // Once node 3's lease ran out (an election timeout without the leader), node 2's next
  // attempt succeeds.
  for (int i = 0; i < 10; ++i) net.at(3).tick();
  for (int i = 0; i < 20 && net.at(2).role() != Role::kLeader; ++i) {
    net.at(2).tick();
    net.stabilize();
  }
  EXPECT_EQ(net.at(2).role(), Role::kLeader);
  EXPECT_EQ(net.at(2).term(), 2u);
}

TEST(RaftCore, FastBacktrackingSkipsWholeTerms) {
  // Follower 2 has a long divergent tail of term 2; leader 1 has term 3 entries there.
  std::vector<Term> leader_terms = {1, 1, 1};
  std::vector<Term> follower_terms = {1, 1, 1};
  for (int i = 0; i < 50; ++i) leader_terms.push_back(3);
  for (int i = 0; i < 60; ++i) follower_terms.push_back(2);
  RecoveredState l, f, f3;
  l.hard_state.term = 3;
  l.entries = entries_with_terms(leader_terms);
  f.hard_state.term = 3;
  f.entries = entries_with_terms(follower_terms);
  f3 = l;
  TestNet net;
  net.add(1, {1, 2, 3}, l, 0);
  net.add(2, {1, 2, 3}, f, 9);
  net.add(3, {1, 2, 3}, f3, 9);
  net.elect(1);
  ASSERT_EQ(net.at(1).role(), Role::kLeader);
  ASSERT_TRUE(net.at(1).propose("z").ok());
  net.stabilize();
  EXPECT_EQ(net.at(2).log().last_index(), net.at(1).log().last_index());
  EXPECT_EQ(net.at(2).log().term(4).value(), 3u);
  // One rejection is enough to jump over the 60 divergent entries.
  EXPECT_LE(net.delivered[MessageType::kAppendResponse], 12);
}

TEST(RaftCore, ReadyReplacesConflictingSuffix) {
  RecoveredState l, f;
  l.hard_state.term = 3;
  l.entries = entries_with_terms({1, 3});
  f.hard_state.term = 2;
  f.entries = entries_with_terms({1, 2, 2, 2});
  TestNet net;
  net.add(1, {1, 2, 3}, l, 0);
  net.add(2, {1, 2, 3}, f, 9);
  net.add(3, {1, 2, 3}, l, 9);
  net.elect(1);
  ASSERT_EQ(net.at(1).role(), Role::kLeader);
  net.stabilize();
  // Node 2 had 4 stored entries; the batch that fixes its log starts at index 2 (<= 4), which
  // tells the caller to drop stored entries 2..4 first.
  bool replaced = false;
  for (auto& batch : net.appended[2]) {
    if (batch.front().index == 2 && batch.front().term == 3) replaced = true;
  }
  EXPECT_TRUE(replaced);
  EXPECT_EQ(net.at(2).log().last_index(), 3u);  // 1:t1 2:t3 3:t4(no-op)
  EXPECT_EQ(net.at(2).log().term(2), std::optional<Term>(3));
  EXPECT_EQ(net.at(2).commit_index(), 3u);
}

TEST(RaftCore, LeaderStepsDownWithoutQuorum) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  net.isolate(1);
  for (int i = 0; i < 25; ++i) {
    net.at(1).tick();
    net.stabilize();
  }
  EXPECT_EQ(net.at(1).role(), Role::kFollower);
  EXPECT_EQ(net.at(1).read_index(5), RaftError::kNotLeader);
}

TEST(RaftCore, ReadIndexConfirmsLeadershipWithQuorum) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  ASSERT_TRUE(net.at(1).propose("x").ok());
  net.stabilize();
  ASSERT_EQ(net.at(1).read_index(77), RaftError::kOk);
  net.stabilize();
  ASSERT_EQ(net.read_states[1].size(), 1u);
  EXPECT_EQ(net.read_states[1][0].context, 77u);
  EXPECT_EQ(net.read_states[1][0].index, net.at(1).commit_index());
  // A follower's request is forwarded to the leader and answered.
  ASSERT_EQ(net.at(3).read_index(78), RaftError::kOk);
  net.stabilize();
  ASSERT_EQ(net.read_states[3].size(), 1u);
  EXPECT_EQ(net.read_states[3][0].index, net.at(1).commit_index());
  // Cut off from both followers, the leader answers nothing.
  net.isolate(1);
  ASSERT_EQ(net.at(1).read_index(79), RaftError::kOk);
  net.stabilize();
  EXPECT_EQ(net.read_states[1].size(), 1u);
}

TEST(RaftCore, LearnerReceivesEntriesButDoesNotCountOrVote) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.add(4, {1, 2, 3}, {}, 9);
  net.elect(1);
  ASSERT_TRUE(net.at(1).propose_conf_change({ConfChangeType::kAddLearner, 4}).ok());
  net.stabilize();
  ASSERT_TRUE(net.at(1).propose("x").ok());
  net.stabilize();
  EXPECT_EQ(net.at(4).commit_index(), net.at(1).commit_index());
  EXPECT_TRUE(is_learner(net.at(4).membership(), 4));
  // The learner never campaigns.
  for (int i = 0; i < 50; ++i) net.at(4).tick();
  EXPECT_EQ(net.at(4).role(), Role::kFollower);
  EXPECT_EQ(net.at(1).propose_conf_change({ConfChangeType::kPromoteLearner, 4}).error, RaftError::kOk);
  // Only one change at a time.
  EXPECT_EQ(net.at(1).propose_conf_change({ConfChangeType::kRemoveNode, 2}).error,
            RaftError::kConfChangePending);
  net.stabilize();
  EXPECT_TRUE(is_voter(net.at(4).membership(), 4));
  EXPECT_EQ(net.at(1).status().membership.voters.size(), 4u);
}

TEST(RaftCore, ConfChangeRefusedUntilLeaderCommittedInItsTerm) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  // Deliver one message at a time and stop the moment node 1 becomes leader.
  for (int i = 0; i < 1000 && net.at(1).role() != Role::kLeader; ++i) {
    net.process_readies();
    if (!net.deliver_one()) net.at(1).tick();
  }
  ASSERT_EQ(net.at(1).role(), Role::kLeader);
  EXPECT_LT(net.at(1).commit_index(), net.at(1).log().last_index());
  EXPECT_EQ(net.at(1).propose_conf_change({ConfChangeType::kAddLearner, 4}).error,
            RaftError::kConfChangePending);
  net.stabilize();
  EXPECT_EQ(net.at(1).propose_conf_change({ConfChangeType::kAddVoter, 2}).error,
            RaftError::kInvalidConfChange);
  EXPECT_TRUE(net.at(1).propose_conf_change({ConfChangeType::kAddLearner, 4}).ok());
}

TEST(RaftCore, LeadershipTransferHandsOverAndBlocksProposals) {
  TestNet net;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  ASSERT_EQ(net.at(1).transfer_leadership(3), RaftError::kOk);
  net.stabilize();
  EXPECT_EQ(net.at(3).role(), Role::kLeader);
  EXPECT_EQ(net.at(1).role(), Role::kFollower);
  EXPECT_EQ(net.at(1).leader(), 3u);
  EXPECT_EQ(net.at(3).term(), 2u);
  EXPECT_EQ(net.at(3).transfer_leadership(3), RaftError::kInvalidArgument);
}

TEST(RaftCore, SnapshotSentInChunksToFollowerBehindCompaction) {
  TestNet net;
  net.snapshot_chunk = 1000;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  net.isolate(3);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(net.at(1).propose("p" + std::to_string(i)).ok());
  net.stabilize();
  const Index applied = net.at(1).applied_index();
  ASSERT_EQ(applied, 21u);
  std::string snap(5000, 's');
  EXPECT_EQ(net.at(1).snapshot_taken(applied + 1, snap).index, 0u);  // not applied yet: refused
  SnapshotMeta meta = net.at(1).snapshot_taken(applied, snap);
  EXPECT_EQ(meta.index, applied);
  EXPECT_EQ(meta.membership.voters.size(), 3u);
  EXPECT_EQ(net.at(1).snapshot_taken(applied - 1, snap).index, applied);  // not newer: refused
  net.at(1).compact(applied);
  EXPECT_EQ(net.at(1).log().first_index(), applied + 1);
  net.heal();
  for (int i = 0; i < 5; ++i) {
    net.tick_all();
    net.stabilize();
  }
  EXPECT_GE(net.delivered[MessageType::kSnapshot], 5);  // 5000 bytes in 1000-byte chunks
  ASSERT_TRUE(net.last_ready.count(3));
  EXPECT_EQ(net.at(3).commit_index(), applied);
  EXPECT_EQ(net.at(3).status().snapshot_index, applied);
  EXPECT_EQ(net.at(3).log().first_index(), applied + 1);
  // The bytes reached the follower's storage as chunks, in order from offset 0, each at most a
  // chunk's size, and were never gathered in its core: it asks for them back to send them on.
  std::string stored;
  for (const SnapshotChunk& c : net.received_chunks[3]) {
    EXPECT_EQ(c.meta, meta);
    EXPECT_EQ(c.offset, stored.size());
    EXPECT_LE(c.bytes.size(), 1000u);
    stored += c.bytes;
    EXPECT_EQ(c.last, stored.size() == snap.size());
  }
  EXPECT_EQ(stored, snap);
  ASSERT_EQ(net.installed[3].size(), 1u);
  EXPECT_EQ(net.installed[3][0].first, meta);
  EXPECT_EQ(net.installed[3][0].second, snap.size());
  EXPECT_TRUE(net.at(3).drop_snapshot_bytes());  // none held
  // The follower then continues with ordinary appends.
  ASSERT_TRUE(net.at(1).propose("after").ok());
  net.stabilize();
  EXPECT_EQ(net.at(3).commit_index(), applied + 1);
  ASSERT_FALSE(net.applied[3].empty());
  EXPECT_EQ(net.applied[3].back().data, "after");
}

// The leader streams a window of chunks ahead of the follower's answers (each answer waits for
// the follower's disk), and when the follower confirms nothing more between two heartbeat
// answers it sends again from what was confirmed.
TEST(RaftCore, SnapshotChunksGoAWindowAheadAndAreSentAgainWhenTheFollowerStalls) {
  TestNet net;
  net.snapshot_chunk = 1000;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  net.isolate(3);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(net.at(1).propose("p" + std::to_string(i)).ok());
  net.stabilize();
  const Index applied = net.at(1).applied_index();
  const std::string snap(10'000, 's');  // 10 chunks
  ASSERT_EQ(net.at(1).snapshot_taken(applied, snap).index, applied);
  net.at(1).compact(applied);
  net.heal();
  auto queued_chunks = [&] {
    std::vector<uint64_t> offsets;
    for (const Message& m : net.queue) {
      if (m.type == MessageType::kSnapshot && m.to == 3) offsets.push_back(m.snapshot_offset);
    }
    return offsets;
  };
  // Heartbeats until the leader learns that 3 needs the snapshot.
  for (int i = 0; i < 10 && queued_chunks().empty(); ++i) {
    net.tick_all();
    net.process_readies();
    while (queued_chunks().empty() && net.deliver_one()) net.process_readies();
  }
  EXPECT_EQ(queued_chunks(), (std::vector<uint64_t>{0, 1000, 2000, 3000}));  // RaftConfig's default 4
  // All of them lost: nothing more goes out until a heartbeat answer shows no progress.
  net.queue.clear();
  int heartbeats = 0;
  for (; heartbeats < 10 && queued_chunks().empty(); ++heartbeats) {
    net.tick_all();
    net.process_readies();
    while (queued_chunks().empty() && net.deliver_one()) net.process_readies();
  }
  EXPECT_GE(heartbeats, 1);
  EXPECT_EQ(queued_chunks(), (std::vector<uint64_t>{0, 1000, 2000, 3000}));
  // Delivered, the window moves on and the follower gets the whole snapshot once.
  net.stabilize();
  std::string stored;
  for (const SnapshotChunk& c : net.received_chunks[3]) stored += c.bytes;
  EXPECT_EQ(stored, snap);
  ASSERT_EQ(net.installed[3].size(), 1u);
  EXPECT_EQ(net.at(3).status().snapshot_index, applied);
}

// A follower that received a whole snapshot but has not handed it to storage yet (its Ready is
// still to come) takes no chunk of another: the storage must store the first before a second
// transfer's offset 0 replaces its file.
TEST(RaftCore, NoChunkOfAnotherSnapshotIsTakenUntilAReceivedOneIsHandedToStorage) {
  RaftCore f(testing::make_config(2, {1, 2, 3}), {}, testing::fixed_random(0));
  auto chunk = [](Index index, Term term, std::string bytes, bool done) {
    Message m;
    m.type = MessageType::kSnapshot;
    m.from = 1;
    m.to = 2;
    m.term = 1;
    m.snapshot = SnapshotMeta{index, term, Membership{{1, 2, 3}, {}}};
    m.index = index;
    m.snapshot_chunk = std::move(bytes);
    m.snapshot_done = done;
    return m;
  };
  f.step(chunk(10, 1, "ten", true));
  f.step(chunk(20, 1, "twe", false));  // a newer one, while "ten" is only in the core
  ASSERT_TRUE(f.has_ready());
  Ready rd = f.ready();
  ASSERT_EQ(rd.snapshot_chunks.size(), 1u);
  EXPECT_EQ(rd.snapshot_chunks[0].bytes, "ten");
  ASSERT_TRUE(rd.snapshot.has_value());
  EXPECT_EQ(rd.snapshot->index, 10u);
  EXPECT_EQ(rd.snapshot_size, 3u);
  size_t snapshot_responses = 0;
  for (const Message& m : rd.messages_after_persist) snapshot_responses += m.type == MessageType::kSnapshotResponse;
  EXPECT_EQ(snapshot_responses, 0u);  // the newer one's chunk was not answered: it comes again
  f.advance(rd);
  // Once handed over, the newer one's transfer starts.
  f.step(chunk(20, 1, "twe", false));
  rd = f.ready();
  ASSERT_EQ(rd.snapshot_chunks.size(), 1u);
  EXPECT_EQ(rd.snapshot_chunks[0].meta.index, 20u);
  EXPECT_EQ(rd.snapshot_chunks[0].offset, 0u);
  EXPECT_FALSE(rd.snapshot.has_value());
}

// A follower whose log already holds the snapshot's last entry needs none of its bytes.
TEST(RaftCore, AFollowerWhoseLogHoldsTheSnapshotsLastEntryTakesOnlyItsCommitIndex) {
  RecoveredState rec;
  rec.hard_state = HardState{1, 1, 0};
  for (Index i = 1; i <= 12; ++i) rec.entries.push_back(Entry{1, i, EntryType::kNormal, "e"});
  RaftCore f(testing::make_config(2, {1, 2, 3}), std::move(rec), testing::fixed_random(0));
  Message m;
  m.type = MessageType::kSnapshot;
  m.from = 1;
  m.to = 2;
  m.term = 1;
  m.snapshot = SnapshotMeta{10, 1, Membership{{1, 2, 3}, {}}};
  m.index = 10;
  m.snapshot_chunk = "first chunk";
  m.snapshot_done = false;
  f.step(m);
  EXPECT_EQ(f.commit_index(), 10u);
  Ready rd = f.ready();
  EXPECT_TRUE(rd.snapshot_chunks.empty());
  EXPECT_FALSE(rd.snapshot.has_value());
  ASSERT_EQ(rd.messages_after_persist.size(), 1u);
  EXPECT_EQ(rd.messages_after_persist[0].type, MessageType::kAppendResponse);
  EXPECT_EQ(rd.messages_after_persist[0].index, 12u);  // its whole log, kept
}

TEST(RaftCore, DroppedSnapshotBytesAreAskedForBackAndResumeTheTransfer) {
  TestNet net;
  net.snapshot_chunk = 1000;
  for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 9);
  net.elect(1);
  net.isolate(3);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(net.at(1).propose("p" + std::to_string(i)).ok());
  net.stabilize();
  const Index applied = net.at(1).applied_index();
  const std::string snap(5000, 's');
  const SnapshotMeta meta = net.at(1).snapshot_taken(applied, snap);
  ASSERT_EQ(meta.index, applied);
  net.at(1).compact(applied);
  // On disk only: no follower needs it yet, so the bytes may go.
  EXPECT_TRUE(net.at(1).drop_snapshot_bytes());
  EXPECT_FALSE(net.at(1).wants_snapshot_bytes());
  net.heal();
  for (int i = 0; i < 3; ++i) {
    net.tick_all();
    net.stabilize();
  }
  // Follower 3 needs the snapshot; the leader has no bytes to send and asks for them.
  EXPECT_EQ(net.delivered[MessageType::kSnapshot], 0);
  EXPECT_TRUE(net.at(1).wants_snapshot_bytes());
  // Bytes of another snapshot, or of the wrong size, are not taken.
  SnapshotMeta other = meta;
  other.index = applied - 1;
  net.at(1).snapshot_bytes_loaded(other, snapshot_in_memory(snap));
  net.at(1).snapshot_bytes_loaded(meta, snapshot_in_memory(snap + "x"));
  EXPECT_TRUE(net.at(1).wants_snapshot_bytes());
  // The right ones resume the transfer at once.
  net.at(1).snapshot_bytes_loaded(meta, snapshot_in_memory(snap));
  EXPECT_FALSE(net.at(1).wants_snapshot_bytes());
  // While follower 3 is being sent the snapshot the bytes stay.
  EXPECT_FALSE(net.at(1).drop_snapshot_bytes());
  for (int i = 0; i < 5; ++i) {
    net.tick_all();
    net.stabilize();
  }
  EXPECT_GE(net.delivered[MessageType::kSnapshot], 5);
  EXPECT_EQ(net.at(3).status().snapshot_index, applied);
  EXPECT_EQ(net.at(3).commit_index(), applied);
  // The transfer is over: they may go again.
  EXPECT_TRUE(net.at(1).drop_snapshot_bytes());
}

}  // namespace
}  // namespace zkraft::consensus
