// RequestPipeline, requests: the handshake, reply order, watch-event order, forwarding on a
// follower, and replies built only where the client is (fixture: pipeline_fixture.h).

#include <gtest/gtest.h>

#include "pipeline_fixture.h"

namespace zkraft::server {
namespace {

using namespace testing;

// ---------------------------------------------------------------- handshake

TEST_F(PipelineTest, AHandshakeCreatesASessionThroughTheLogAndIsAnsweredOnlyAfterItsCommit) {
  start();
  deliver(opened(1));
  deliver(connect_message(1, connect_body(30000)));
  EXPECT_TRUE(io.sent(1).empty());
  ASSERT_EQ(log.proposed().size(), 1u);
  Txn t = proposed(0);
  EXPECT_EQ(t.kind, TxnKind::kCreateSession);
  EXPECT_EQ(t.timeout_ms, 30000);
  EXPECT_EQ(t.time_ms, clock.wall_ms());
  // The password comes from the injected random source.
  EXPECT_EQ(t.password, session::to_bytes(session::make_password(t.session_id, kSecret)));
  EXPECT_FALSE(pipeline->state().sessions().contains(t.session_id));

  ASSERT_TRUE(log.commit_next());
  ASSERT_EQ(frames(1), 1u);
  auto r = RecordingClientIo::connect_response(io.sent(1)[0]);
  EXPECT_EQ(r.session_id, t.session_id);
  EXPECT_EQ(r.time_out, 30000);
  EXPECT_EQ(r.passwd.bytes, t.password);
  EXPECT_TRUE(pipeline->state().sessions().contains(t.session_id));
  EXPECT_FALSE(io.gone(1));
  EXPECT_TRUE(io.all_flushed());
}

TEST_F(PipelineTest, TheSessionTimeoutIsNegotiatedIntoTheTickBounds) {
  start();
  deliver(opened(1));
  deliver(connect_message(1, connect_body(10)));
  deliver(opened(2));
  deliver(connect_message(2, connect_body(10'000'000)));
  log.commit_all();
  EXPECT_EQ(RecordingClientIo::connect_response(io.sent(1).at(0)).time_out, 4000);   // 2 ticks
  EXPECT_EQ(RecordingClientIo::connect_response(io.sent(2).at(0)).time_out, 40000);  // 20 ticks
}

TEST_F(PipelineTest, AReattachWithAWrongPasswordIsRefusedAndClosed) {
  start();
  int64_t s = handshake(1);
  io.clear();
  deliver(opened(2));
  deliver(connect_message(2, connect_body(30000, s, std::string(16, 'x'))));
  EXPECT_EQ(log.proposed().size(), 1u);  // nothing new
  ASSERT_EQ(frames(2), 1u);
  auto r = RecordingClientIo::connect_response(io.sent(2)[0]);
  EXPECT_EQ(r.session_id, 0);
  EXPECT_EQ(r.time_out, 0);
  EXPECT_GT(io.position(Kind::kCloseAfterFlush, 2), io.position(Kind::kSend, 2));
  EXPECT_FALSE(io.gone(1));  // the session's own connection is untouched
}

TEST_F(PipelineTest, AReattachWithTheRightPasswordMovesTheSessionToTheNewConnection) {
  start();
  int64_t s = handshake(1);
  std::string password = proposed(0).password;
  io.clear();
  deliver(opened(2));
  deliver(connect_message(2, connect_body(30000, s, password)));
  ASSERT_EQ(frames(2), 1u);
  auto r = RecordingClientIo::connect_response(io.sent(2)[0]);
  EXPECT_EQ(r.session_id, s);
  EXPECT_EQ(r.passwd.bytes, password);
  EXPECT_TRUE(io.closed(1));
  EXPECT_FALSE(io.gone(2));
  EXPECT_EQ(pipeline->clients().connection_of(s), 2u);
}

TEST_F(PipelineTest, AReattachToAnUnknownSessionIsRefused) {
  start();
  deliver(opened(2));
  deliver(connect_message(2, connect_body(30000, 0x0100000000000999, std::string(16, 'x'))));
  auto r = RecordingClientIo::connect_response(io.sent(2).at(0));
  EXPECT_EQ(r.session_id, 0);
  EXPECT_TRUE(io.closed_after_flush(2));
}

TEST_F(PipelineTest, WithNoLeaderAConnectIsDropped) {
  start(/*leader=*/0);
  deliver(opened(1));
  deliver(connect_message(1, connect_body()));
  EXPECT_TRUE(io.closed(1));
  EXPECT_TRUE(io.sent(1).empty());
  EXPECT_TRUE(log.proposed().empty());
  EXPECT_EQ(pipeline->clients().size(), 0u);
}

TEST_F(PipelineTest, AClientAheadOfOurStateIsDropped) {
  start();
  deliver(opened(1));
  deliver(connect_message(1, connect_body(30000, 0, std::string(16, '\0'), /*last_zxid=*/100)));
  EXPECT_TRUE(io.closed(1));
  EXPECT_TRUE(log.proposed().empty());
}

TEST_F(PipelineTest, AMalformedConnectIsDropped) {
  start();
  deliver(opened(1));
  deliver(connect_message(1, connect_body().substr(0, 7)));
  EXPECT_TRUE(io.closed(1));
}

TEST_F(PipelineTest, ConnectionsBeyondThePerIpLimitAreClosedAtOnce) {
  config.max_client_cnxns = 2;
  start();
  deliver(opened(1, "192.0.2.5"));
  deliver(opened(2, "192.0.2.5"));
  deliver(opened(3, "192.0.2.5"));
  deliver(opened(4, "192.0.2.6"));
  EXPECT_FALSE(io.gone(1));
  EXPECT_FALSE(io.gone(2));
  EXPECT_TRUE(io.closed(3));
  EXPECT_FALSE(io.gone(4));
}

// ---------------------------------------------------------------- reply order

TEST_F(PipelineTest, AReadBehindAnInFlightWriteWaitsAndRepliesLeaveInRequestOrder) {
  start();
  handshake(1);
  create(1, 1, "/a", "old");
  const size_t before = frames(1);
  request(1, 2, op::kSetData, jute::SetDataRequest{"/a", {"new", false}, -1});
  request(1, 3, op::kGetData, jute::GetDataRequest{"/a", false});
  EXPECT_EQ(frames(1), before);  // the read waits for the write before it
  log.commit_all();
  ASSERT_EQ(frames(1), before + 2);
  auto set = frame(1, before, op::kSetData);
  auto get = frame(1, before + 1, op::kGetData);
  EXPECT_EQ(set.header.xid, 2);
  EXPECT_EQ(set.header.err, err::kOk);
  EXPECT_EQ(get.header.xid, 3);
  EXPECT_EQ(std::get<jute::GetDataResponse>(get.body).data.bytes, "new");
}

TEST_F(PipelineTest, AReadWithNothingBeforeItIsAnsweredAtOnce) {
  start();
  handshake(1);
  create(1, 1, "/a", "v");
  const size_t before = frames(1);
  request(1, 2, op::kGetData, jute::GetDataRequest{"/a", false});
  ASSERT_EQ(frames(1), before + 1);
  EXPECT_EQ(std::get<jute::GetDataResponse>(frame(1, before, op::kGetData).body).data.bytes, "v");
  EXPECT_TRUE(io.all_flushed());
}

TEST_F(PipelineTest, AClientThatDoesNotReadGetsNoMoreAnswersUntilItsRepliesAreWritten) {
  start();
  handshake(1);
  create(1, 1, "/big", std::string(300 << 10, 'b'));  // each getData reply is ~300 KB
  const size_t before = frames(1);
  for (int32_t xid = 2; xid <= 6; ++xid) request(1, xid, op::kGetData, jute::GetDataRequest{"/big", false});
  // 4 replies (1.2 MB) exceed kMaxUnwrittenBytes: the 5th waits in the queue.
  EXPECT_EQ(frames(1), before + 4);
  // The network thread reports 512 KB written: back under the limit, the 5th goes.
  ClientMessage written;
  written.kind = ClientMessage::Kind::kWritten;
  written.conn = 1;
  written.written_bytes = 512 << 10;
  deliver(written);
  ASSERT_EQ(frames(1), before + 5);
  EXPECT_EQ(frame(1, before + 4, op::kGetData).header.xid, 6);
}

TEST_F(PipelineTest, AWriteIsAnsweredWithTheZxidOfItsEntry) {
  start();
  handshake(1);
  request(1, 1, op::kCreate, create_request("/x", ""));
  log.commit_all();
  auto r = frame(1, 1, op::kCreate);
  EXPECT_EQ(r.header.zxid, static_cast<int64_t>(log.commit_index()));
  EXPECT_EQ(std::get<jute::CreateResponse>(r.body).path, "/x");
}

TEST_F(PipelineTest, AFailedWriteIsAnsweredWithItsErrorAndNoBody) {
  start();
  handshake(1);
  request(1, 1, op::kSetData, jute::SetDataRequest{"/missing", {"", false}, -1});
  log.commit_all();
  auto r = frame(1, 1, op::kSetData);
  EXPECT_EQ(r.header.err, err::kNoNode);
  EXPECT_TRUE(std::holds_alternative<jute::EmptyResponse>(r.body));
}

// ---------------------------------------------------------------- watch events

TEST_F(PipelineTest, AWatchEventReachesTheClientBeforeTheReplyOfTheWriteThatFiredIt) {
  start();
  handshake(1);
  create(1, 1, "/a");
  request(1, 2, op::kGetData, jute::GetDataRequest{"/a", true});
  const size_t before = frames(1);
  request(1, 3, op::kSetData, jute::SetDataRequest{"/a", {"v2", false}, -1});
  log.commit_all();
  ASSERT_EQ(frames(1), before + 2);
  auto event = frame(1, before, op::kSetData);
  EXPECT_EQ(event.header.xid, jute::xid::kNotification);
  const auto& we = std::get<jute::WatcherEvent>(event.body);
  EXPECT_EQ(we.type, jute::event::kNodeDataChanged);
  EXPECT_EQ(we.path, "/a");
  EXPECT_EQ(event.header.zxid, static_cast<int64_t>(log.commit_index()));
  EXPECT_EQ(frame(1, before + 1, op::kSetData).header.xid, 3);
}

TEST_F(PipelineTest, AnotherClientsWatchEventIsSentBeforeTheWritersReply) {
  start();
  handshake(1);
  handshake(2);
  create(1, 1, "/a");
  request(2, 1, op::kExists, jute::ExistsRequest{"/a", true});
  request(1, 2, op::kDelete, jute::DeleteRequest{"/a", -1});
  log.commit_all();
  int event = io.position(Kind::kSend, 2, 2);  // handshake, exists reply, then the event
  int reply = io.position(Kind::kSend, 1, 2);  // handshake, create reply, then the delete reply
  ASSERT_GE(event, 0);
  ASSERT_GE(reply, 0);
  EXPECT_LT(event, reply);
  EXPECT_EQ(std::get<jute::WatcherEvent>(frame(2, 2, op::kExists).body).type, jute::event::kNodeDeleted);
}

TEST_F(PipelineTest, AOneShotWatchFiresOnce) {
  start();
  handshake(1);
  create(1, 1, "/a");
  request(1, 2, op::kGetData, jute::GetDataRequest{"/a", true});
  request(1, 3, op::kSetData, jute::SetDataRequest{"/a", {"1", false}, -1});
  request(1, 4, op::kSetData, jute::SetDataRequest{"/a", {"2", false}, -1});
  const size_t before = frames(1);
  log.commit_all();
  EXPECT_EQ(frames(1), before + 3);  // one event, two replies
}

// ---------------------------------------------------------------- follower

class FollowerPipelineTest : public PipelineTest {
 protected:
  FollowerPipelineTest() : PipelineTest(/*self=*/2) {}
  // What the leader would do with everything this follower forwarded: stamp and replicate it.
  size_t lead_forwarded_writes(int64_t leader_wall_ms) {
    size_t n = 0;
    for (; forwarded_ < log.sent().size(); ++forwarded_) {
      const auto& s = log.sent()[forwarded_];
      auto m = decode_peer_message(s.payload);
      if (!m || !std::holds_alternative<ForwardedWrite>(*m)) continue;
      EXPECT_EQ(s.to, 1u);
      std::string txn = std::get<ForwardedWrite>(*m).txn;
      EXPECT_TRUE(stamp_txn_time(txn, leader_wall_ms));
      log.replicate(std::move(txn));
      ++n;
    }
    return n;
  }
  size_t forwarded_ = 0;
};

TEST_F(FollowerPipelineTest, AWriteIsForwardedToTheLeaderAndAnsweredWhenItsEntryComesBack) {
  start(/*leader=*/1);
  deliver(opened(1));
  deliver(connect_message(1, connect_body()));
  EXPECT_TRUE(log.proposed().empty());
  ASSERT_EQ(lead_forwarded_writes(42), 1u);
  log.commit_all();
  ASSERT_EQ(frames(1), 1u);
  int64_t s = RecordingClientIo::connect_response(io.sent(1)[0]).session_id;
  EXPECT_NE(s, 0);

  request(1, 7, op::kCreate, create_request("/f", "x"));
  EXPECT_TRUE(log.proposed().empty());
  ASSERT_EQ(log.sent().size(), 2u);
  auto fw = decode_peer_message(log.sent()[1].payload);
  ASSERT_TRUE(fw && std::holds_alternative<ForwardedWrite>(*fw));
  auto t = decode_txn(std::get<ForwardedWrite>(*fw).txn);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->time_ms, 0);  // unstamped: the leader's clock decides
  EXPECT_EQ(t->origin_server, 2u);
  EXPECT_EQ(t->session_id, s);
  EXPECT_EQ(frames(1), 1u);

  const int64_t leader_wall = 1'234'567;
  lead_forwarded_writes(leader_wall);
  log.commit_all();
  ASSERT_EQ(frames(1), 2u);
  auto r = frame(1, 1, op::kCreate);
  EXPECT_EQ(r.header.xid, 7);
  EXPECT_EQ(r.header.err, err::kOk);
  jute::Stat stat;
  jute::Buffer data;
  ASSERT_EQ(pipeline->state().tree().get_data("/f", {{"world", "anyone"}}, data, stat), err::kOk);
  EXPECT_EQ(stat.ctime, leader_wall);
}

TEST_F(FollowerPipelineTest, AnotherServersWriteChangesTheTreeAndAnswersNobodyHere) {
  start(/*leader=*/1);
  deliver(opened(1));
  deliver(connect_message(1, connect_body()));
  lead_forwarded_writes(1);
  log.commit_all();
  int64_t s = RecordingClientIo::connect_response(io.sent(1).at(0)).session_id;
  // This server's own write, forwarded and not back yet: request id 2.
  request(1, 7, op::kCreate, create_request("/mine", ""));
  ASSERT_EQ(log.sent().size(), 2u);
  const uint64_t mine = decode_txn(std::get<ForwardedWrite>(*decode_peer_message(log.sent()[1].payload)).txn)
                            ->origin_request;
  // Meanwhile a write that server 3 accepted, with the same request id on its side.
  Txn t = create_txn(s, "/elsewhere");
  t.xid = 7;
  t.origin_server = 3;
  t.origin_request = mine;
  t.time_ms = 5;
  log.replicate(encode_txn(t));
  io.clear();
  log.commit_all();
  EXPECT_TRUE(pipeline->state().tree().contains("/elsewhere"));
  EXPECT_TRUE(io.sent(1).empty());  // not taken for this server's pending write
  lead_forwarded_writes(6);
  log.commit_all();
  ASSERT_EQ(io.sent(1).size(), 1u);
  auto r = RecordingClientIo::reply(io.sent(1)[0], op::kCreate);
  EXPECT_EQ(std::get<jute::CreateResponse>(r.body).path, "/mine");
}

TEST_F(FollowerPipelineTest, AFollowerForwardsNothingWithoutALeaderAndTheClientLosesItsConnection) {
  start(/*leader=*/1);
  deliver(opened(1));
  deliver(connect_message(1, connect_body()));
  lead_forwarded_writes(1);
  log.commit_all();
  log.set_contact_age(0);  // the leader just went away: still within the quorum-contact bound
  log.set_leader(0);
  const size_t sent = log.sent().size();
  request(1, 3, op::kCreate, create_request("/x", ""));
  EXPECT_EQ(log.sent().size(), sent);
  EXPECT_TRUE(io.closed_after_flush(1));  // ConnectionLoss: the client retries elsewhere
}

TEST_F(PipelineTest, TheLeaderProposesAForwardedWriteStampedWithItsOwnClock) {
  start();
  Txn t = create_session_txn(0x0200000000000001);
  t.origin_server = 2;
  t.origin_request = 5;
  t.time_ms = 0;
  clock.step_wall(-1000);
  log.receive(2, encode_peer_message(ForwardedWrite{encode_txn(t)}));
  ASSERT_EQ(log.proposed().size(), 1u);
  Txn p = proposed(0);
  EXPECT_EQ(p.time_ms, clock.wall_ms());
  EXPECT_EQ(p.origin_server, 2u);
  EXPECT_EQ(p.origin_request, 5u);
}

TEST_F(PipelineTest, AMalformedPeerMessageIsDropped) {
  start();
  log.receive(2, "\x01\x09garbage");
  log.receive(2, "");
  EXPECT_TRUE(log.proposed().empty());
}

TEST(ZkStateMachineReplies, AReplicaThatHoldsNoClientChangesTheTreeWithoutBuildingAReply) {
  ZkStateMachine mine, other;
  const int64_t s = 0x0100000000000001;
  mine.apply(1, create_session_txn(s));
  other.apply(1, create_session_txn(s));
  Txn c = create_txn(s, "/n", "data");
  ApplyOutcome with = mine.apply(2, c, /*want_reply=*/true);
  ApplyOutcome without = other.apply(2, c, /*want_reply=*/false);
  EXPECT_FALSE(with.reply.empty());
  EXPECT_TRUE(without.reply.empty());
  EXPECT_EQ(without.err, err::kOk);
  EXPECT_TRUE(other.tree().contains("/n"));
  EXPECT_EQ(other.tree().digest(), mine.tree().digest());
  EXPECT_EQ(without.triggers, with.triggers);  // the watches of this server still fire
}

// ---------------------------------------------------------------- leader changes

}  // namespace
}  // namespace zkraft::server
