// The Raft operators' four-letter words (ClickHouse Keeper's names): lgif renders the log's
// bounds, csnp asks consensus for a snapshot, rqld asks the leader for leadership, ydld makes a
// leader hand leadership to another voter. Each is subject to the whitelist.

#include <gtest/gtest.h>

#include "tests/server/pipeline_fixture.h"

namespace zkraft::server::testing {
namespace {

class RaftWordsTest : public PipelineTest {
 protected:
  explicit RaftWordsTest(uint64_t self = 1) : PipelineTest(self) {
    for (int64_t id : {1, 2, 3}) {
      PeerConfig p;
      p.id = id;
      p.host = "127.0.0.1";
      p.peer_port = static_cast<int32_t>(2000 + id);
      config.servers.push_back(p);
    }
  }
  std::string word(uint64_t conn, const std::string& w) {
    deliver(opened(conn));
    deliver(four_letter_word(conn, w));
    auto s = io.sent(conn);
    return s.empty() ? std::string() : s.back();
  }
};

class FollowerRaftWordsTest : public RaftWordsTest {
 protected:
  FollowerRaftWordsTest() : RaftWordsTest(2) {}
};

// Applied comes from the state machine itself (exact); the rest from consensus' last report.
TEST_F(RaftWordsTest, LgifShowsTheLogBounds) {
  start();
  handshake(9);  // one entry applied: index 1
  ReplicationStatus r;
  r.mode = "leader";
  r.first_index = 5;
  r.first_term = 2;
  r.last_index = 101;
  r.last_term = 3;
  r.applied_index = 100;
  r.commit_index = 101;
  r.snapshot_index = 50;
  log.set_replication_status(r);
  EXPECT_EQ(word(1, "lgif"),
            "first_log_idx\t5\nfirst_log_term\t2\nlast_log_idx\t101\nlast_log_term\t3\n"
            "last_committed_log_idx\t1\nleader_committed_log_idx\t101\n"
            "target_committed_log_idx\t101\nlast_snapshot_idx\t50\n");
  // A report older than what was applied never shows commit below applied.
  r.commit_index = 0;
  log.set_replication_status(r);
  EXPECT_NE(word(2, "lgif").find("leader_committed_log_idx\t1\n"), std::string::npos);
}

TEST_F(RaftWordsTest, CsnpAsksForASnapshotAndAnswersTheIndexItCovers) {
  start();
  handshake(9);
  handshake(8);  // two entries applied
  ReplicationStatus r;
  r.applied_index = 77;  // consensus' (possibly stale) figure is not what csnp answers
  log.set_replication_status(r);
  EXPECT_EQ(word(1, "csnp"), "2");
  EXPECT_EQ(log.snapshots_asked(), 1);
}

TEST_F(RaftWordsTest, YdldOnTheLeaderHandsLeadershipToTheBestVoter) {
  start(/*leader=*/1);
  EXPECT_EQ(word(1, "ydld"), "Sent yield leadership request to leader.");
  EXPECT_EQ(log.transfers(), std::vector<uint64_t>{0});  // 0: the log picks the most caught-up
}

TEST_F(RaftWordsTest, RqldOnTheLeaderIsAlreadyDone) {
  start(/*leader=*/1);
  EXPECT_EQ(word(1, "rqld"), "Sent leadership request to leader.");
  EXPECT_TRUE(log.sent().empty());
  EXPECT_TRUE(log.transfers().empty());
}

TEST_F(RaftWordsTest, TheLeaderHandsLeadershipToAServerThatAsks) {
  start(/*leader=*/1);
  log.receive(3, encode_peer_message(LeadershipRequest{}));
  EXPECT_EQ(log.transfers(), std::vector<uint64_t>{3});
}

TEST_F(FollowerRaftWordsTest, RqldOnAFollowerAsksTheLeader) {
  start(/*leader=*/1);
  EXPECT_EQ(word(1, "rqld"), "Sent leadership request to leader.");
  ASSERT_EQ(log.sent().size(), 1u);
  EXPECT_EQ(log.sent()[0].to, 1u);
  auto m = decode_peer_message(log.sent()[0].payload);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(std::holds_alternative<LeadershipRequest>(*m));
  // A follower that receives the request (it is not the leader) ignores it.
  log.receive(3, encode_peer_message(LeadershipRequest{}));
  EXPECT_TRUE(log.transfers().empty());
}

TEST_F(FollowerRaftWordsTest, RqldWithoutALeaderFails) {
  start(/*leader=*/0);
  EXPECT_EQ(word(1, "rqld"), "Failed to send leadership request to leader.");
  EXPECT_TRUE(log.sent().empty());
}

TEST_F(FollowerRaftWordsTest, YdldOnAFollowerChangesNothing) {
  start(/*leader=*/1);
  EXPECT_EQ(word(1, "ydld"), "Sent yield leadership request to leader.");
  EXPECT_TRUE(log.transfers().empty());
}

TEST_F(RaftWordsTest, TheWordsObeyTheWhitelist) {
  config.four_letter_words = {"lgif"};
  start(/*leader=*/1);
  EXPECT_EQ(word(1, "csnp"), "csnp is not executed because it is not in the whitelist.\n");
  EXPECT_EQ(word(2, "ydld"), "ydld is not executed because it is not in the whitelist.\n");
  EXPECT_EQ(word(3, "rqld"), "rqld is not executed because it is not in the whitelist.\n");
  EXPECT_EQ(log.snapshots_asked(), 0);
  EXPECT_TRUE(log.transfers().empty());
  EXPECT_EQ(word(4, "lgif").substr(0, 14), "first_log_idx\t");
}

}  // namespace
}  // namespace zkraft::server::testing
