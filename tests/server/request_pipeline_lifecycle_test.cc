// RequestPipeline, lifecycle: leader changes, closeSession, sync, idle connections, expiry, flow
// control, malformed input, auth, the four-letter words and status (fixture: pipeline_fixture.h).

#include <gtest/gtest.h>

#include "pipeline_fixture.h"

namespace zkraft::server {
namespace {

using namespace testing;

TEST_F(PipelineTest, ALeaderChangeWithWritesInFlightClosesThoseConnectionsOnly) {
  start();
  handshake(1);
  handshake(2);
  request(1, 1, op::kCreate, create_request("/x", ""));
  io.clear();
  log.set_leader(3);
  EXPECT_TRUE(io.closed(1));
  EXPECT_FALSE(io.gone(2));
  // The entry may still commit; nobody is answered for it.
  log.commit_all();
  EXPECT_TRUE(io.sent(1).empty());
  EXPECT_TRUE(pipeline->state().tree().contains("/x"));
}

// The expiry this server proposed as leader did not commit before it stepped down: the session
// still exists, and its client may reattach here (not be told "expired").
TEST_F(PipelineTest, AfterAStepDownASessionWhoseExpiryNeverCommittedMayReattach) {
  start();
  int64_t s = handshake(1, 4000);
  std::string password = proposed(0).password;
  clock.advance(6001);
  pipeline->tick();  // closes the idle connection and proposes the expiry
  ASSERT_TRUE(io.closed(1));
  log.set_leader(2);  // before that entry commits: it may never
  ASSERT_TRUE(pipeline->state().sessions().contains(s));
  deliver(opened(2));
  deliver(connect_message(2, connect_body(4000, s, password)));
  ASSERT_EQ(frames(2), 1u);
  EXPECT_EQ(RecordingClientIo::connect_response(io.sent(2)[0]).session_id, s);
}

TEST_F(PipelineTest, ALeaderChangeDuringAHandshakeClosesThatConnection) {
  start();
  deliver(opened(1));
  deliver(connect_message(1, connect_body()));
  log.set_leader(0);
  EXPECT_TRUE(io.closed(1));
}

// ---------------------------------------------------------------- closeSession, sync

TEST_F(PipelineTest, CloseSessionIsAnsweredThenTheConnectionClosesAfterFlush) {
  start();
  int64_t s = handshake(1);
  deliver(header_message(1, 9, op::kCloseSession));
  Txn t = proposed(1);
  EXPECT_EQ(t.kind, TxnKind::kCloseSession);
  EXPECT_EQ(t.session_id, s);
  EXPECT_FALSE(t.expired);
  EXPECT_FALSE(io.gone(1));
  log.commit_all();
  ASSERT_EQ(frames(1), 2u);
  auto r = frame(1, 1, op::kCloseSession);
  EXPECT_EQ(r.header.xid, 9);
  EXPECT_EQ(r.header.err, err::kOk);
  EXPECT_GT(io.position(Kind::kCloseAfterFlush, 1), io.position(Kind::kSend, 1, 1));
  EXPECT_FALSE(io.closed(1));  // not the abrupt close
  EXPECT_FALSE(pipeline->state().sessions().contains(s));
}

TEST_F(PipelineTest, NothingMoreIsReadFromAClosingConnection) {
  start();
  handshake(1);
  create(1, 1, "/a");
  deliver(header_message(1, 9, op::kCloseSession));
  log.commit_all();
  const size_t n = frames(1);
  request(1, 10, op::kGetData, jute::GetDataRequest{"/a", false});
  EXPECT_EQ(frames(1), n);
}

TEST_F(PipelineTest, SyncIsAnsweredOnceItsReadPointIsApplied) {
  start();
  handshake(1);
  create(1, 1, "/a");
  const size_t before = frames(1);
  request(1, 2, op::kSetData, jute::SetDataRequest{"/a", {"v", false}, -1});  // not committed yet
  request(1, 3, op::kSync, jute::SyncRequest{"/a"});
  EXPECT_EQ(log.pending_reads().size(), 1u);
  log.answer_reads(true);  // the read point is the end of the log: it includes the setData
  EXPECT_EQ(frames(1), before);
  log.commit_all();
  ASSERT_EQ(frames(1), before + 2);
  EXPECT_EQ(frame(1, before, op::kSetData).header.xid, 2);
  auto sync = frame(1, before + 1, op::kSync);
  EXPECT_EQ(sync.header.xid, 3);
  EXPECT_EQ(std::get<jute::SyncResponse>(sync.body).path, "/a");
}

TEST_F(PipelineTest, ASyncWaitsForEveryEntryBeforeItsReadPointNotOnlyItsOwnSessions) {
  start();
  handshake(1);
  handshake(2);
  create(2, 1, "/b");
  request(2, 2, op::kSetData, jute::SetDataRequest{"/b", {"v", false}, -1});  // another client's
  request(1, 1, op::kSync, jute::SyncRequest{"/b"});
  log.answer_reads(true);  // the read point includes connection 2's write
  EXPECT_EQ(frames(1), 1u);
  log.commit_next();
  ASSERT_EQ(frames(1), 2u);
  auto sync = frame(1, 1, op::kSync);
  EXPECT_EQ(sync.header.zxid, static_cast<int64_t>(log.commit_index()));
  request(1, 2, op::kGetData, jute::GetDataRequest{"/b", false});
  EXPECT_EQ(std::get<jute::GetDataResponse>(frame(1, 2, op::kGetData).body).data.bytes, "v");
}

TEST_F(PipelineTest, SyncWithNothingPendingIsAnsweredWithTheReadPoint) {
  start();
  handshake(1);
  request(1, 2, op::kSync, jute::SyncRequest{"/"});
  EXPECT_EQ(frames(1), 1u);
  log.answer_reads(true);
  ASSERT_EQ(frames(1), 2u);
  EXPECT_EQ(frame(1, 1, op::kSync).header.err, err::kOk);
}

TEST_F(PipelineTest, ASyncWithoutAReadPointLosesTheConnection) {
  start();
  handshake(1);
  request(1, 2, op::kSync, jute::SyncRequest{"/"});
  log.answer_reads(false);
  EXPECT_EQ(frames(1), 1u);
  EXPECT_TRUE(io.closed_after_flush(1));
}

// ---------------------------------------------------------------- idle clients, ticks

TEST_F(PipelineTest, AClientSilentForLongerThanItsTimeoutIsClosedByTheMonotonicClockOnly) {
  start();
  handshake(1, 4000);
  clock.step_wall(10 * 3'600'000);  // an NTP jump
  pipeline->tick();
  EXPECT_FALSE(io.gone(1));
  clock.advance(3000);
  deliver(header_message(1, jute::xid::kPing, op::kPing, clock.monotonic_ms()));
  clock.advance(3000);
  pipeline->tick();
  EXPECT_FALSE(io.gone(1));  // the ping counted
  clock.advance(1001);
  pipeline->tick();
  EXPECT_TRUE(io.closed(1));
  EXPECT_TRUE(io.all_flushed());
}

TEST_F(PipelineTest, TheLeaderProposesTheExpiryOfASessionNobodyKeepsAlive) {
  start();
  int64_t s = handshake(1, 4000);
  int64_t other = handshake(2, 40000);
  clock.advance(6001);  // past round_up(commit + 4000)
  pipeline->tick();
  std::vector<int64_t> expired;
  for (size_t i = 0; i < log.proposed().size(); ++i) {
    Txn t = proposed(i);
    if (t.kind == TxnKind::kCloseSession && t.expired) expired.push_back(t.session_id);
  }
  EXPECT_EQ(expired, std::vector<int64_t>{s});
  log.commit_all();
  EXPECT_FALSE(pipeline->state().sessions().contains(s));
  EXPECT_TRUE(pipeline->state().sessions().contains(other));
  EXPECT_FALSE(io.gone(2));
}

TEST_F(PipelineTest, ACommittedExpiryClosesTheConnectionHoldingTheSession) {
  start();
  int64_t s = handshake(1);
  int64_t other = handshake(2);
  Txn close = close_session_txn(s, /*expired=*/true);
  close.origin_server = 1;  // proposed by a leader's duties: no request waits for it
  log.replicate(encode_txn(close));
  log.commit_all();
  EXPECT_TRUE(io.closed(1));
  EXPECT_FALSE(io.gone(2));
  EXPECT_EQ(pipeline->clients().connection_of(s), 0u);
  EXPECT_EQ(pipeline->clients().connection_of(other), 2u);
}

// Half a tick, but at most a twelfth of the smallest session timeout (the quorum-contact bound
// counts on it: serving_gate.h).
TEST_F(PipelineTest, TickIntervalIsHalfATickAtMostATwelfthOfTheSmallestSessionTimeout) {
  config.min_session_timeout_ms = 30000;
  start();
  EXPECT_EQ(pipeline->tick_interval_ms(), 1000);
}

TEST_F(PipelineTest, TickIntervalWithDefaultSessionTimeoutsIsATwelfthOfTwoTicks) {
  start();
  EXPECT_EQ(pipeline->tick_interval_ms(), 2 * 2000 / 12);
}

// ---------------------------------------------------------------- flow control

TEST_F(PipelineTest, AConnectionOverItsOutstandingLimitStopsReadingUntilItIsBackUnder) {
  config.max_outstanding_per_connection = 2;
  start();
  handshake(1);
  create(1, 1, "/a");
  request(1, 2, op::kSetData, jute::SetDataRequest{"/a", {"1", false}, -1});
  EXPECT_TRUE(io.reading_changes(1).empty());
  request(1, 3, op::kSetData, jute::SetDataRequest{"/a", {"2", false}, -1});
  EXPECT_EQ(io.reading_changes(1), std::vector<bool>{false});
  log.commit_all();
  EXPECT_EQ(io.reading_changes(1), (std::vector<bool>{false, true}));
}

TEST_F(PipelineTest, AConnectionPausedByTheGlobalLimitResumesWhenTheServerDrains) {
  config.global_outstanding_limit = 2;
  start();
  handshake(1);
  handshake(2);
  create(1, 1, "/a");
  request(1, 2, op::kSetData, jute::SetDataRequest{"/a", {"1", false}, -1});
  request(1, 3, op::kSetData, jute::SetDataRequest{"/a", {"2", false}, -1});
  EXPECT_EQ(io.reading_changes(1), std::vector<bool>{false});
  // Connection 2 sends a read while the server is full.
  request(2, 1, op::kGetData, jute::GetDataRequest{"/a", false});
  log.commit_all();
  EXPECT_EQ(io.reading_changes(1), (std::vector<bool>{false, true}));
  // Whatever flow control told connection 2, it must be reading again now that nothing is
  // outstanding: a paused connection with nothing queued is never looked at again.
  auto two = io.reading_changes(2);
  EXPECT_TRUE(two.empty() || two.back()) << "connection 2 left paused";
}

TEST_F(PipelineTest, AClosedConnectionNoLongerCountsTowardsTheGlobalLimit) {
  config.global_outstanding_limit = 2;
  start();
  handshake(1);
  handshake(2);
  create(1, 1, "/a");
  request(1, 2, op::kSetData, jute::SetDataRequest{"/a", {"1", false}, -1});
  deliver(closed(1));
  log.commit_all();
  request(2, 1, op::kSetData, jute::SetDataRequest{"/a", {"2", false}, -1});
  EXPECT_TRUE(io.reading_changes(2).empty());  // 1 outstanding of 2
}

// ---------------------------------------------------------------- other requests

TEST_F(PipelineTest, AnUnknownOpIsAnsweredUnimplementedAndTheConnectionCloses) {
  start();
  handshake(1);
  deliver(header_message(1, 5, 999));
  ASSERT_EQ(frames(1), 2u);
  EXPECT_EQ(frame(1, 1, 999).header.err, err::kUnimplemented);
  EXPECT_TRUE(io.closed_after_flush(1));
}

TEST_F(PipelineTest, AMalformedReadIsAMarshallingErrorAndTheConnectionCloses) {
  start();
  handshake(1);
  std::string body = request_body(5, op::kGetData, jute::GetDataRequest{"/abc", false});
  deliver(decode_request_frame(1, body.substr(0, body.size() - 3), jute::Limits{}));
  ASSERT_EQ(frames(1), 2u);
  EXPECT_EQ(frame(1, 1, op::kGetData).header.err, err::kMarshallingError);
  EXPECT_TRUE(io.closed_after_flush(1));
}

TEST_F(PipelineTest, ADigestAuthAddsTheIdentityForLaterRequests) {
  start();
  handshake(1);
  request(1, jute::xid::kAuth, op::kAuth, auth_packet("digest", "alice:secret"));
  auto auth = frame(1, 1, op::kAuth);
  EXPECT_EQ(auth.header.xid, jute::xid::kAuth);
  EXPECT_EQ(auth.header.err, err::kOk);
  request(1, 2, op::kWhoAmI, jute::EmptyRequest{});
  auto who = frame(1, 2, op::kWhoAmI);
  const auto& info = std::get<jute::WhoAmIResponse>(who.body).client_info;
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info[1], (jute::ClientInfo{"digest", "alice"}));
}

TEST_F(PipelineTest, DigestTakesAnyCredentialAndIpAddsThePeerAddressOnceAsZooKeeperDoes) {
  config.super_digest = digest_id("root:pw");
  start();
  handshake(1);
  request(1, jute::xid::kAuth, op::kAuth, auth_packet("digest", ""));
  request(1, jute::xid::kAuth, op::kAuth, auth_packet("digest", "nocolon"));
  request(1, jute::xid::kAuth, op::kAuth, auth_packet("ip", "ignored"));
  request(1, jute::xid::kAuth, op::kAuth, auth_packet("digest", "root:pw"));
  for (size_t i = 1; i <= 4; ++i) EXPECT_EQ(frame(1, i, op::kAuth).header.err, err::kOk) << i;
  EXPECT_FALSE(io.closed_after_flush(1));
  request(1, 2, op::kWhoAmI, jute::EmptyRequest{});
  const auto who = frame(1, 5, op::kWhoAmI);
  const auto& info = std::get<jute::WhoAmIResponse>(who.body).client_info;
  // ip (once: the connection's own), the two digests (user part only), super, root's digest.
  std::vector<jute::ClientInfo> want{{"ip", "127.0.0.1"}, {"digest", ""}, {"digest", "nocolon"},
                                     {"super", ""}, {"digest", "root"}};
  EXPECT_EQ(info, want);
}

TEST_F(PipelineTest, AnAuthWithAnUnknownSchemeFailsAndCloses) {
  start();
  handshake(1);
  request(1, jute::xid::kAuth, op::kAuth, auth_packet("kerberos", "x"));
  EXPECT_EQ(frame(1, 1, op::kAuth).header.err, err::kAuthFailed);
  EXPECT_TRUE(io.closed_after_flush(1));
}

TEST_F(PipelineTest, AClosedConnectionIsForgottenAndItsPendingWriteAnswersNobody) {
  start();
  int64_t s = handshake(1);
  request(1, 1, op::kCreate, create_request("/x", ""));
  deliver(closed(1));
  EXPECT_EQ(pipeline->clients().size(), 0u);
  io.clear();
  log.commit_all();
  EXPECT_TRUE(io.calls().empty());
  EXPECT_TRUE(pipeline->state().sessions().contains(s));  // the session outlives its connection
}

// ---------------------------------------------------------------- four-letter words

TEST_F(PipelineTest, RuokIsAnsweredImokAndTheConnectionClosesAfterFlush) {
  start();
  deliver(opened(5));
  deliver(four_letter_word(5, "ruok"));
  EXPECT_EQ(io.sent(5), std::vector<std::string>{"imok"});
  EXPECT_GT(io.position(Kind::kCloseAfterFlush, 5), io.position(Kind::kSend, 5));
  EXPECT_FALSE(io.closed(5));
}

TEST_F(PipelineTest, AWordOutsideTheWhitelistIsRefusedWithZooKeepersText) {
  config.four_letter_words = {"srvr"};
  start();
  deliver(opened(5));
  deliver(four_letter_word(5, "ruok"));
  ASSERT_EQ(io.sent(5).size(), 1u);
  EXPECT_EQ(io.sent(5)[0], "ruok is not executed because it is not in the whitelist.\n");
  EXPECT_TRUE(io.closed_after_flush(5));
}

TEST_F(PipelineTest, StatusReflectsConnectionsSessionsAndTheLogsFigures) {
  start();
  int64_t s = handshake(1);
  ReplicationStatus r;
  r.mode = "leader";
  r.quorum_size = 2;
  log.set_replication_status(r);
  log.set_fsync_count(9);
  clock.advance(5000);
  ServerStatus st = pipeline->status();
  EXPECT_TRUE(st.serving);
  EXPECT_EQ(st.mode, "leader");
  EXPECT_EQ(st.num_alive_connections, 1);
  ASSERT_EQ(st.connections.size(), 1u);
  EXPECT_EQ(st.connections[0].session_id, s);
  EXPECT_EQ(st.global_sessions, 1);
  EXPECT_EQ(st.uptime_ms, 5000);
  std::map<std::string, std::string> m(st.extra_metrics.begin(), st.extra_metrics.end());
  EXPECT_EQ(m["fsync_count"], "9");
  EXPECT_EQ(m["quorum_size"], "2");
}

// ---------------------------------------------------------------- slow-request log

TEST_F(PipelineTest, AWriteSlowerThanTheThresholdIsCountedAFastOneIsNot) {
  config.slow_request_threshold_ms = 100;
  start();
  handshake(1);
  request(1, 1, op::kCreate, create_request("/fast"));
  clock.advance(99);
  log.commit_all();
  EXPECT_EQ(pipeline->status().slow_requests, 0);
  request(1, 2, op::kCreate, create_request("/slow"));
  clock.advance(500);
  log.commit_all();
  EXPECT_EQ(frame(1, 2, op::kCreate).header.err, err::kOk);
  EXPECT_EQ(pipeline->status().slow_requests, 1);
  // The 500 ms went by in consensus (proposed -> applied), none waiting behind others.
  EXPECT_NE(pipeline->stats().last_slow_request.find(
                "xid 2 create /slow took 500 ms: 0 ms to the state thread, 500 ms in consensus, "
                "0 ms waiting to be sent"),
            std::string::npos)
      << pipeline->stats().last_slow_request;
}

}  // namespace
}  // namespace zkraft::server
