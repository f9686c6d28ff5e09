#pragma once
// One client TCP connection: bounded frame reading, an ordered outbound queue, and backpressure.
// It knows nothing of ZooKeeper semantics: frames go to a FrameSink (the ZkServer), replies come
// back through send(). All methods run on the server's io thread.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace zkraft::server {

class Connection;

// Receives what a connection reads. Implemented by ZkServer.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // The first 4 bytes of a connection when they spell a four-letter word.
  virtual void on_four_letter_word(const std::shared_ptr<Connection>& c, std::string_view cmd) = 0;
  virtual void on_frame(const std::shared_ptr<Connection>& c, std::string_view frame) = 0;
  virtual void on_closed(const std::shared_ptr<Connection>& c) = 0;
};

struct ConnectionLimits {
  int32_t max_frame = 0xfffff;          // jute.maxbuffer
  size_t max_outbound_bytes = 1 << 20;  // pause reading above this
  size_t kill_outbound_bytes = 64 << 20;  // a client that never reads is dropped here
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, uint64_t id, FrameSink& sink,
             const ConnectionLimits& limits);

  void start();
  // Queues bytes (an already-framed reply). Never blocks, never closes synchronously (a client
  // that stopped reading is dropped from a posted handler), so callers may keep using it.
  void send(std::string framed);
  // Closes once everything queued has been written.
  void close_after_flush();
  // Closes now; pending output is dropped.
  void close(std::string_view reason = {});

  // Flow control asked for by the server (too many requests outstanding).
  void pause_reading();
  void resume_reading();

  uint64_t id() const { return id_; }
  bool closed() const { return closed_; }
  const std::string& remote_address() const { return remote_address_; }  // "127.0.0.1"
  uint16_t remote_port() const { return remote_port_; }
  size_t outbound_bytes() const { return out_bytes_; }
  uint64_t packets_received() const { return packets_received_; }
  uint64_t packets_sent() const { return packets_sent_; }
  void reset_counters() { packets_received_ = packets_sent_ = 0; }

 private:
  void read_more();
  void parse_input();
  void write_more();
  bool want_read() const;

  boost::asio::ip::tcp::socket socket_;
  uint64_t id_;
  FrameSink& sink_;
  ConnectionLimits limits_;
  std::string remote_address_;
  uint16_t remote_port_ = 0;

  std::string inbuf_;
  bool first_packet_ = true;
  bool reading_ = false;
  bool paused_ = false;
  bool read_eof_ = false;

  std::deque<std::string> out_;
  size_t out_bytes_ = 0;
  bool writing_ = false;
  bool close_after_flush_ = false;
  bool closed_ = false;
  bool dropping_ = false;  // over kill_outbound_bytes: a close is on its way

  uint64_t packets_received_ = 0;
  uint64_t packets_sent_ = 0;
};

}  // namespace zkraft::server
