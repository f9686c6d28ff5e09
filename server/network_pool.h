#pragma once
// NetworkPool: the client side of a server. A listening socket and N network threads, each with
// its own io_context and its own connections; a connection lives on one thread for its whole
// life (connection id % N names it). Frames are read and decoded there and handed to the state
// thread in batches; replies and control from the state thread (ClientIo) come back in batches,
// one hand-off per network thread per flush.
//
// TLS: set_tls() before listening. The client port then takes TLS and plain (port unification,
// when the options say so) and listen_secure() opens a TLS-only port; each accepted connection
// takes the TLS context current at accept, so a reload (TlsContextSource) reaches new ones.

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
#include "server/tls_context.h"

namespace zkraft::server {

class NetworkPool final : public ClientIo {
 public:
  // `deliver` runs on the state thread (`state` executor) with each batch of client messages.
  NetworkPool(int threads, const ConnectionLimits& limits, const Clock& clock,
              boost::asio::any_io_executor state,
              std::function<void(std::vector<ClientMessage>&)> deliver);
  ~NetworkPool() override;

  // TLS for the ports opened after this (and the reload timer, on a network thread).
  void set_tls(std::shared_ptr<TlsContextSource> tls);
  // Binds the client port and starts the threads. False + *error if the address cannot be bound.
  bool listen(const std::string& address, uint16_t port, std::string* error);
  // Binds the TLS-only port (needs set_tls); call before listen().
  bool listen_secure(const std::string& address, uint16_t port, std::string* error);
  uint16_t port() const { return port_; }
  uint16_t secure_port() const { return secure_port_; }
  HandshakeFigures handshake_figures() const override;
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
  bool bind(const std::string& address, uint16_t port, const char* key,
            std::unique_ptr<boost::asio::ip::tcp::acceptor>* out, std::string* error);
  void accept(boost::asio::ip::tcp::acceptor& acceptor, bool secure_only);
  ConnectionSecurity security_for(bool secure_only) const;

  // Counted by the workers (any network thread), read by the state thread.
  struct Counters {
    std::atomic<int64_t> outstanding{0};
    std::atomic<int64_t> unsuccessful{0};
    std::atomic<int64_t> sessionless{0};
  };

  const Clock& clock_;
  ConnectionLimits limits_;
  std::vector<std::unique_ptr<Worker>> threads_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> secure_acceptor_;
  std::shared_ptr<TlsContextSource> tls_;
  Counters counters_;
  BatchQueue<ClientMessage> to_state_;
  uint64_t next_conn_ = 1;  // acceptor thread only
  uint16_t port_ = 0;
  uint16_t secure_port_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace zkraft::server
