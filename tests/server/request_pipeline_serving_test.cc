// RequestPipeline behind the ServingGate: a server past the quorum-contact bound closes its
// clients and refuses new ones; with read-only mode it then serves read-only clients only, on
// sessions of its own, and closes them when contact returns (ZooKeeper 3.9's
// ReadOnlyZooKeeperServer and ReadOnlyRequestProcessor). The fixture's tickTime is 2000, so the
// smallest session timeout is 4000 ms and the bound 1333 ms.

#include <gtest/gtest.h>

#include "tests/server/pipeline_fixture.h"

namespace zkraft::server::testing {
namespace {

constexpr int64_t kBound = 4000 / 3;

std::string read_only_connect_body(int64_t session = 0, std::string password = std::string(16, '\0')) {
  jute::ConnectRequest req;
  req.time_out = 30000;
  req.session_id = session;
  req.passwd = jute::Buffer{std::move(password), false};
  req.read_only = true;
  return record_bytes(req);
}

std::string srvr_mode(const std::string& srvr) {
  auto at = srvr.find("Mode: ");
  if (at == std::string::npos) return srvr.substr(0, srvr.find('\n'));
  return srvr.substr(at + 6, srvr.find('\n', at) - at - 6);
}

class ServingTest : public PipelineTest {
 protected:
  ServingTest() : PipelineTest(2) {}
  // A follower of server 1 with one client session on connection 1.
  void start_follower() {
    start(/*leader=*/1);
    deliver(opened(1));
    deliver(connect_message(1, connect_body()));
    ASSERT_EQ(log.sent().size(), 1u);  // the createSession went to the leader
    auto fw = decode_peer_message(log.sent()[0].payload);
    ASSERT_TRUE(fw.has_value());
    log.replicate(std::get<ForwardedWrite>(*fw).txn);
    log.commit_all();
    ASSERT_EQ(frames(1), 1u);
    session = RecordingClientIo::connect_response(io.sent(1)[0]).session_id;
    ASSERT_NE(session, 0);
  }
  std::string word(uint64_t conn, const std::string& w) {
    deliver(opened(conn));
    deliver(four_letter_word(conn, w));
    auto s = io.sent(conn);
    return s.empty() ? std::string() : s.back();
  }
  int64_t session = 0;
};

TEST_F(ServingTest, WithinTheBoundClientsAreServedAndPastItEveryOneIsClosed) {
  start_follower();
  log.set_contact_age(kBound);  // at the bound
  pipeline->tick();
  request(1, 2, op::kExists, jute::ExistsRequest{"/", false});
  EXPECT_FALSE(io.gone(1));
  EXPECT_EQ(frames(1), 2u);
  deliver(opened(7));  // a connection that has not asked for a session yet is left alone
  log.set_contact_age(kBound + 1);
  pipeline->tick();
  EXPECT_TRUE(io.closed(1));
  EXPECT_FALSE(io.gone(7));
  EXPECT_EQ(word(9, "srvr"), "This ZooKeeper instance is not currently serving requests\n");
  EXPECT_EQ(word(10, "isro"), "null");
}

// A restart: the entries committed before the stop are re-applied first. A sole voter leads
// (fresh contact) before they are, and must not answer from the state short of them.
TEST_F(ServingTest, NothingIsServedUntilTheStartUpReplayIsAppliedThenAtOnce) {
  for (int i = 0; i < 3; ++i) log.replicate("");  // no-ops, as far as the tree is concerned
  log.set_start_up_replay(3);
  start(/*leader=*/2);  // this server leads itself (PipelineTest(2)): in contact at once
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kCutOff);
  log.commit_next();
  log.commit_next();
  pipeline->tick();
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kCutOff);
  EXPECT_EQ(word(9, "srvr"), "This ZooKeeper instance is not currently serving requests\n");
  log.commit_next();  // the last one: the gate opens with its batch, not at the next tick
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kServing);
  EXPECT_EQ(srvr_mode(word(10, "srvr")), "standalone");  // the fixture sets no membership
}

TEST_F(ServingTest, ALeaderLearnedOpensTheGateAtOnceButALeaderLostWaitsForTheBound) {
  start(/*leader=*/0);  // nothing known yet: cut off, as at every start
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kCutOff);
  log.set_contact_age(kBound + 1);  // a leader heard of, but too long ago: stays closed
  log.set_leader(1);
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kCutOff);
  log.set_leader(0);
  log.set_contact_age(std::nullopt);  // fresh contact with the leader
  log.set_leader(1);
  // No tick and no client message since: the leader change itself opened the gate.
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kServing);
  // Losing the leader does not close it early: only the bound does, at a check.
  log.set_contact_age(kBound);
  log.set_leader(0);
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kServing);
  log.set_contact_age(kBound + 1);
  pipeline->tick();
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kCutOff);
}

TEST_F(ServingTest, ARequestArrivingPastTheBoundIsNotAnsweredEvenBeforeATick) {
  start_follower();
  log.set_contact_age(kBound + 1);
  request(1, 2, op::kGetData, jute::GetDataRequest{"/", false});
  deliver(header_message(1, -2, op::kPing));
  EXPECT_TRUE(io.closed(1));
  EXPECT_EQ(frames(1), 1u);  // only the handshake's answer
}

TEST_F(ServingTest, NewClientsAreRefusedUntilContactReturns) {
  start_follower();
  log.set_contact_age(ReplicatedLog::kNoQuorumContact);
  pipeline->tick();
  deliver(opened(2));
  deliver(connect_message(2, connect_body(30000, session, session::to_bytes(session::make_password(session, kSecret)))));
  EXPECT_TRUE(io.closed(2));
  EXPECT_EQ(frames(2), 0u);
  log.set_contact_age(0);
  pipeline->tick();
  deliver(opened(3));
  deliver(connect_message(3, connect_body(30000, session, session::to_bytes(session::make_password(session, kSecret)))));
  ASSERT_EQ(frames(3), 1u);
  EXPECT_EQ(RecordingClientIo::connect_response(io.sent(3)[0]).session_id, session);
  EXPECT_FALSE(io.gone(3));
}

TEST_F(ServingTest, WithoutReadOnlyModeAReadOnlyClientIsRefusedToo) {
  start_follower();
  log.set_contact_age(ReplicatedLog::kNoQuorumContact);
  clock.advance(60'000);
  pipeline->tick();
  deliver(opened(2));
  deliver(connect_message(2, read_only_connect_body()));
  EXPECT_TRUE(io.closed(2));
  EXPECT_EQ(frames(2), 0u);
}

class ReadOnlyTest : public ServingTest {
 protected:
  ReadOnlyTest() { config.read_only_mode = true; }
  void go_read_only() {
    start_follower();
    deliver(opened(4));
    request(1, 2, op::kCreate, create_request("/a", "seen"));
    auto fw = decode_peer_message(log.sent().back().payload);
    ASSERT_TRUE(fw.has_value());
    log.replicate(std::get<ForwardedWrite>(*fw).txn);
    log.commit_all();
    log.set_contact_age(ReplicatedLog::kNoQuorumContact);
    pipeline->tick();
    ASSERT_TRUE(io.closed(1));
    clock.advance(1000);
    pipeline->tick();
    EXPECT_EQ(word(20, "isro"), "null");  // still within ZooKeeper's 2 s grace
    clock.advance(1001);
    pipeline->tick();
    ASSERT_EQ(word(21, "isro"), "ro");
  }
  // A read-only client on `conn`; returns its session.
  int64_t read_only_client(uint64_t conn) {
    deliver(opened(conn));
    deliver(connect_message(conn, read_only_connect_body()));
    EXPECT_EQ(frames(conn), 1u);
    if (frames(conn) != 1) return 0;
    auto r = RecordingClientIo::connect_response(io.sent(conn)[0]);
    EXPECT_TRUE(r.read_only);
    EXPECT_EQ(r.time_out, 30000);
    return r.session_id;
  }
};

TEST_F(ReadOnlyTest, AReadOnlyClientGetsALocalSessionAndReadsButCannotWrite) {
  go_read_only();
  const size_t proposed = log.proposed().size(), sent = log.sent().size();
  int64_t ro = read_only_client(5);
  ASSERT_NE(ro, 0);
  EXPECT_NE(ro, session);
  EXPECT_EQ(log.proposed().size(), proposed);  // nothing replicated: the session is local
  EXPECT_EQ(log.sent().size(), sent);
  request(5, 1, op::kGetData, jute::GetDataRequest{"/a", false});
  auto r = frame(5, 1, op::kGetData);
  EXPECT_EQ(r.header.err, err::kOk);
  EXPECT_EQ(std::get<jute::GetDataResponse>(r.body).data.bytes, "seen");
  request(5, 2, op::kCreate, create_request("/b"));
  request(5, 3, op::kSetData, jute::SetDataRequest{"/a", {"x", false}, -1});
  request(5, 4, op::kSync, jute::SyncRequest{"/"});
  request(5, 5, op::kDelete, jute::DeleteRequest{"/a", -1});
  for (size_t i = 2; i <= 5; ++i) {
    auto w = frame(5, i, op::kCreate);
    EXPECT_EQ(w.header.xid, static_cast<int32_t>(i));
    EXPECT_EQ(w.header.err, err::kNotReadOnly) << "xid " << i;
  }
  EXPECT_FALSE(io.gone(5));
  EXPECT_EQ(log.proposed().size(), proposed);
  EXPECT_EQ(log.sent().size(), sent);
  auto srvr = word(22, "srvr");
  EXPECT_EQ(srvr_mode(srvr), "read-only");
  EXPECT_NE(srvr.find("READ-ONLY mode; serving only read-only clients"), std::string::npos);
}

// A start-up replay longer than the grace is not time cut off: no read-only client reads the
// state short of it, and the grace counts from its end (ZooKeeper's QuorumPeer.start() loads the
// database before the peer's run loop, which starts the ReadOnlyZooKeeperServer, runs).
TEST_F(ReadOnlyTest, AStartUpReplayIsNeitherServedNorReadOnly) {
  log.replicate("");
  log.replicate("");
  log.set_start_up_replay(2);
  start(/*leader=*/0);  // no quorum in sight either
  log.commit_next();
  clock.advance(5000);  // bound and grace long past
  pipeline->tick();
  EXPECT_EQ(pipeline->serving_mode(), ServingMode::kCutOff);
  EXPECT_EQ(word(20, "isro"), "null");
  log.commit_next();  // the replay's end: still no quorum, so cut off from now on
  pipeline->tick();
  EXPECT_EQ(word(21, "isro"), "null");
  clock.advance(2001);
  pipeline->tick();
  EXPECT_EQ(word(22, "isro"), "ro");
}

TEST_F(ReadOnlyTest, ReadWriteClientsAndReplicatedSessionsAreRefused) {
  go_read_only();
  deliver(opened(6));
  deliver(connect_message(6, connect_body()));
  EXPECT_TRUE(io.closed(6));
  EXPECT_EQ(frames(6), 0u);
  // The session created with a quorum cannot be renewed here (ZooKeeper 3.9 closes the
  // connection: RENEW_GLOBAL_SESSION_IN_RO_MODE).
  deliver(opened(7));
  deliver(connect_message(7, read_only_connect_body(session, session::to_bytes(session::make_password(session, kSecret)))));
  EXPECT_TRUE(io.closed(7));
  EXPECT_EQ(frames(7), 0u);
}

TEST_F(ReadOnlyTest, AReadOnlySessionCanBeResumedHereWithItsPassword) {
  go_read_only();
  int64_t ro = read_only_client(5);
  std::string password = RecordingClientIo::connect_response(io.sent(5)[0]).passwd.bytes;
  deliver(closed(5));
  deliver(opened(6));
  deliver(connect_message(6, read_only_connect_body(ro, password)));
  ASSERT_EQ(frames(6), 1u);
  auto r = RecordingClientIo::connect_response(io.sent(6)[0]);
  EXPECT_EQ(r.session_id, ro);
  EXPECT_TRUE(r.read_only);
  deliver(opened(8));
  deliver(connect_message(8, read_only_connect_body(ro, std::string(16, 'x'))));  // wrong password
  ASSERT_EQ(frames(8), 1u);
  EXPECT_EQ(RecordingClientIo::connect_response(io.sent(8)[0]).time_out, 0);
  // Gone for longer than its timeout, it is forgotten.
  deliver(closed(6));
  clock.advance(30'001);
  pipeline->tick();
  deliver(opened(9));
  deliver(connect_message(9, read_only_connect_body(ro, password)));
  EXPECT_TRUE(io.closed(9));
}

TEST_F(ReadOnlyTest, CloseSessionEndsALocalSessionWithoutTheLog) {
  go_read_only();
  int64_t ro = read_only_client(5);
  const size_t proposed = log.proposed().size();
  deliver(header_message(5, 1, op::kCloseSession));
  auto r = frame(5, 1, op::kCloseSession);
  EXPECT_EQ(r.header.err, err::kOk);
  EXPECT_TRUE(io.closed_after_flush(5));
  EXPECT_EQ(log.proposed().size(), proposed);
  deliver(opened(6));
  deliver(connect_message(6, read_only_connect_body(ro, std::string(16, '\0'))));
  EXPECT_TRUE(io.closed(6));  // no such session any more
}

TEST_F(ReadOnlyTest, WhenContactReturnsReadOnlyClientsAreClosedAndReadWriteOnesServed) {
  go_read_only();
  read_only_client(5);
  log.set_contact_age(0);
  pipeline->tick();
  EXPECT_TRUE(io.closed(5));
  EXPECT_EQ(word(23, "isro"), "rw");
  deliver(opened(6));
  deliver(connect_message(6, connect_body(30000, session, session::to_bytes(session::make_password(session, kSecret)))));
  ASSERT_EQ(frames(6), 1u);
  auto r = RecordingClientIo::connect_response(io.sent(6)[0]);
  EXPECT_EQ(r.session_id, session);
  EXPECT_FALSE(r.read_only);
}

TEST_F(ReadOnlyTest, IsroIsWhitelistedInReadOnlyMode) {
  config.four_letter_words = {"srvr"};
  start_follower();
  EXPECT_EQ(word(20, "isro"), "rw");
  EXPECT_EQ(word(21, "ruok"), "ruok is not executed because it is not in the whitelist.\n");
}

}  // namespace
}  // namespace zkraft::server::testing
