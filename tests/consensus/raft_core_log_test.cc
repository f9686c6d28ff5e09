#include <gtest/gtest.h>

#include "consensus/messages.h"
#include "consensus/progress.h"
#include "consensus/raft_log.h"
#include "consensus/read_index_queue.h"

namespace zkraft::consensus {
namespace {

std::vector<Entry> make(Index first, std::vector<Term> terms) {
  std::vector<Entry> out;
  for (size_t i = 0; i < terms.size(); ++i) out.push_back(Entry{terms[i], first + i, EntryType::kNormal, "d"});
  return out;
}

TEST(RaftCoreLog, TermsAndBounds) {
  RaftLog log(10, 3, make(11, {3, 4, 4, 6}));
  EXPECT_EQ(log.first_index(), 11u);
  EXPECT_EQ(log.last_index(), 14u);
  EXPECT_EQ(log.last_term(), 6u);
  EXPECT_EQ(log.term(10), std::optional<Term>(3));
  EXPECT_EQ(log.term(9), std::nullopt);
  EXPECT_EQ(log.term(15), std::nullopt);
  EXPECT_TRUE(log.match_term(13, 4));
  EXPECT_FALSE(log.match_term(13, 5));
  EXPECT_EQ(log.stable_index(), 14u);
}

TEST(RaftCoreLog, FindConflictByTerm) {
  RaftLog log(0, 0, make(1, {1, 1, 2, 2, 2, 5, 5}));
  EXPECT_EQ(log.find_conflict_by_term(7, 4), 5u);   // skip the term-5 entries
  EXPECT_EQ(log.find_conflict_by_term(7, 5), 7u);
  EXPECT_EQ(log.find_conflict_by_term(4, 1), 2u);
  EXPECT_EQ(log.find_conflict_by_term(100, 9), 7u);  // beyond the end: clamp to last
  EXPECT_EQ(log.find_conflict_by_term(3, 0), 0u);    // nothing that old: the start
}

TEST(RaftCoreLog, TruncateMovesStableMarkAndStableToChecksTerm) {
  RaftLog log(0, 0, make(1, {1, 1, 1}));
  log.append(Entry{2, 4, EntryType::kNormal, ""});
  log.append(Entry{2, 5, EntryType::kNormal, ""});
  EXPECT_EQ(log.stable_index(), 3u);
  EXPECT_EQ(log.unstable_entries().size(), 2u);
  log.truncate_from(3);
  EXPECT_EQ(log.last_index(), 2u);
  EXPECT_EQ(log.stable_index(), 2u);
  log.append(Entry{3, 3, EntryType::kNormal, ""});
  log.stable_to(5, 2);  // entry 5 of term 2 is gone: no effect
  EXPECT_EQ(log.stable_index(), 2u);
  log.stable_to(3, 3);
  EXPECT_EQ(log.stable_index(), 3u);
}

TEST(RaftCoreLog, SliceRespectsByteCapButReturnsOne) {
  RaftLog log(0, 0, make(1, {1, 1, 1, 1}));
  EXPECT_EQ(log.slice(1, 4, 1).size(), 1u);
  EXPECT_EQ(log.slice(1, 4, 1 << 20).size(), 4u);
  EXPECT_EQ(log.slice(2, 4, 2 * entry_size(log.at(2))).size(), 2u);
}

TEST(RaftCoreLog, CompactAndRestore) {
  RaftLog log(0, 0, make(1, {1, 2, 3, 4}));
  log.compact(2);
  EXPECT_EQ(log.first_index(), 3u);
  EXPECT_EQ(log.term(2), std::optional<Term>(2));
  EXPECT_EQ(log.term(1), std::nullopt);
  log.restore(50, 9);
  EXPECT_EQ(log.last_index(), 50u);
  EXPECT_EQ(log.last_term(), 9u);
  EXPECT_EQ(log.stable_index(), 50u);
  EXPECT_TRUE(log.is_up_to_date(50, 9));
  EXPECT_FALSE(log.is_up_to_date(60, 8));
  EXPECT_TRUE(log.is_up_to_date(1, 10));
}

// Entries of 100 bytes of data each: entry_size 124.
std::vector<Entry> make_sized(Index first, size_t n) {
  std::vector<Entry> out;
  for (size_t i = 0; i < n; ++i) out.push_back(Entry{1, first + i, EntryType::kNormal, std::string(100, 'x')});
  return out;
}

TEST(RaftCoreLog, TailStartKeepsAtMostTheEntriesAndBytesAsked) {
  RaftLog log(10, 1, make_sized(11, 10));  // 11..20
  // By count only (max_bytes 0), as the compaction point was before the byte bound.
  EXPECT_EQ(log.tail_start(18, 3, 0), 15u);   // keeps 16, 17, 18
  EXPECT_EQ(log.tail_start(18, 100, 0), 10u);  // never below the offset
  EXPECT_EQ(log.tail_start(18, 0, 0), 18u);
  // The bytes bind first: 3 x 124 = 372 > 300, so 2 entries.
  EXPECT_EQ(log.tail_start(18, 5, 300), 16u);
  EXPECT_EQ(log.tail_start(18, 5, 248), 16u);  // exactly 2 entries' worth still keeps 2
  EXPECT_EQ(log.tail_start(18, 5, 247), 17u);
  EXPECT_EQ(log.tail_start(18, 5, 100), 18u);  // one entry is already too big: none kept
  // The count binds first.
  EXPECT_EQ(log.tail_start(18, 2, 10000), 16u);
  EXPECT_EQ(log.tail_start(18, 100, 10000), 10u);
  EXPECT_EQ(log.tail_start(10, 5, 300), 10u);  // empty tail at the offset
}

TEST(RaftCoreProgress, InflightWindowPausesReplication) {
  Progress p(2);
  p.become_replicate();
  p.inflights.add(5);
  EXPECT_FALSE(p.paused());
  p.inflights.add(9);
  EXPECT_TRUE(p.paused());
  p.inflights.free_le(5);
  EXPECT_FALSE(p.paused());
  EXPECT_TRUE(p.maybe_update(9));
  EXPECT_FALSE(p.maybe_update(7));  // stale
  EXPECT_EQ(p.next, 10u);
}

TEST(RaftCoreReadIndexQueue, LaterAckConfirmsEarlierRequests) {
  ReadIndexQueue q;
  const std::vector<NodeId> voters{1, 2, 3, 4, 5};  // quorum 3
  const uint64_t r1 = q.add(100, 1, 5, 1);
  const uint64_t r2 = q.add(200, 1, 6, 1);
  EXPECT_TRUE(q.ack(2, r1, voters).empty());  // 2 of 3 needed
  auto out = q.ack(3, r2, voters);            // node 3 answered the newer round: confirms both
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].context, 100u);            // r1 has acks {1,2,3}; r2 only {1,3}
  out = q.ack(2, r2, voters);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].context, 200u);
  EXPECT_TRUE(q.empty());
}

TEST(RaftCoreReadIndexQueue, OnlyVotersAcknowledgementsCount) {
  // The case simulation seed 408349 found: leader 4 was removed ({1,2,5} remain) and still led
  // its old term; its own acknowledgement plus node 5's made "2 of 3", confirming a read at a
  // commit index far behind the real leader's.
  ReadIndexQueue q;
  const std::vector<NodeId> voters{1, 2, 5};
  const uint64_t r = q.add(9, 5, 176, /*self=*/4);
  EXPECT_TRUE(q.ack(5, r, voters).empty());  // {4, 5}: only 5 votes
  EXPECT_TRUE(q.ack(7, r, voters).empty());  // 7 is no voter either (a learner)
  auto out = q.ack(1, r, voters);            // {5, 1}: a majority of {1, 2, 5}
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].context, 9u);
}

}  // namespace
}  // namespace zkraft::consensus
