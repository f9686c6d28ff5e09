#pragma once
// One client TCP connection, on one network thread: bounded frame reading (jute::FrameDecoder),
// decoding each frame once (ClientMessage), an ordered outbound queue, and backpressure. It knows
// nothing of ZooKeeper semantics beyond the decode: what it reads goes to its ConnectionSink,
// replies come back through send(). Every method runs on the connection's network thread.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "jute/archive.h"
#include "jute/frame.h"
#include "server/client_message.h"
#include "server/clock.h"

namespace zkraft::server {

class Connection;

// Receives what connections of one network thread produce. flush() ends each read completion,
// so a batch of frames read together travels together.
class ConnectionSink {
 public:
  virtual ~ConnectionSink() = default;
  virtual void on_message(ClientMessage m) = 0;
  virtual void on_closed(const Connection& c) = 0;
  virtual void flush() = 0;
};

struct ConnectionLimits {
  int32_t max_frame = 0xfffff;          // jute.maxbuffer
  size_t max_outbound_bytes = 1 << 20;  // pause reading above this
  size_t kill_outbound_bytes = 64 << 20;  // a client that never reads is dropped here
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, uint64_t id, ConnectionSink& sink,
             const ConnectionLimits& limits, const Clock& clock);

  // Announces the connection (a kOpened message) and starts reading.
  void start();
  // Queues bytes (an already-framed reply). Never blocks, never closes synchronously (a client
  // that stopped reading is dropped from a posted handler), so callers may keep using it.
  void send(std::string framed);
  // Closes once everything queued has been written.
  void close_after_flush();
  // Closes now; pending output is dropped.
  void close(std::string_view reason = {});
  // Flow control asked for by the server (too many requests outstanding).
  void set_reading(bool reading);

  uint64_t id() const { return id_; }
  bool closed() const { return closed_; }

 private:
  void read_more();
  void parse_input(std::string_view bytes);
  void write_more();
  void report_written(size_t bytes);
  bool want_read() const;

  boost::asio::ip::tcp::socket socket_;
  uint64_t id_;
  ConnectionSink& sink_;
  ConnectionLimits limits_;
  const Clock& clock_;
  jute::Limits decode_limits_;
  std::string remote_address_;
  uint16_t remote_port_ = 0;

  std::string head_;  // the first bytes, until they are known to be a frame or a 4lw
  bool first_bytes_seen_ = false;
  bool connect_seen_ = false;
  bool four_letter_word_ = false;
  jute::FrameDecoder frames_;
  bool reading_ = false;
  bool paused_ = false;
  bool read_eof_ = false;

  std::deque<std::string> out_;
  size_t out_bytes_ = 0;
  bool writing_ = false;
  bool close_after_flush_ = false;
  bool closed_ = false;
  bool dropping_ = false;  // over kill_outbound_bytes: a close is on its way
  uint64_t unreported_written_ = 0;  // written, not yet reported (kWritten)
};

}  // namespace zkraft::server
