#pragma once
// RecordingClientIo: a ClientIo that writes nothing and remembers everything the state thread
// asked of its connections, in call order, so tests can check replies, their order across
// connections (a watch event before a reply), closes, flow control and flushes. Frames can be
// decoded back with jute (reply(), connect_response()).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jute/archive.h"
#include "jute/connect.h"
#include "jute/reply.h"
#include "jute/request.h"
#include "server/client_io.h"

namespace zkraft::server::testing {

class RecordingClientIo final : public ClientIo {
 public:
  enum class Kind { kSend, kClose, kCloseAfterFlush, kSetReading };
  struct Call {
    Kind kind;
    uint64_t conn;
    std::string data;  // kSend: the frame; kClose: the reason
    bool reading = false;
    size_t flushes_before = 0;  // flush() calls made before this one
  };

  // ---- ClientIo
  void send(uint64_t conn, std::string framed) override { record(Kind::kSend, conn, std::move(framed)); }
  void close_after_flush(uint64_t conn) override { record(Kind::kCloseAfterFlush, conn, {}); }
  void close(uint64_t conn, std::string_view reason) override {
    record(Kind::kClose, conn, std::string(reason));
  }
  void set_reading(uint64_t conn, bool reading) override {
    record(Kind::kSetReading, conn, {}).reading = reading;
  }
  void flush() override { ++flushes_; }

  // ---- Inspection
  const std::vector<Call>& calls() const { return calls_; }
  size_t flushes() const { return flushes_; }
  // Every call was followed by a flush (what a batch of work must leave behind).
  bool all_flushed() const { return calls_.empty() || calls_.back().flushes_before < flushes_; }
  void clear() { calls_.clear(); }

  // Frames sent to `conn`, in order.
  std::vector<std::string> sent(uint64_t conn) const {
    std::vector<std::string> out;
    for (const auto& c : calls_) {
      if (c.kind == Kind::kSend && c.conn == conn) out.push_back(c.data);
    }
    return out;
  }
  bool closed(uint64_t conn) const { return has(Kind::kClose, conn); }
  bool closed_after_flush(uint64_t conn) const { return has(Kind::kCloseAfterFlush, conn); }
  // Closed either way.
  bool gone(uint64_t conn) const { return closed(conn) || closed_after_flush(conn); }
  // set_reading values for `conn`, in order.
  std::vector<bool> reading_changes(uint64_t conn) const {
    std::vector<bool> out;
    for (const auto& c : calls_) {
      if (c.kind == Kind::kSetReading && c.conn == conn) out.push_back(c.reading);
    }
    return out;
  }
  // Position of the n-th call of `kind` to `conn` in calls(), or -1.
  int position(Kind kind, uint64_t conn, size_t n = 0) const {
    for (size_t i = 0; i < calls_.size(); ++i) {
      if (calls_[i].kind == kind && calls_[i].conn == conn && n-- == 0) return static_cast<int>(i);
    }
    return -1;
  }

  // ---- Decoding recorded frames
  // The body of a length-prefixed frame (checks that the prefix matches).
  static std::string_view body_of(std::string_view framed) {
    EXPECT_GE(framed.size(), 4u);
    if (framed.size() < 4) return {};
    jute::Reader r(framed.substr(0, 4));
    int32_t len = -1;
    r.read_int(len);
    EXPECT_EQ(static_cast<size_t>(len), framed.size() - 4) << "frame length prefix";
    return framed.substr(4);
  }
  // A reply (or, for xid -1, a watch event) to a request of `op`.
  static jute::DecodedReply reply(std::string_view framed, int32_t op) {
    jute::DecodedReply out;
    EXPECT_EQ(jute::decode_reply(body_of(framed), op, jute::Limits{}, out), 0) << "reply decode";
    return out;
  }
  static jute::ConnectResponse connect_response(std::string_view framed) {
    jute::ConnectResponse out;
    EXPECT_EQ(jute::decode_connect_response(body_of(framed), jute::Limits{}, out), 0)
        << "ConnectResponse decode";
    return out;
  }

 private:
  Call& record(Kind kind, uint64_t conn, std::string data) {
    calls_.push_back(Call{kind, conn, std::move(data), false, flushes_});
    return calls_.back();
  }
  bool has(Kind kind, uint64_t conn) const { return position(kind, conn) >= 0; }

  std::vector<Call> calls_;
  size_t flushes_ = 0;
};

}  // namespace zkraft::server::testing
