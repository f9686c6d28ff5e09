// WriteRouter: where a write goes (proposed by the leader, stamped with the leader's wall clock;
// forwarded unstamped by a follower), what is in flight, and syncs' read points.

#include <gtest/gtest.h>

#include "fake_replicated_log.h"
#include "server/clock.h"
#include "server/peer_message.h"
#include "server/write_router.h"

namespace zkraft::server {
namespace {

using testing::FakeReplicatedLog;

Txn client_write(int64_t session = 0x42, int32_t xid = 9) {
  Txn t;
  t.kind = TxnKind::kRequest;
  t.session_id = session;
  t.xid = xid;
  t.op = 5;
  t.time_ms = 12345;  // whatever the caller put there is overwritten
  t.request = "record";
  return t;
}

Txn decoded(const std::string& bytes) {
  auto t = decode_txn(bytes);
  EXPECT_TRUE(t.has_value());
  return t.value_or(Txn{});
}

std::string forwarded_txn(const FakeReplicatedLog::Sent& s) {
  auto m = decode_peer_message(s.payload);
  EXPECT_TRUE(m.has_value());
  EXPECT_TRUE(m && std::holds_alternative<ForwardedWrite>(*m));
  return m && std::holds_alternative<ForwardedWrite>(*m) ? std::get<ForwardedWrite>(*m).txn : "";
}

TEST(WriteRouter, OnTheLeaderASubmitProposesATxnStampedWithTheWallClockAndItsOrigin) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock(5'000, 1'700'000'000'000);
  WriteRouter router(log, clock);
  uint64_t rid = router.submit(client_write(), Waiter{3, 11});
  ASSERT_NE(rid, 0u);
  ASSERT_EQ(log.proposed().size(), 1u);
  EXPECT_TRUE(log.sent().empty());
  Txn t = decoded(log.proposed()[0]);
  EXPECT_EQ(t.time_ms, 1'700'000'000'000);  // wall, not monotonic
  EXPECT_EQ(t.origin_server, 1u);
  EXPECT_EQ(t.origin_request, rid);
  EXPECT_EQ(t.session_id, 0x42);
  EXPECT_EQ(t.xid, 9);
  EXPECT_EQ(t.request, "record");
  EXPECT_TRUE(router.waiting(rid));
  EXPECT_EQ(router.in_flight(), 1u);
}

TEST(WriteRouter, OnAFollowerASubmitIsForwardedUnstampedToTheLeaderAndProposesNothing) {
  FakeReplicatedLog log(2);
  log.set_leader(3);
  ManualClock clock;
  WriteRouter router(log, clock);
  uint64_t rid = router.submit(client_write(), Waiter{3, 11});
  ASSERT_NE(rid, 0u);
  EXPECT_TRUE(log.proposed().empty());
  ASSERT_EQ(log.sent().size(), 1u);
  EXPECT_EQ(log.sent()[0].to, 3u);
  Txn t = decoded(forwarded_txn(log.sent()[0]));
  EXPECT_EQ(t.time_ms, 0);  // the leader stamps it
  EXPECT_EQ(t.origin_server, 2u);
  EXPECT_EQ(t.origin_request, rid);
  EXPECT_TRUE(router.waiting(rid));
}

TEST(WriteRouter, WithoutALeaderNothingIsSentAndNothingWaits) {
  FakeReplicatedLog log(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  EXPECT_EQ(router.submit(client_write(), Waiter{1, 1}), 0u);
  EXPECT_EQ(router.request_read_point(Waiter{1, 2}), 0u);
  EXPECT_TRUE(log.proposed().empty());
  EXPECT_TRUE(log.sent().empty());
  EXPECT_TRUE(log.pending_reads().empty());
  EXPECT_EQ(router.in_flight(), 0u);
}

TEST(WriteRouter, TheLeaderStampsAForwardedWriteWithItsOwnWallClock) {
  // The follower's wall clock is hours off; only the leader's counts.
  FakeReplicatedLog follower_log(2), leader_log(1);
  follower_log.set_leader(1);
  leader_log.set_leader(1);
  ManualClock follower_clock(1'000, 1'700'000'000'000 + 3 * 3'600'000);
  ManualClock leader_clock(9'000, 1'700'000'000'000);
  WriteRouter follower(follower_log, follower_clock), leader(leader_log, leader_clock);
  uint64_t rid = follower.submit(client_write(), Waiter{5, 1});
  ASSERT_EQ(follower_log.sent().size(), 1u);
  leader.on_forwarded(forwarded_txn(follower_log.sent()[0]));
  ASSERT_EQ(leader_log.proposed().size(), 1u);
  Txn t = decoded(leader_log.proposed()[0]);
  EXPECT_EQ(t.time_ms, leader_clock.wall_ms());
  // Its origin stays the follower's, so the follower answers its client when it applies it.
  EXPECT_EQ(t.origin_server, 2u);
  EXPECT_EQ(t.origin_request, rid);
  EXPECT_FALSE(leader.waiting(rid));  // the leader does not wait for other servers' writes
}

TEST(WriteRouter, AForwardedWriteReachingAFollowerIsDropped) {
  FakeReplicatedLog log(2);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  router.on_forwarded(encode_txn(client_write()));
  EXPECT_TRUE(log.proposed().empty());
  EXPECT_TRUE(log.sent().empty());
}

TEST(WriteRouter, AForwardedPayloadThatIsNotATxnIsNotProposed) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  router.on_forwarded("definitely not a txn, but long enough to hold a time");
  EXPECT_TRUE(log.proposed().empty());
}

TEST(WriteRouter, ALeadersOwnWriteIsStampedAndWaitsForNoOne) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  Txn t;
  t.kind = TxnKind::kCloseSession;
  t.session_id = 5;
  t.origin_request = 99;  // not the caller's to choose
  EXPECT_TRUE(router.propose_own(t));
  ASSERT_EQ(log.proposed().size(), 1u);
  Txn p = decoded(log.proposed()[0]);
  EXPECT_EQ(p.origin_request, 0u);
  EXPECT_EQ(p.origin_server, 1u);
  EXPECT_EQ(p.time_ms, clock.wall_ms());
  EXPECT_EQ(router.in_flight(), 0u);

  FakeReplicatedLog follower_log(2);
  follower_log.set_leader(1);
  WriteRouter follower(follower_log, clock);
  EXPECT_FALSE(follower.propose_own(t));
  EXPECT_TRUE(follower_log.proposed().empty());
  EXPECT_TRUE(follower_log.sent().empty());
}

TEST(WriteRouter, TakeHandsTheWaiterBackOnce) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  uint64_t a = router.submit(client_write(), Waiter{4, 7});
  uint64_t b = router.submit(client_write(), Waiter{5, 8});
  EXPECT_NE(a, b);
  auto w = router.take(a);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->conn, 4u);
  EXPECT_EQ(w->seq, 7u);
  EXPECT_FALSE(router.take(a).has_value());
  EXPECT_FALSE(router.waiting(a));
  EXPECT_TRUE(router.waiting(b));
  EXPECT_FALSE(router.take(12345).has_value());
}

TEST(WriteRouter, FailAllHandsBackEveryWaiterIncludingSyncs) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  router.submit(client_write(), Waiter{1, 1});
  router.submit(client_write(), Waiter{2, 1});
  uint64_t sync = router.request_read_point(Waiter{3, 1});
  uint64_t failed = router.request_read_point(Waiter{3, 2});
  router.on_read_index(sync, 50, true);
  router.on_read_index(failed, 0, false);
  auto all = router.fail_all();
  EXPECT_EQ(all.size(), 4u);
  EXPECT_EQ(router.in_flight(), 0u);
  EXPECT_EQ(router.pending_syncs(), 0u);
  EXPECT_FALSE(router.has_syncs_to_release());
  EXPECT_TRUE(router.release(1000).empty());
}

TEST(WriteRouter, ASyncIsReleasedOnlyOnceTheLocalApplyReachesItsReadPoint) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  uint64_t rid = router.request_read_point(Waiter{6, 3});
  ASSERT_NE(rid, 0u);
  EXPECT_EQ(log.pending_reads(), std::vector<uint64_t>{rid});
  EXPECT_FALSE(router.has_syncs_to_release());
  router.on_read_index(rid, 10, true);
  EXPECT_EQ(router.pending_syncs(), 1u);
  EXPECT_TRUE(router.release(9).empty());
  auto out = router.release(10);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request_id, rid);
  EXPECT_TRUE(out[0].ok);
  EXPECT_EQ(router.pending_syncs(), 0u);
  EXPECT_TRUE(router.release(11).empty());  // once
  EXPECT_TRUE(router.take(rid).has_value());  // the slot is still the caller's to take
}

TEST(WriteRouter, ReadPointsAreReleasedInIndexOrder) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  uint64_t late = router.request_read_point(Waiter{1, 1});
  uint64_t early = router.request_read_point(Waiter{1, 2});
  router.on_read_index(late, 20, true);
  router.on_read_index(early, 15, true);
  auto first = router.release(17);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].request_id, early);
  auto second = router.release(25);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].request_id, late);
}

TEST(WriteRouter, AFailedReadPointIsReleasedAtOnceAsNotOk) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  uint64_t rid = router.request_read_point(Waiter{6, 3});
  router.on_read_index(rid, 0, false);
  EXPECT_TRUE(router.has_syncs_to_release());
  EXPECT_EQ(router.pending_syncs(), 0u);
  auto out = router.release(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request_id, rid);
  EXPECT_FALSE(out[0].ok);
  EXPECT_FALSE(router.has_syncs_to_release());
}

TEST(WriteRouter, AReadPointNobodyWaitsForIsIgnored) {
  FakeReplicatedLog log(1);
  log.set_leader(1);
  ManualClock clock;
  WriteRouter router(log, clock);
  router.on_read_index(777, 5, true);
  router.on_read_index(778, 0, false);
  EXPECT_FALSE(router.has_syncs_to_release());
  EXPECT_TRUE(router.release(100).empty());
}

// reconfig carries the leader's view of who is in sync (ZooKeeper's isQuorumSynced), taken
// where it is proposed: on the leader for its own clients and for forwarded ones.
TEST(WriteRouter, AReconfigIsStampedWithTheServersTheLeaderSeesInSync) {
  FakeReplicatedLog follower_log(2), leader_log(1);
  follower_log.set_leader(1);
  leader_log.set_leader(1);
  ReplicationStatus st;
  st.mode = "leader";
  st.synced_peers = {3, 4};
  leader_log.set_replication_status(st);
  follower_log.set_replication_status(st);  // a follower's view never counts
  ManualClock clock(1'000, 1'700'000'000'000);
  WriteRouter follower(follower_log, clock), leader(leader_log, clock);
  Txn reconfig = client_write();
  reconfig.op = 16;

  leader.submit(reconfig, Waiter{1, 1});
  ASSERT_EQ(leader_log.proposed().size(), 1u);
  EXPECT_EQ(decoded(leader_log.proposed()[0]).synced, (std::vector<uint64_t>{3, 4, 1}));

  follower.submit(reconfig, Waiter{2, 1});
  ASSERT_EQ(follower_log.sent().size(), 1u);
  EXPECT_TRUE(decoded(forwarded_txn(follower_log.sent()[0])).synced.empty());
  leader.on_forwarded(forwarded_txn(follower_log.sent()[0]));
  ASSERT_EQ(leader_log.proposed().size(), 2u);
  Txn t = decoded(leader_log.proposed()[1]);
  EXPECT_EQ(t.synced, (std::vector<uint64_t>{3, 4, 1}));
  EXPECT_EQ(t.time_ms, clock.wall_ms());
  EXPECT_EQ(t.origin_server, 2u);
  EXPECT_EQ(t.request, "record");

  // Figures from before this server led: not stamped, not checked.
  st.mode = "follower";
  leader_log.set_replication_status(st);
  leader.submit(reconfig, Waiter{1, 3});
  EXPECT_TRUE(decoded(leader_log.proposed().back()).synced.empty());
  st.mode = "leader";
  leader_log.set_replication_status(st);

  // Other writes carry nothing of it.
  leader.submit(client_write(), Waiter{1, 2});
  const std::string& last = leader_log.proposed().back();
  EXPECT_TRUE(decoded(last).synced.empty());
  EXPECT_EQ(last, [&] {
    Txn plain = client_write();
    plain.time_ms = clock.wall_ms();
    plain.origin_server = 1;
    plain.origin_request = decoded(last).origin_request;
    return encode_txn(plain);
  }());
}

}  // namespace
}  // namespace zkraft::server
