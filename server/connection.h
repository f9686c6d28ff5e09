#pragma once
// One client TCP connection, on one network thread: bounded frame reading (jute::FrameDecoder),
// decoding each frame once (ClientMessage), an ordered outbound queue, and backpressure. It knows
// nothing of ZooKeeper semantics beyond the decode: what it reads goes to its ConnectionSink,
// replies come back through send(). Every method runs on the connection's network thread.
//
// TLS (ConnectionSecurity): a TLS connection runs its handshake here, on the network thread,
// before it is announced (kOpened carries the client certificate's subject); a unified port
// peeks at the first byte (0x16, a TLS handshake record, means TLS) without consuming it. A
// connection that has not finished its TLS handshake within handshake_timeout_ms, or sent no
// ConnectRequest (nor four-letter word) within sessionless_timeout_ms, is closed: a stalled
// client costs a socket and a timer, never a thread.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
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
  // TLS handshakes, for the counters (mntr zk_outstanding_tls_handshake).
  virtual void on_tls_handshake_started() {}
  virtual void on_tls_handshake_finished(bool /*ok*/) {}
  // A connection closed by its deadline before its ConnectRequest (slowloris).
  virtual void on_sessionless_timeout() {}
};

struct ConnectionLimits {
  int32_t max_frame = 0xfffff;          // jute.maxbuffer
  size_t max_outbound_bytes = 1 << 20;  // pause reading above this
  size_t kill_outbound_bytes = 64 << 20;  // a client that never reads is dropped here
  int32_t sessionless_timeout_ms = 10000;  // no ConnectRequest by then: closed; 0 = never
};

// How a connection speaks: plain (tls null), TLS, or either (detect: port unification).
struct ConnectionSecurity {
  std::shared_ptr<boost::asio::ssl::context> tls;
  bool detect = false;
  int32_t handshake_timeout_ms = 5000;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, uint64_t id, ConnectionSink& sink,
             const ConnectionLimits& limits, const Clock& clock, ConnectionSecurity security = {});

  // Starts the TLS handshake or the first-byte detection if any, then announces the connection
  // (a kOpened message) and starts reading.
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
  bool secure() const { return tls_ != nullptr; }

 private:
  void detect_tls();
  void handshake();
  void opened(std::string x509_subject);
  void arm_deadline(int64_t at_ms);
  void on_deadline();
  void read_more();
  void parse_input(std::string_view bytes);
  void write_more();
  void report_written(size_t bytes);
  bool want_read() const;

  boost::asio::ip::tcp::socket socket_;
  ConnectionSecurity security_;
  // Declared after socket_, which it refers to, so it goes first.
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>> tls_;
  boost::asio::steady_timer deadline_;
  int64_t accepted_ms_ = 0;
  bool handshaking_ = false;  // a TLS handshake (or the first-byte wait) is in progress
  bool announced_ = false;    // kOpened sent
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
  // One read buffer for the connection's life, allocated on the first read and not zeroed: a
  // fresh zero-filled 16 KiB per read was 2.4% of the server's samples under 16x1 setData.
  std::unique_ptr<char[]> read_buf_;
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
