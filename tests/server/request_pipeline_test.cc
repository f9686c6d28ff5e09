// RequestPipeline: the state-thread core of a zkraft server, driven end to end without sockets:
// ClientMessages in (as a network thread would decode them), a FakeReplicatedLog the test
// commits by hand, replies and closes recorded by a RecordingClientIo, a ManualClock and a fixed
// random source. Covers the handshake, reply order, watch-event order, forwarding on a follower,
// leader changes, closeSession, sync, idle connections, flow control and the four-letter words.

#include <gtest/gtest.h>

#include <memory>

#include "client_frames.h"
#include "fake_replicated_log.h"
#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/opcodes.h"
#include "recording_client_io.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/peer_message.h"
#include "server/request_pipeline.h"
#include "session/session_password.h"

namespace zkraft::server {
namespace {

using namespace testing;
namespace op = jute::op;
namespace err = jute::err;
using Kind = RecordingClientIo::Kind;

constexpr uint64_t kSecret = 0x5eed;

class PipelineTest : public ::testing::Test {
 protected:
  explicit PipelineTest(uint64_t self = 1) : log(self) {
    config.server_id = static_cast<int64_t>(self);
    config.tick_time_ms = 2000;
    config.four_letter_words = {"*"};
  }
  // Tests change `config` first, then start (each TEST_F body calls it, or a fixture's SetUp).
  void start(uint64_t leader = 1) {
    pipeline = std::make_unique<RequestPipeline>(config, log, io, clock, [] { return kSecret; });
    std::string error;
    ASSERT_TRUE(pipeline->start(&error)) << error;
    log.set_leader(leader);
  }

  void deliver(ClientMessage m) {
    std::vector<ClientMessage> batch;
    batch.push_back(std::move(m));
    pipeline->on_client_messages(batch);
  }
  // A connection with a committed session; returns the session id.
  int64_t handshake(uint64_t conn, int32_t timeout = 30000) {
    deliver(opened(conn));
    deliver(connect_message(conn, connect_body(timeout), clock.monotonic_ms()));
    log.commit_all();
    auto frames = io.sent(conn);
    EXPECT_EQ(frames.size(), 1u);
    if (frames.empty()) return 0;
    auto r = RecordingClientIo::connect_response(frames.back());
    EXPECT_NE(r.session_id, 0);
    return r.session_id;
  }
  template <class Record>
  void request(uint64_t conn, int32_t xid, int32_t o, const Record& record) {
    deliver(request_message(conn, xid, o, record, clock.monotonic_ms()));
  }
  // A write committed at once (on the leader).
  void create(uint64_t conn, int32_t xid, const std::string& path, const std::string& data = "d") {
    request(conn, xid, op::kCreate, create_request(path, data));
    log.commit_all();
  }
  // Frames after the handshake's, decoded as answers to `o` (events decode regardless of `o`).
  jute::DecodedReply frame(uint64_t conn, size_t i, int32_t o) {
    auto frames = io.sent(conn);
    EXPECT_LT(i, frames.size());
    if (i >= frames.size()) return {};
    return RecordingClientIo::reply(frames[i], o);
  }
  size_t frames(uint64_t conn) const { return io.sent(conn).size(); }
  Txn proposed(size_t i) const {
    EXPECT_LT(i, log.proposed().size());
    if (i >= log.proposed().size()) return {};
    auto t = decode_txn(log.proposed()[i]);
    EXPECT_TRUE(t.has_value());
    return t.value_or(Txn{});
  }

  Config config;
  FakeReplicatedLog log;
  RecordingClientIo io;
  ManualClock clock;
  std::unique_ptr<RequestPipeline> pipeline;
};

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

TEST_F(PipelineTest, TickIntervalIsHalfATick) {
  start();
  EXPECT_EQ(pipeline->tick_interval_ms(), 1000);
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

}  // namespace
}  // namespace zkraft::server
