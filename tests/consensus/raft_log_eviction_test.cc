// The log's eviction of applied, durable entries from memory (RaftLog::evict_to_fit) and the
// leader's reading them back for a follower that needs them (RaftCore::take_entry_loads).

#include <gtest/gtest.h>

#include "consensus/conf_change.h"
#include "consensus/messages.h"
#include "consensus/raft_log.h"
#include "tests/consensus/raft_core_test_util.h"

namespace zkraft::consensus {
namespace {

std::vector<Entry> make(Index first, std::vector<Term> terms, std::string data = "dddddddd") {
  std::vector<Entry> out;
  for (size_t i = 0; i < terms.size(); ++i) out.push_back(Entry{terms[i], first + i, EntryType::kNormal, data});
  return out;
}

// Every question RaftLog answers without reading an entry's bytes, asked of both logs.
void expect_same_answers(const RaftLog& evicted, const RaftLog& whole) {
  ASSERT_EQ(evicted.first_index(), whole.first_index());
  ASSERT_EQ(evicted.last_index(), whole.last_index());
  EXPECT_EQ(evicted.last_term(), whole.last_term());
  EXPECT_EQ(evicted.stable_index(), whole.stable_index());
  for (Index i = 0; i <= whole.last_index() + 1; ++i) {
    EXPECT_EQ(evicted.term(i), whole.term(i)) << "term of " << i;
    for (Term t = 0; t <= whole.last_term() + 1; ++t) {
      EXPECT_EQ(evicted.find_conflict_by_term(i, t), whole.find_conflict_by_term(i, t)) << i << " " << t;
    }
  }
}

TEST(RaftLogEviction, EvictsOnlyDownToTheBudgetAndKeepsEveryTerm) {
  const std::vector<Term> terms{1, 1, 2, 2, 2, 3, 5, 5, 5, 5, 6, 6};
  RaftLog log(4, 1, make(5, terms));
  const RaftLog whole(4, 1, make(5, terms));
  const size_t each = entry_size(make(1, {1})[0]);
  EXPECT_EQ(log.memory_bytes(), terms.size() * each);
  EXPECT_EQ(log.evicted(), 4u);

  // Down to 5 entries' bytes, no further than index 12 (the floor).
  EXPECT_EQ(log.evict_to_fit(12, 5 * each), 7u);
  EXPECT_EQ(log.evicted(), 11u);
  EXPECT_EQ(log.memory_bytes(), 5 * each);
  EXPECT_EQ(log.at(12).index, 12u);
  expect_same_answers(log, whole);

  // The floor holds even when the budget is smaller.
  EXPECT_EQ(log.evict_to_fit(12, 0), 1u);
  EXPECT_EQ(log.evicted(), 12u);
  EXPECT_EQ(log.evict_to_fit(12, 0), 0u);
  expect_same_answers(log, whole);
  EXPECT_EQ(log.slice(13, 16, 1 << 20).size(), 4u);
}

TEST(RaftLogEviction, OnlyDurableEntriesLeaveMemory) {
  RaftLog log(0, 0, make(1, {1, 1, 1}));
  log.append(Entry{1, 4, EntryType::kNormal, "x"});
  log.append(Entry{2, 5, EntryType::kNormal, "x"});
  EXPECT_EQ(log.stable_index(), 3u);
  log.evict_to_fit(5, 0);
  EXPECT_EQ(log.evicted(), 3u);  // 4 and 5 are not stable yet
  ASSERT_EQ(log.unstable_entries().size(), 2u);
  EXPECT_EQ(log.unstable_entries()[0].index, 4u);
  log.stable_to(5, 2);
  log.evict_to_fit(5, 0);
  EXPECT_EQ(log.evicted(), 5u);
  EXPECT_EQ(log.memory_bytes(), 0u);
  EXPECT_EQ(log.last_index(), 5u);
  EXPECT_EQ(log.last_term(), 2u);
  // Appending goes on after evicted entries.
  log.append(Entry{2, 6, EntryType::kNormal, "y"});
  EXPECT_EQ(log.at(6).data, "y");
  EXPECT_EQ(log.term(5), std::optional<Term>(2));
}

TEST(RaftLogEviction, CompactionInsideTheEvictedEntriesKeepsTheRestOfTheirTerms) {
  const std::vector<Term> terms{1, 1, 2, 2, 2, 3, 5, 5, 5, 5, 6, 6};
  for (Index through = 1; through <= terms.size(); ++through) {
    for (Index evict = 0; evict <= terms.size(); ++evict) {
      RaftLog log(0, 0, make(1, terms));
      RaftLog whole(0, 0, make(1, terms));
      log.evict_to_fit(evict, 0);
      log.compact(through);
      whole.compact(through);
      SCOPED_TRACE("evicted through " + std::to_string(evict) + ", compacted through " + std::to_string(through));
      EXPECT_EQ(log.offset(), through);
      EXPECT_EQ(log.offset_term(), whole.offset_term());
      EXPECT_EQ(log.evicted(), std::max(through, evict));
      expect_same_answers(log, whole);
      // And eviction goes on after the compaction.
      log.evict_to_fit(terms.size(), 0);
      expect_same_answers(log, whole);
    }
  }
}

TEST(RaftLogEviction, RestoreForgetsEvictedEntries) {
  RaftLog log(0, 0, make(1, {1, 2, 3}));
  log.evict_to_fit(2, 0);
  log.restore(10, 4);
  EXPECT_EQ(log.evicted(), 10u);
  EXPECT_EQ(log.term(10), std::optional<Term>(4));
  EXPECT_EQ(log.term(2), std::nullopt);
  log.append(Entry{4, 11, EntryType::kNormal, "z"});
  EXPECT_EQ(log.memory_bytes(), entry_size(log.at(11)));
}

TEST(RaftLogEviction, TruncationBelowTheEvictedEntriesIsRefused) {
  RaftLog log(0, 0, make(1, {1, 1, 1}));
  log.evict_to_fit(2, 0);
  log.truncate_from(3);  // in memory: fine
  EXPECT_EQ(log.last_index(), 2u);
  EXPECT_EQ(log.memory_bytes(), 0u);
  EXPECT_DEATH(log.truncate_from(2), "cannot be truncated");
  EXPECT_DEATH((void)log.at(2), "only entries held in memory");
}

TEST(RaftLogEviction, MembershipChangesOfEvictedEntriesStayKnown) {
  std::vector<Entry> es = make(1, {1, 1, 1, 1});
  es[1].type = EntryType::kConfChange;
  es[1].data = encode_conf_change(ConfChange{ConfChangeType::kAddVoter, 4});
  RaftLog log(0, 0, es);
  log.evict_to_fit(3, 0);
  ASSERT_EQ(log.evicted_conf_changes().size(), 1u);
  EXPECT_EQ(log.evicted_conf_changes()[0].index, 2u);
  log.compact(1);
  EXPECT_EQ(log.evicted_conf_changes().size(), 1u);
  log.compact(2);
  EXPECT_TRUE(log.evicted_conf_changes().empty());
}

TEST(RaftLogEviction, TheKeptTailCountsOnlyBytesInMemory) {
  RaftLog log(0, 0, make(1, std::vector<Term>(10, 1)));
  const size_t each = entry_size(log.at(1));
  EXPECT_EQ(log.tail_start(10, 100, 3 * each), 7u);
  log.evict_to_fit(8, 0);
  // 9 and 10 are in memory; the evicted ones cost nothing, so the count bounds the tail.
  EXPECT_EQ(log.tail_start(10, 100, 3 * each), 0u);
  EXPECT_EQ(log.tail_start(10, 4, 3 * each), 6u);
}

using testing::TestNet;

// A three-voter cluster whose leader keeps at most a few entries in memory; follower 3 is cut
// off while 20 entries commit, then comes back.
struct LaggingFollower : ::testing::Test {
  void SetUp() override {
    net.log_memory_bytes = 3 * entry_size(Entry{1, 1, EntryType::kNormal, "value-00"});
    for (NodeId id : {1, 2, 3}) net.add(id, {1, 2, 3}, {}, id == 1 ? 0 : 5);
    net.elect(1);
    net.isolate(3);
    net.cut.erase({1, 2});
    net.cut.erase({2, 1});
    for (int i = 0; i < 20; ++i) {
      char v[16];
      std::snprintf(v, sizeof v, "value-%02d", i);
      ASSERT_TRUE(net.at(1).propose(v).ok());
      net.stabilize();
    }
    ASSERT_GT(net.at(1).log().evicted(), 15u);
    ASSERT_LT(net.at(3).log().last_index(), 3u);
  }

  // What the leader's storage holds: what it applied, in order from index 1.
  std::vector<Entry> stored(Index lo, Index hi) {
    std::vector<Entry> out;
    for (const Entry& e : net.applied[1]) {
      if (e.index >= lo && e.index <= hi) out.push_back(e);
    }
    return out;
  }
  // Answers every load the leader asks for from its storage until the cluster is quiet.
  int serve_loads() {
    int loads = 0;
    for (int round = 0; round < 100; ++round) {
      net.stabilize();
      auto asked = net.at(1).take_entry_loads();
      if (asked.empty()) return loads;
      for (const auto& l : asked) {
        ++loads;
        net.at(1).entries_loaded(l.to, l.lo, stored(l.lo, std::min(l.hi, l.lo + 3)));  // a few at a time
      }
    }
    return loads;
  }

  TestNet net;
};

TEST_F(LaggingFollower, CatchesUpFromEntriesReadBackFromStorage) {
  net.heal();
  net.tick_all(2);  // heartbeats: the follower answers, the leader probes it
  const int loads = serve_loads();
  EXPECT_GT(loads, 3);
  EXPECT_EQ(net.at(3).log().last_index(), net.at(1).log().last_index());
  EXPECT_EQ(net.at(3).commit_index(), net.at(1).commit_index());
  ASSERT_EQ(net.applied[3].size(), net.applied[1].size());
  for (size_t i = 0; i < net.applied[1].size(); ++i) EXPECT_EQ(net.applied[3][i], net.applied[1][i]);
  EXPECT_LE(net.at(1).log().memory_bytes(), net.log_memory_bytes);
}

TEST_F(LaggingFollower, EntriesThatAreNotTheLogsAreNeverSent) {
  net.heal();
  net.tick_all(2);
  net.stabilize();
  auto asked = net.at(1).take_entry_loads();
  ASSERT_EQ(asked.size(), 1u);
  std::vector<Entry> wrong = stored(asked[0].lo, asked[0].lo + 2);
  wrong[1].term += 1;  // not what the log holds at that index
  const size_t queued = net.queue.size();
  net.at(1).entries_loaded(asked[0].to, asked[0].lo, wrong);
  EXPECT_EQ(net.queue.size(), queued);
  net.process_readies();
  for (const Message& m : net.queue) EXPECT_TRUE(m.type != MessageType::kAppend || m.to != 3);
  // A stale answer (for another start) is ignored too; the next heartbeat answer asks again.
  net.at(1).entries_loaded(asked[0].to, asked[0].lo + 1, stored(asked[0].lo + 1, asked[0].lo + 2));
  EXPECT_TRUE(net.at(1).take_entry_loads().empty());
  net.tick_all(1);
  serve_loads();
  EXPECT_EQ(net.at(3).log().last_index(), net.at(1).log().last_index());
}

TEST_F(LaggingFollower, EntriesStorageNoLongerHasAreSentAsTheSnapshot) {
  const Index applied = net.at(1).applied_index();
  ASSERT_EQ(net.at(1).snapshot_taken(applied, std::string("state")).index, applied);
  net.heal();
  net.tick_all(2);
  net.stabilize();
  auto asked = net.at(1).take_entry_loads();
  ASSERT_EQ(asked.size(), 1u);
  net.at(1).entries_loaded(asked[0].to, asked[0].lo, {});  // compacted behind the snapshot
  net.stabilize();
  ASSERT_EQ(net.installed[3].size(), 1u);
  EXPECT_EQ(net.installed[3][0].first.index, applied);
  EXPECT_EQ(net.at(3).log().last_index(), net.at(1).log().last_index());
}

}  // namespace
}  // namespace zkraft::consensus
