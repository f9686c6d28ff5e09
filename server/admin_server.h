#pragma once
// AdminServer: the HTTP listener of ZooKeeper's AdminServer (admin.serverPort, default 8080), on
// Boost.Beast, with its OWN thread and io_context, so a busy client port or a slow state thread
// never keeps it from accepting and answering. What each URL answers is decided by a Handler
// (admin_commands.h's handle_admin_request in production); this file is only HTTP/1.1.
//
// Invariants: requests are bounded (header_limit bytes of request line and headers, answered
// 431 beyond; body_limit bytes of body, or post_body_limit for a POST that large_body_allowed
// accepts (judged from its header alone, before the body is read), 413 beyond; anything unparsable 400, and the connection
// closes after each of those); a connection idle for idle_timeout_ms is closed; at most
// max_connections are open at once (more are closed on accept). The handler runs on the admin
// thread and may block (it waits, bounded, for the state thread); it never touches pipeline state.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "server/admin_commands.h"

namespace zkraft::server {

class AdminServer {
 public:
  struct Options {
    std::string address = "0.0.0.0";
    uint16_t port = 8080;           // 0: any free port (tests); ZkServer starts none for 0
    int64_t idle_timeout_ms = 30000;
    size_t header_limit = 8192;     // Jetty's default request header size
    size_t body_limit = 1 << 20;
    // A POST that large_body_allowed(target, has Authorization header) accepts may bring a body
    // of post_body_limit bytes (the restore command's state); any other request body_limit.
    size_t post_body_limit = 0;
    std::function<bool(std::string_view target, bool authorized)> large_body_allowed;
    int max_connections = 64;
  };
  using Handler = std::function<AdminReply(const AdminRequest&)>;

  AdminServer(Handler handler, Options options);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Binds and listens on the caller's thread (so a port in use is known at once), then starts
  // the admin thread. False + *error ("cannot bind 0.0.0.0:8080: Address already in use").
  bool start(std::string* error);
  // Stops the thread and closes every connection. Idempotent.
  void stop();
  uint16_t port() const { return port_; }

 private:
  class Session;
  void accept();

  Handler handler_;
  Options options_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;  // accept again after an accept error
  std::thread thread_;
  uint16_t port_ = 0;
  std::shared_ptr<std::atomic<int>> open_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace zkraft::server
