// The dashboard's figures of the other members: a follower sends its term, commit and applied
// index to the leader at most every 500 ms; the leader's admin status carries the latest report
// of each member with its age, and drops reports older than 5 s.

#include "pipeline_fixture.h"

namespace zkraft::server::testing {
namespace {

class MemberFiguresTest : public PipelineTest {
 protected:
  explicit MemberFiguresTest(uint64_t self) : PipelineTest(self) {
    for (int64_t id : {1, 2, 3}) {
      PeerConfig p;
      p.id = id;
      p.host = "127.0.0.1";
      p.peer_port = static_cast<int32_t>(2000 + id);
      config.servers.push_back(p);
    }
  }
  std::vector<MemberFigures> figures_sent_to(uint64_t to) const {
    std::vector<MemberFigures> out;
    for (const auto& s : log.sent()) {
      auto m = decode_peer_message(s.payload);
      if (s.to == to && m && std::holds_alternative<MemberFigures>(*m)) {
        out.push_back(std::get<MemberFigures>(*m));
      }
    }
    return out;
  }
};

class FollowerFigures : public MemberFiguresTest {
 protected:
  FollowerFigures() : MemberFiguresTest(2) {}
};

class LeaderFigures : public MemberFiguresTest {
 protected:
  LeaderFigures() : MemberFiguresTest(1) {}
};

TEST_F(FollowerFigures, AFollowerReportsItsOwnFiguresToTheLeaderTwiceASecond) {
  start(/*leader=*/1);
  ReplicationStatus r;
  r.mode = "follower";
  r.term = 4;
  r.commit_index = 30;
  r.applied_index = 29;
  log.set_replication_status(r);
  pipeline->tick();
  ASSERT_EQ(figures_sent_to(1), (std::vector<MemberFigures>{{4, 30, 29}}));
  clock.advance(499);
  pipeline->tick();
  EXPECT_EQ(figures_sent_to(1).size(), 1u);  // not sooner than 500 ms
  clock.advance(1);
  pipeline->tick();
  EXPECT_EQ(figures_sent_to(1).size(), 2u);
  log.set_leader(0);  // nobody to tell
  clock.advance(1000);
  pipeline->tick();
  EXPECT_EQ(figures_sent_to(1).size(), 2u);
}

TEST_F(LeaderFigures, TheLeadersStatusCarriesEachMembersLatestReportWhileFresh) {
  start(/*leader=*/1);
  ReplicationStatus r;
  r.mode = "leader";
  r.peers = {PeerProgress{2, 30, false, true}, PeerProgress{3, 10, false, true}};
  log.set_replication_status(r);
  pipeline->on_peer_message(2, encode_peer_message(MemberFigures{4, 30, 29}));
  clock.advance(200);
  ServerStatus st = pipeline->admin_status(StatsReset::kNone, false);
  ASSERT_EQ(st.peers.size(), 2u);
  for (const auto& p : st.peers) {
    if (p.id == 2) {
      EXPECT_TRUE(p.reported);
      EXPECT_EQ((std::vector<uint64_t>{p.term, p.commit_index, p.applied_index}),
                (std::vector<uint64_t>{4, 30, 29}));
      EXPECT_EQ(p.reported_ms_ago, 200);
    } else {
      EXPECT_FALSE(p.reported);  // 3 never reported: unknown, not 0
    }
  }
  clock.advance(5000);
  st = pipeline->admin_status(StatsReset::kNone, false);
  for (const auto& p : st.peers) EXPECT_FALSE(p.reported) << p.id;  // too old to show
}

}  // namespace
}  // namespace zkraft::server::testing
