#pragma once
// The fixture of the RequestPipeline tests (request_pipeline_test.cc and
// request_pipeline_lifecycle_test.cc): a RequestPipeline driven end to end without sockets, with
// ClientMessages in (as a network thread would decode them), a FakeReplicatedLog the test commits
// by hand, replies and closes recorded by a RecordingClientIo, a ManualClock and a fixed random
// source.

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
#include "server/digest_auth.h"
#include "server/peer_message.h"
#include "server/request_pipeline.h"
#include "session/session_password.h"

// Not anonymous: googletest needs the one PipelineTest type in every file that uses it.
namespace zkraft::server::testing {

namespace op = jute::op;
namespace err = jute::err;
using Kind = RecordingClientIo::Kind;

inline constexpr uint64_t kSecret = 0x5eed;

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

}  // namespace zkraft::server::testing
