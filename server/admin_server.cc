// AdminServer: accept, read one bounded request, answer through the handler, keep the
// connection while the client asks (HTTP/1.1 keep-alive) and it is not idle too long.
#include "server/admin_server.h"

#include <algorithm>

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <chrono>
#include <exception>
#include <optional>

namespace zkraft::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class AdminServer::Session : public std::enable_shared_from_this<AdminServer::Session> {
 public:
  Session(tcp::socket socket, const AdminServer& server)
      : stream_(std::move(socket)), server_(server), open_(server.open_) {
    ++*open_;
  }
  ~Session() { --*open_; }

  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(server_.options_.header_limit));
    // The parser checks a Content-Length against the limit while it reads the header: start at
    // the larger limit, and on_header lowers it for a request that may not bring that much.
    parser_->body_limit(std::max(server_.options_.body_limit,
                                 server_.options_.large_body_allowed ? server_.options_.post_body_limit : 0));
    stream_.expires_after(std::chrono::milliseconds(server_.options_.idle_timeout_ms));
    // The header first: a POST (the restore command's state) may bring a larger body.
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              self->on_header(ec);
                            });
  }

 private:
  void on_header(beast::error_code ec) {
    if (ec) {
      on_read(ec);
      return;
    }
    const auto& head = parser_->get();
    const auto& o = server_.options_;
    const bool large = head.method() == http::verb::post && o.large_body_allowed &&
                       o.large_body_allowed(std::string_view(head.target().data(), head.target().size()),
                                            head.find(http::field::authorization) != head.end());
    if (!large) {
      // A Content-Length past body_limit is refused here, before any of the body is read.
      if (head.has_content_length() && parser_->content_length().value_or(0) > o.body_limit) {
        on_read(http::error::body_limit);
        return;
      }
      parser_->body_limit(o.body_limit);
    }
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      // A parse error is answered (then the connection closes); a closed, reset or idle
      // connection just closes.
      if (ec.category() != http::make_error_code(http::error::end_of_stream).category() ||
          ec == http::error::end_of_stream || ec == http::error::partial_message) {
        close();
        return;
      }
      if (ec == http::error::header_limit) {
        answer_error(431, "Request Header Fields Too Large");
      } else if (ec == http::error::body_limit) {
        answer_error(413, "Payload Too Large");
      } else {
        answer_error(400, "Bad Request");
      }
      return;
    }
    const auto& req = parser_->get();
    AdminRequest r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    r.body = std::move(parser_->get().body());
    if (auto it = req.find(http::field::authorization); it != req.end()) {
      r.authorization = std::string(it->value());
    }
    beast::error_code peer_ec;
    auto peer = stream_.socket().remote_endpoint(peer_ec);
    if (!peer_ec) r.remote_address = peer.address().to_string();
    AdminReply reply;
    try {
      reply = server_.handler_(r);
    } catch (const std::exception& e) {
      // A bug in a renderer must not take the server down (an exception on this thread would).
      reply = AdminReply{500, "text/plain", std::string("internal error: ") + e.what() + "\n"};
    }
    res_ = {};
    res_.version(req.version());
    res_.keep_alive(req.keep_alive());
    fill(reply, req.method() == http::verb::head);
    write(!req.keep_alive());
  }

  void fill(AdminReply& reply, bool head) {
    res_.result(static_cast<unsigned>(reply.status));
    if (!reply.content_type.empty()) res_.set(http::field::content_type, reply.content_type);
    for (const auto& [name, value] : reply.headers) res_.set(name, value);
    const size_t size = reply.body.size();
    if (!head) res_.body() = std::move(reply.body);
    res_.content_length(size);  // HEAD: the length GET would send, no body
  }

  void answer_error(int status, const char* text) {
    res_ = {};
    res_.version(11);
    res_.keep_alive(false);
    AdminReply reply{status, "text/plain", std::string(text) + "\n"};
    fill(reply, false);
    write(true);
  }

  void write(bool close_after) {
    stream_.expires_after(std::chrono::milliseconds(server_.options_.idle_timeout_ms));
    http::async_write(stream_, res_,
                      [self = shared_from_this(), close_after](beast::error_code ec, size_t) {
                        if (ec) {
                          self->close();
                        } else if (close_after) {
                          self->linger();
                        } else {
                          self->read();
                        }
                      });
  }

  // Closing with unread bytes makes the kernel send a reset, which can destroy the answer
  // before the client reads it (a 431 for a header it is still sending): stop sending, then
  // read and drop what still comes, for at most a second and a megabyte.
  void linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(1));
    drain();
  }

  void drain() {
    stream_.async_read_some(asio::buffer(scratch_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > (1u << 20)) {
                                self->close();
                              } else {
                                self->drain();
                              }
                            });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  const AdminServer& server_;
  std::shared_ptr<std::atomic<int>> open_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  std::array<char, 4096> scratch_{};
  size_t drained_ = 0;
};

AdminServer::AdminServer(Handler handler, Options options)
    : handler_(std::move(handler)), options_(std::move(options)), acceptor_(io_), retry_(io_) {}

AdminServer::~AdminServer() { stop(); }

bool AdminServer::start(std::string* error) {
  const std::string where = options_.address + ":" + std::to_string(options_.port);
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options_.address, ec);
  if (ec) {
    if (error) *error = "AdminServer: bad address " + options_.address + ": " + ec.message();
    return false;
  }
  tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    if (error) *error = "AdminServer: cannot bind " + where + ": " + ec.message();
    acceptor_.close(ec);
    return false;
  }
  port_ = acceptor_.local_endpoint().port();
  accept();
  thread_ = std::thread([this] { io_.run(); });
  return true;
}

void AdminServer::stop() {
  if (!thread_.joinable()) return;
  io_.stop();
  thread_.join();
}

void AdminServer::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors, say: try again a little later rather than spin.
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([this](boost::system::error_code e) {
        if (!e) accept();
      });
      return;
    }
    if (open_->load() >= options_.max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      std::make_shared<Session>(std::move(socket), *this)->read();
    }
    accept();
  });
}

}  // namespace zkraft::server
