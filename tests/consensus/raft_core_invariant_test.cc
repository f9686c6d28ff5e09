// The Raft core's release-build invariants (ZKRAFT_INVARIANT, consensus/invariant.h) fire: each
// broken rule aborts with its message instead of carrying on. (Commit never going back and
// match < next cannot be broken through the public interface; they are checked in place.)

#include <gtest/gtest.h>

#include "consensus/raft_core.h"
#include "consensus/raft_log.h"
#include "tests/consensus/raft_core_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::fixed_random;
using testing::make_config;

Entry entry(Index index, Term term) { return Entry{term, index, EntryType::kNormal, "e"}; }

TEST(RaftLogInvariant, AppendOnlyAtLastPlusOne) {
  RaftLog log(0, 0, {entry(1, 1)});
  log.append(entry(2, 1));
  EXPECT_DEATH(log.append(entry(4, 1)), "invariant failed: .*entries are appended at last_index");
}

TEST(RaftLogInvariant, TermsNeverDecrease) {
  RaftLog log(0, 0, {entry(1, 2)});
  EXPECT_DEATH(log.append(entry(2, 1)), "invariant failed: .*log terms never decrease");
  EXPECT_DEATH(RaftLog(0, 0, {entry(1, 3), entry(2, 2)}), "log terms never decrease");
}

TEST(RaftLogInvariant, RecoveredEntriesFollowTheOffset) {
  EXPECT_DEATH(RaftLog(5, 1, {entry(7, 1)}), "invariant failed: .*must follow the offset");
}

TEST(RaftLogInvariant, NoTruncationAtOrBelowTheCompactionPoint) {
  RaftLog log(5, 1, {entry(6, 1)});
  EXPECT_DEATH(log.truncate_from(5), "invariant failed: .*cannot be truncated");
}

TEST(RaftLogInvariant, NoCompactionBeyondTheLastEntry) {
  RaftLog log(0, 0, {entry(1, 1), entry(2, 1)});
  EXPECT_DEATH(log.compact(3), "invariant failed: .*cannot compact beyond the last entry");
}

TEST(RaftCoreInvariant, ElectionTimeoutLongerThanHeartbeat) {
  RaftConfig cfg = make_config(1, {1, 2, 3});
  cfg.election_ticks = 2;
  cfg.heartbeat_ticks = 2;
  EXPECT_DEATH(RaftCore(cfg, RecoveredState{}, fixed_random(0)),
               "invariant failed: .*election timeout must be longer");
}

TEST(RaftCoreInvariant, CommittedEntryIsNeverOverwritten) {
  RecoveredState rec;
  rec.hard_state = HardState{1, 0, 3};
  rec.entries = {entry(1, 1), entry(2, 1), entry(3, 1)};
  RaftCore follower(make_config(1, {1, 2, 3}), rec, fixed_random(0));
  ASSERT_EQ(follower.commit_index(), 3u);
  // A (broken) leader whose append matches at 3 but carries a different entry 2.
  Message m;
  m.type = MessageType::kAppend;
  m.from = 2;
  m.to = 1;
  m.term = 2;
  m.index = 3;
  m.log_term = 1;
  m.entries = {entry(2, 2)};
  EXPECT_DEATH(follower.step(m), "invariant failed: .*a committed entry would be overwritten");
}

TEST(RaftCoreInvariant, OneReadyAtATime) {
  RaftCore core(make_config(1, {1}), RecoveredState{}, fixed_random(0));
  for (int i = 0; i < 30 && !core.has_ready(); ++i) core.tick();
  ASSERT_TRUE(core.has_ready());
  Ready rd = core.ready();
  EXPECT_DEATH(core.ready(), "invariant failed: .*one Ready at a time");
  core.advance(rd);
  EXPECT_DEATH(core.advance(rd), "invariant failed: .*advance\\(\\) without an outstanding Ready");
}

}  // namespace
}  // namespace zkraft::consensus
