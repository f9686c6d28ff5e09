#pragma once
// NetworkPool: the client side of a server. A listening socket and N network threads, each with
// its own io_context and its own connections; a connection lives on one thread for its whole
// life (connection id % N names it). Frames are read and decoded there and handed to the state
// thread in batches; replies and control from the state thread (ClientIo) come back in batches,
// one hand-off per network thread per flush.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "server/batch_queue.h"
#include "server/client_io.h"
#include "server/client_message.h"
#include "server/clock.h"
#include "server/connection.h"

namespace zkraft::server {

class NetworkPool final : public ClientIo {
 public:
  // `deliver` runs on the state thread (`state` executor) with each batch of client messages.
  NetworkPool(int threads, const ConnectionLimits& limits, const Clock& clock,
              boost::asio::any_io_executor state,
              std::function<void(std::vector<ClientMessage>&)> deliver);
  ~NetworkPool() override;

  // Binds the client port and starts the threads. False + *error if the address cannot be bound.
  bool listen(const std::string& address, uint16_t port, std::string* error);
  uint16_t port() const { return port_; }
  int threads() const { return static_cast<int>(threads_.size()); }
  // Stops accepting, closes every connection, joins the threads.
  void stop();

  // ClientIo (state thread).
  void send(uint64_t conn, std::string framed) override;
  void close_after_flush(uint64_t conn) override;
  void close(uint64_t conn, std::string_view reason) override;
  void set_reading(uint64_t conn, bool reading) override;
  void flush() override;

 private:
  struct Send { std::string framed; };
  struct CloseAfterFlush {};
  struct Close { std::string reason; };
  struct SetReading { bool reading; };
  struct Op {
    uint64_t conn;
    std::variant<Send, CloseAfterFlush, Close, SetReading> what;
  };

  // One network thread: its io_context, its connections, and its two hand-offs.
  class Worker;

  Worker& worker_of(uint64_t conn);
  void accept();

  const Clock& clock_;
  ConnectionLimits limits_;
  std::vector<std::unique_ptr<Worker>> threads_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  BatchQueue<ClientMessage> to_state_;
  uint64_t next_conn_ = 1;  // acceptor thread only
  uint16_t port_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace zkraft::server
