// LeaderDuties: session expiry decided by the leader alone on the MONOTONIC clock (a wall-clock
// step expires nobody), followers' liveness reports, the container reaper, and the one-change-
// at-a-time walk from Raft's membership to the one /zookeeper/config names.

#include <gtest/gtest.h>

#include "client_frames.h"
#include "fake_replicated_log.h"
#include "jute/errors.h"
#include "jute/opcodes.h"
#include "server/clock.h"
#include "server/leader_duties.h"
#include "server/membership_text.h"
#include "server/peer_message.h"
#include "server/write_router.h"
#include "server/zk_state_machine.h"

namespace zkraft::server {
namespace {

using namespace testing;
namespace op = jute::op;
namespace err = jute::err;

constexpr int32_t kTick = 2000;
constexpr int32_t kTimeout = 6000;
constexpr int64_t kSession = 0x0100000000000001;
// A time on a tick boundary, so deadlines are easy to state: round_up(t) is the next multiple of
// kTick strictly after t.
constexpr int64_t kT0 = 1'000'000;

class LeaderDutiesTest : public ::testing::Test {
 protected:
  explicit LeaderDutiesTest(uint64_t self = 1, bool standalone = true)
      : log(self), duties(options(standalone), sm, log, router) {}

  static DutyOptions options(bool standalone) {
    DutyOptions o;
    o.tick_time_ms = kTick;
    o.standalone = standalone;
    o.container_check_interval_ms = 60000;
    return o;
  }
  void apply(const Txn& t) {
    auto out = sm.apply(++zxid, t);
    ASSERT_EQ(out.err, err::kOk) << "apply at " << zxid;
  }
  // A session the state knows, as the leader first hears of it (its commit).
  void new_session(int64_t id, int64_t now, int32_t timeout = kTimeout) {
    apply(create_session_txn(id, timeout));
    duties.session_created(id, timeout, now);
  }
  void tick(int64_t monotonic) { duties.tick(monotonic, clock.wall_ms()); }
  static PeerConfig peer(int64_t id, PeerRole role = PeerRole::kParticipant) {
    PeerConfig p;
    p.id = id;
    p.host = "127.0.0.1";
    p.peer_port = 2887 + static_cast<int32_t>(id);
    p.election_port = 3887 + static_cast<int32_t>(id);
    p.role = role;
    p.client_address = "127.0.0.1";
    p.client_port = 2180 + static_cast<int32_t>(id);
    return p;
  }
  static std::string spec(const PeerConfig& p) {
    std::string text = membership_text({p}, 0);
    return text.substr(0, text.find('\n'));
  }
  // A reconfig as a client would send it, applied: /zookeeper/config gets version >= 0.
  void reconfig(const std::vector<PeerConfig>& members) {
    jute::ReconfigRequest r;
    for (const auto& m : members) r.new_members += (r.new_members.empty() ? "" : ",") + spec(m);
    Txn t = request_txn(kSession, op::kReconfig, r);
    t.auth = {{"super", ""}};
    auto out = sm.apply(++zxid, t);
    ASSERT_EQ(out.err, err::kOk);
    ASSERT_TRUE(out.membership_changed);
  }
  // The sessions the leader proposed to expire, in order.
  std::vector<int64_t> expiries() const {
    std::vector<int64_t> out;
    for (const auto& e : log.proposed()) {
      auto t = decode_txn(e);
      EXPECT_TRUE(t.has_value());
      if (t && t->kind == TxnKind::kCloseSession) {
        EXPECT_TRUE(t->expired);
        EXPECT_EQ(t->origin_request, 0u);
        out.push_back(t->session_id);
      }
    }
    return out;
  }
  std::vector<std::string> reaps() const {
    std::vector<std::string> out;
    for (const auto& e : log.proposed()) {
      auto t = decode_txn(e);
      if (t && t->kind == TxnKind::kReapNode) out.push_back(t->path);
    }
    return out;
  }

  ZkStateMachine sm{StateMachineOptions{false, true}};
  FakeReplicatedLog log;
  ManualClock clock{kT0, 1'700'000'000'000};
  WriteRouter router{log, clock};
  LeaderDuties duties;
  int64_t zxid = 0;
};

// ---------------------------------------------------------------- expiry on the leader

TEST_F(LeaderDutiesTest, ASessionExpiresAtTheTickBucketAfterItsTimeoutAndIsClosedOnce) {
  log.set_leader(1);
  new_session(kSession, kT0);
  const int64_t heard = kT0 + 500;
  duties.session_heard(kSession, kTimeout, heard);
  const int64_t deadline = kT0 + 8000;  // round_up(heard + 6000) = next multiple of 2000
  ASSERT_EQ(duties.expiry().deadline(kSession), deadline);
  tick(deadline - 1);
  EXPECT_TRUE(expiries().empty());
  tick(deadline);
  EXPECT_EQ(expiries(), std::vector<int64_t>{kSession});
  EXPECT_TRUE(duties.closing(kSession));
  tick(deadline + 1);
  tick(deadline + 10 * kTick);
  EXPECT_EQ(expiries(), std::vector<int64_t>{kSession});  // once, while the close is pending
  // Its commit ends the bookkeeping.
  duties.session_closed(kSession);
  EXPECT_FALSE(duties.closing(kSession));
  EXPECT_FALSE(duties.expiry().contains(kSession));
}

TEST_F(LeaderDutiesTest, ActivityPushesTheDeadlineBack) {
  log.set_leader(1);
  new_session(kSession, kT0);
  duties.session_heard(kSession, kTimeout, kT0 + 5000);
  tick(kT0 + 8000);
  EXPECT_TRUE(expiries().empty());
  tick(kT0 + 12000);  // round_up(5000 + 6000)
  EXPECT_EQ(expiries(), std::vector<int64_t>{kSession});
}

TEST_F(LeaderDutiesTest, SteppingTheWallClockByHoursExpiresNobody) {
  log.set_leader(1);
  new_session(kSession, clock.monotonic_ms());
  tick(clock.monotonic_ms());
  clock.step_wall(5 * 3'600'000);
  tick(clock.monotonic_ms());
  clock.step_wall(-10 * 3'600'000);
  tick(clock.monotonic_ms());
  EXPECT_TRUE(expiries().empty());
  EXPECT_TRUE(log.proposed().empty());
  clock.advance(kTimeout + kTick);  // real time passing does
  tick(clock.monotonic_ms());
  EXPECT_EQ(expiries(), std::vector<int64_t>{kSession});
}

TEST_F(LeaderDutiesTest, ASessionTheStateNoLongerKnowsIsNotExpired) {
  log.set_leader(1);
  // Tracked (e.g. attached) but its close already applied elsewhere.
  duties.session_attached(kSession, kTimeout, kT0);
  tick(kT0 + 100000);
  EXPECT_TRUE(expiries().empty());
}

TEST_F(LeaderDutiesTest, ASessionClosingByItsClientIsNotAlsoExpired) {
  log.set_leader(1);
  new_session(kSession, kT0);
  duties.mark_closing(kSession);
  tick(kT0 + 100000);
  EXPECT_TRUE(expiries().empty());
}

TEST_F(LeaderDutiesTest, AFollowersReportKeepsItsSessionsAliveOnTheLeader) {
  log.set_leader(1);
  new_session(kSession, kT0);
  duties.sessions_alive({kSession}, kT0 + 5000);
  tick(kT0 + 8000);  // the original deadline
  EXPECT_TRUE(expiries().empty());
  tick(kT0 + 12000);
  EXPECT_EQ(expiries(), std::vector<int64_t>{kSession});
}

TEST_F(LeaderDutiesTest, ANewLeaderGivesEverySessionAFullTimeout) {
  new_session(kSession, kT0);
  log.set_leader(1);
  duties.leader_changed(true, kT0 + 7000);
  tick(kT0 + 8000);
  EXPECT_TRUE(expiries().empty());
  EXPECT_EQ(duties.expiry().deadline(kSession), kT0 + 14000);
  tick(kT0 + 14000);
  EXPECT_EQ(expiries(), std::vector<int64_t>{kSession});
}

TEST_F(LeaderDutiesTest, ANewLeaderForgetsClosesItsPredecessorHadPending) {
  log.set_leader(1);
  new_session(kSession, kT0);
  tick(kT0 + 8000);
  ASSERT_EQ(expiries().size(), 1u);
  // Leadership moved away and back before that close committed: it may be lost, so the new
  // term decides again after a full timeout.
  duties.leader_changed(true, kT0 + 9000);
  EXPECT_FALSE(duties.closing(kSession));
  tick(kT0 + 16000);
  EXPECT_EQ(expiries().size(), 2u);
}

// A close proposed before a step-down may never commit; RequestPipeline refuses the reattach of a
// closing session, so a step-down must forget them (the new leader gives them a full timeout).
TEST_F(LeaderDutiesTest, AStepDownForgetsTheClosesItHadProposed) {
  log.set_leader(1);
  new_session(kSession, kT0);
  tick(kT0 + 8000);
  ASSERT_EQ(expiries(), std::vector<int64_t>{kSession});
  ASSERT_TRUE(duties.closing(kSession));
  log.set_leader(2);
  duties.leader_changed(false, kT0 + 8500);
  EXPECT_FALSE(duties.closing(kSession));
}

TEST_F(LeaderDutiesTest, LosingLeadershipToAnotherServerChangesNoDeadline) {
  new_session(kSession, kT0);
  auto before = duties.expiry().deadline(kSession);
  duties.leader_changed(false, kT0 + 7000);
  EXPECT_EQ(duties.expiry().deadline(kSession), before);
}

TEST_F(LeaderDutiesTest, WithNoLeaderNobodyExpiresAndDeadlinesStartOver) {
  new_session(kSession, kT0);
  ASSERT_EQ(log.leader(), 0u);
  tick(kT0 + 100000);
  EXPECT_TRUE(log.proposed().empty());
  EXPECT_TRUE(log.sent().empty());
  EXPECT_EQ(duties.expiry().deadline(kSession), kT0 + 108000);  // round_up(now + 6000)
  // A leader that takes over just after gives the session the whole timeout.
  log.set_leader(1);
  tick(kT0 + 106000);
  EXPECT_TRUE(expiries().empty());
  tick(kT0 + 108000);
  EXPECT_EQ(expiries(), std::vector<int64_t>{kSession});
}

TEST_F(LeaderDutiesTest, ResetGivesEveryRecoveredSessionAFullTimeout) {
  apply(create_session_txn(kSession, kTimeout));
  apply(create_session_txn(kSession + 1, 2 * kTimeout));
  duties.reset(kT0);
  EXPECT_EQ(duties.expiry().deadline(kSession), kT0 + 8000);
  EXPECT_EQ(duties.expiry().deadline(kSession + 1), kT0 + 14000);
}

// ---------------------------------------------------------------- a follower

class FollowerDutiesTest : public LeaderDutiesTest {
 protected:
  FollowerDutiesTest() : LeaderDutiesTest(/*self=*/2) {}
};

TEST_F(FollowerDutiesTest, AFollowerDoesNotExpireButReportsTheSessionsItHeardFrom) {
  log.set_leader(1);
  new_session(kSession, kT0);
  new_session(kSession + 1, kT0);
  new_session(kSession + 2, kT0);
  duties.session_attached(kSession + 2, kTimeout, kT0);
  duties.session_heard(kSession, kTimeout, kT0 + 100);
  tick(kT0 + 100000);  // long past every deadline
  EXPECT_TRUE(log.proposed().empty());
  ASSERT_EQ(log.sent().size(), 1u);
  EXPECT_EQ(log.sent()[0].to, 1u);
  auto m = decode_peer_message(log.sent()[0].payload);
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(std::holds_alternative<SessionsAlive>(*m));
  EXPECT_EQ(std::get<SessionsAlive>(*m).session_ids, (std::vector<int64_t>{kSession, kSession + 2}));
  // Nothing heard since: nothing to report.
  tick(kT0 + 101000);
  EXPECT_EQ(log.sent().size(), 1u);
}

TEST_F(FollowerDutiesTest, AClosedSessionIsNotReported) {
  log.set_leader(1);
  duties.session_heard(kSession, kTimeout, kT0);
  duties.session_heard(kSession + 1, kTimeout, kT0);
  duties.session_closed(kSession);
  tick(kT0 + 1000);
  ASSERT_EQ(log.sent().size(), 1u);
  auto m = decode_peer_message(log.sent()[0].payload);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(std::get<SessionsAlive>(*m).session_ids, std::vector<int64_t>{kSession + 1});
}

TEST_F(FollowerDutiesTest, AFollowerReapsNothing) {
  log.set_leader(1);
  apply(create_session_txn(kSession));
  apply(request_txn(kSession, op::kCreateContainer, create_request("/c", "", 4)));
  apply(create_txn(kSession, "/c/x"));
  apply(delete_txn(kSession, "/c/x"));
  tick(kT0);
  EXPECT_TRUE(log.proposed().empty());
}

// ---------------------------------------------------------------- the reaper

TEST_F(LeaderDutiesTest, TheReaperProposesAnEmptyContainersRemovalOncePerIntervalAndNotTwiceWhilePending) {
  log.set_leader(1);
  apply(create_session_txn(kSession));
  apply(request_txn(kSession, op::kCreateContainer, create_request("/c", "", 4)));
  apply(create_txn(kSession, "/c/x"));
  tick(kT0);  // the first tick checks; nothing is empty yet
  EXPECT_TRUE(reaps().empty());
  apply(delete_txn(kSession, "/c/x"));
  tick(kT0 + 1000);  // within the interval: not checked
  EXPECT_TRUE(reaps().empty());
  tick(kT0 + 60000);
  EXPECT_EQ(reaps(), std::vector<std::string>{"/c"});
  tick(kT0 + 120000);  // still a candidate, but its removal is pending
  EXPECT_EQ(reaps(), std::vector<std::string>{"/c"});
  // The removal applied as a no-op (e.g. a child came back meanwhile): it may be proposed again.
  duties.node_reaped("/c");
  tick(kT0 + 150000);
  EXPECT_EQ(reaps().size(), 1u);  // the interval counts from the last check
  tick(kT0 + 180000);
  EXPECT_EQ(reaps(), (std::vector<std::string>{"/c", "/c"}));
}

TEST_F(LeaderDutiesTest, TheFirstLeaderTickReapsAtOnce) {
  apply(create_session_txn(kSession));
  apply(request_txn(kSession, op::kCreateContainer, create_request("/c", "", 4)));
  apply(create_txn(kSession, "/c/x"));
  apply(delete_txn(kSession, "/c/x"));
  log.set_leader(1);
  tick(kT0);
  EXPECT_EQ(reaps(), std::vector<std::string>{"/c"});
}

// A second LeaderDuties over the same state and log, with its own reaper settings.
class ReaperSettingsTest : public LeaderDutiesTest {
 protected:
  void SetUp() override {
    apply(create_session_txn(kSession));
    log.set_leader(1);
  }
  // An empty container that once had a child: a candidate at every check.
  void used_container(const std::string& path) {
    apply(request_txn(kSession, op::kCreateContainer, create_request(path, "", 4)));
    apply(create_txn(kSession, path + "/x"));
    apply(delete_txn(kSession, path + "/x"));
  }
  LeaderDuties with(int64_t interval_ms, int32_t per_minute, int64_t never_used_ms = 0) {
    DutyOptions o = options(true);
    o.container_check_interval_ms = interval_ms;
    o.container_max_per_minute = per_minute;
    o.container_max_never_used_ms = never_used_ms;
    return LeaderDuties(o, sm, log, router);
  }
};

TEST_F(ReaperSettingsTest, MaxPerMinuteSpacesTheRemovalsTheFirstAtOnce) {
  for (const char* p : {"/a", "/b", "/c", "/d"}) used_container(p);
  LeaderDuties d = with(600000, 2);  // one removal every 30 s
  d.tick(kT0, clock.wall_ms());
  EXPECT_EQ(reaps(), std::vector<std::string>{"/a"});
  d.tick(kT0 + 29999, clock.wall_ms());
  EXPECT_EQ(reaps().size(), 1u);
  d.tick(kT0 + 30000, clock.wall_ms());
  EXPECT_EQ(reaps(), (std::vector<std::string>{"/a", "/b"}));
  // A late tick catches up on what the rate allowed meanwhile, no more.
  d.tick(kT0 + 90000, clock.wall_ms());
  EXPECT_EQ(reaps(), (std::vector<std::string>{"/a", "/b", "/c", "/d"}));
}

TEST_F(ReaperSettingsTest, TheDefaultRateProposesManyPerTickButNotAllAtOnce) {
  for (int i = 0; i < 50; ++i) used_container("/n" + std::to_string(100 + i));
  LeaderDuties d = with(60000, 10000);  // one every 6 ms
  d.tick(kT0, clock.wall_ms());
  EXPECT_EQ(reaps().size(), 1u);
  d.tick(kT0 + 60, clock.wall_ms());
  EXPECT_EQ(reaps().size(), 11u);
  d.tick(kT0 + 1000, clock.wall_ms());
  EXPECT_EQ(reaps().size(), 50u);
}

TEST_F(ReaperSettingsTest, AShortIntervalFindsNewCandidatesSoon) {
  LeaderDuties d = with(100, 10000);
  d.tick(kT0, clock.wall_ms());
  used_container("/c");
  d.tick(kT0 + 99, clock.wall_ms());
  EXPECT_TRUE(reaps().empty());
  d.tick(kT0 + 100, clock.wall_ms());
  EXPECT_EQ(reaps(), std::vector<std::string>{"/c"});
}

TEST_F(ReaperSettingsTest, MaxNeverUsedIntervalRemovesAContainerThatNeverHadAChild) {
  // Created at wall time 1000 (request_txn's stamp); the clock reads ~1.7e12 ms.
  apply(request_txn(kSession, op::kCreateContainer, create_request("/never", "", 4)));
  LeaderDuties keep = with(60000, 10000);
  keep.tick(kT0, clock.wall_ms());
  EXPECT_TRUE(reaps().empty());  // 0: kept for ever, as ZooKeeper's default
  LeaderDuties old = with(60000, 10000, clock.wall_ms() - 1000 - 1);
  old.tick(kT0, clock.wall_ms());
  EXPECT_EQ(reaps(), std::vector<std::string>{"/never"});
  LeaderDuties young = with(60000, 10000, clock.wall_ms() - 1000);  // not yet older than that
  young.tick(kT0, clock.wall_ms());
  EXPECT_EQ(reaps().size(), 1u);
}

TEST_F(ReaperSettingsTest, ALeaderChangeDropsTheQueueAndTheNextLeaderFindsItAgain) {
  for (const char* p : {"/a", "/b"}) used_container(p);
  LeaderDuties d = with(60000, 1);  // one a minute
  d.tick(kT0, clock.wall_ms());
  EXPECT_EQ(reaps(), std::vector<std::string>{"/a"});
  log.set_leader(2);
  d.leader_changed(false, kT0 + 1000);
  d.tick(kT0 + 120000, clock.wall_ms());
  EXPECT_EQ(reaps().size(), 1u);  // a follower proposes nothing
  log.set_leader(1);
  d.leader_changed(true, kT0 + 130000);
  d.tick(kT0 + 130000, clock.wall_ms());
  EXPECT_EQ(reaps().size(), 1u);  // a new leader's first check is one interval away
  d.tick(kT0 + 189999, clock.wall_ms());
  EXPECT_EQ(reaps().size(), 1u);
  d.tick(kT0 + 190000, clock.wall_ms());
  // Both found again (the first removal never applied here); the first goes at once.
  EXPECT_EQ(reaps(), (std::vector<std::string>{"/a", "/a"}));
  d.tick(kT0 + 250000, clock.wall_ms());
  EXPECT_EQ(reaps(), (std::vector<std::string>{"/a", "/a", "/b"}));
}

// ---------------------------------------------------------------- membership

class MembershipDutiesTest : public LeaderDutiesTest {
 protected:
  MembershipDutiesTest() : LeaderDutiesTest(/*self=*/1, /*standalone=*/false) {}

  void SetUp() override {
    sm.mutable_tree().set_config_data(membership_text({peer(1), peer(2)}, 0));
    apply(create_session_txn(kSession));
    log.set_leader(1);
    log.set_membership(MembershipView{{1, 2}, {}});
  }
  using C = FakeReplicatedLog::Change;
};

TEST_F(MembershipDutiesTest, TheBootstrapConfigChangesNothing) {
  tick(kT0);
  EXPECT_TRUE(log.membership_changes().empty());
}

TEST_F(MembershipDutiesTest, AReconfigIsWalkedOneChangePerTickAddLearnerThenPromoteThenRemove) {
  reconfig({peer(1), peer(3)});
  tick(kT0);
  ASSERT_EQ(log.membership_changes(), (std::vector<C>{{MembershipChange::kAddLearner, 3}}));
  ASSERT_FALSE(log.added_peers().empty());
  EXPECT_EQ(log.added_peers().back().id, 3u);
  EXPECT_EQ(log.added_peers().back().host, "127.0.0.1");
  EXPECT_EQ(log.added_peers().back().port, 2890);

  log.set_membership(MembershipView{{1, 2}, {3}});
  tick(kT0 + 1000);
  ASSERT_EQ(log.membership_changes().size(), 2u);
  EXPECT_EQ(log.membership_changes()[1], (C{MembershipChange::kPromote, 3}));

  log.set_membership(MembershipView{{1, 2, 3}, {}});
  tick(kT0 + 2000);
  ASSERT_EQ(log.membership_changes().size(), 3u);
  EXPECT_EQ(log.membership_changes()[2], (C{MembershipChange::kRemove, 2}));

  log.set_membership(MembershipView{{1, 3}, {}});
  tick(kT0 + 3000);
  EXPECT_EQ(log.membership_changes().size(), 3u);  // done
}

TEST_F(MembershipDutiesTest, AChangeConsensusDroppedIsRetriedNextTick) {
  reconfig({peer(1), peer(2), peer(3)});
  tick(kT0);
  tick(kT0 + 1000);  // membership unchanged: the AddLearner did not happen
  EXPECT_EQ(log.membership_changes(),
            (std::vector<C>{{MembershipChange::kAddLearner, 3}, {MembershipChange::kAddLearner, 3}}));
}

TEST_F(MembershipDutiesTest, AnObserverStaysALearner) {
  reconfig({peer(1), peer(2), peer(3, PeerRole::kObserver)});
  log.set_membership(MembershipView{{1, 2}, {3}});
  tick(kT0);
  EXPECT_TRUE(log.membership_changes().empty());
}

TEST_F(MembershipDutiesTest, TheLeaderRemovesItselfLast) {
  log.set_membership(MembershipView{{1, 2, 3}, {}});
  reconfig({peer(2), peer(3)});
  log.set_membership(MembershipView{{1, 2, 3, 4}, {}});  // 4 is named nowhere
  tick(kT0);
  ASSERT_EQ(log.membership_changes(), (std::vector<C>{{MembershipChange::kRemove, 4}}));
  log.set_membership(MembershipView{{1, 2, 3}, {}});
  tick(kT0 + 1000);
  ASSERT_EQ(log.membership_changes().size(), 2u);
  EXPECT_EQ(log.membership_changes()[1], (C{MembershipChange::kRemove, 1}));
}

TEST_F(MembershipDutiesTest, AFollowerLeavesMembershipToTheLeader) {
  reconfig({peer(1), peer(3)});
  log.set_leader(2);
  tick(kT0);
  EXPECT_TRUE(log.membership_changes().empty());
}

TEST_F(MembershipDutiesTest, EveryServerLearnsThePeerAddressesTheConfigNames) {
  duties.learn_peers();
  ASSERT_EQ(log.added_peers().size(), 2u);
  EXPECT_EQ(log.added_peers()[0].id, 1u);
  EXPECT_EQ(log.added_peers()[1].id, 2u);
  EXPECT_EQ(log.added_peers()[1].port, 2889);
  EXPECT_TRUE(log.membership_changes().empty());
}

TEST_F(LeaderDutiesTest, AStandaloneServerReconcilesNoMembership) {
  sm.mutable_tree().set_config_data(membership_text({peer(1), peer(2)}, 0));
  apply(create_session_txn(kSession));
  reconfig({peer(1), peer(3)});
  log.set_leader(1);
  log.set_membership(MembershipView{{1}, {}});
  tick(kT0);
  EXPECT_TRUE(log.membership_changes().empty());
  EXPECT_TRUE(log.added_peers().empty());
}

}  // namespace
}  // namespace zkraft::server
