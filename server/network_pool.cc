#include "server/network_pool.h"

#include <spdlog/spdlog.h>

#include <pthread.h>

namespace zkraft::server {

namespace asio = boost::asio;

class NetworkPool::Worker final : public ConnectionSink {
 public:
  Worker(int index, BatchQueue<ClientMessage>& to_state, Counters& counters)
      : index_(index),
        counters_(counters),
        work_(io_.get_executor()),
        ops_(io_.get_executor(), [this](std::vector<Op>& batch) { run(batch); }),
        to_state_(to_state) {}

  void start() {
    thread_ = std::thread([this] {
      const std::string name = "zk-net-" + std::to_string(index_);  // top -H, ps -L, perf
      pthread_setname_np(pthread_self(), name.c_str());
      io_.run();
    });
  }

  // Closes every connection, then lets the thread end (`also` runs first on the thread).
  void stop(std::function<void()> also) {
    if (!thread_.joinable()) return;
    asio::post(io_, [this, also = std::move(also)] {
      if (also) also();
      auto conns = conns_;
      for (auto& [id, c] : conns) c->close();
      ops_.close();
      io_.stop();
    });
    thread_.join();
  }

  // Network thread.
  void adopt(asio::ip::tcp::socket socket, uint64_t id, const ConnectionLimits& limits,
             const Clock& clock, ConnectionSecurity security) {
    auto c = std::make_shared<Connection>(std::move(socket), id, *this, limits, clock,
                                          std::move(security));
    conns_[id] = c;
    c->start();
  }
  void on_message(ClientMessage m) override { pending_.push_back(std::move(m)); }
  void on_closed(const Connection& c) override {
    ClientMessage m;
    m.kind = ClientMessage::Kind::kClosed;
    m.conn = c.id();
    pending_.push_back(std::move(m));
    flush();
    conns_.erase(c.id());
  }
  void flush() override { to_state_.push_all(pending_); }
  void on_tls_handshake_started() override { ++counters_.outstanding; }
  void on_tls_handshake_finished(bool ok) override {
    --counters_.outstanding;
    if (!ok) ++counters_.unsuccessful;
  }
  void on_sessionless_timeout() override { ++counters_.sessionless; }

  // State thread: ops wait in staged_ until NetworkPool::flush().
  void stage(Op op) { staged_.push_back(std::move(op)); }
  void hand_over() { ops_.push_all(staged_); }

  asio::io_context io_;

 private:
  void run(std::vector<Op>& batch) {
    for (auto& op : batch) {
      auto it = conns_.find(op.conn);
      if (it == conns_.end()) continue;  // closed meanwhile
      std::shared_ptr<Connection> c = it->second;  // close() may drop it from conns_
      if (auto* s = std::get_if<Send>(&op.what)) {
        c->send(std::move(s->framed));
      } else if (std::holds_alternative<CloseAfterFlush>(op.what)) {
        c->close_after_flush();
      } else if (auto* x = std::get_if<Close>(&op.what)) {
        c->close(x->reason);
      } else {
        c->set_reading(std::get<SetReading>(op.what).reading);
      }
    }
    flush();
  }

  const int index_;
  Counters& counters_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  BatchQueue<Op> ops_;
  BatchQueue<ClientMessage>& to_state_;
  std::thread thread_;
  std::unordered_map<uint64_t, std::shared_ptr<Connection>> conns_;
  std::vector<ClientMessage> pending_;  // network thread
  std::vector<Op> staged_;              // state thread
};

NetworkPool::NetworkPool(int threads, const ConnectionLimits& limits, const Clock& clock,
                         asio::any_io_executor state,
                         std::function<void(std::vector<ClientMessage>&)> deliver)
    : clock_(clock), limits_(limits), to_state_(std::move(state), std::move(deliver)) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    threads_.push_back(std::make_unique<Worker>(i, to_state_, counters_));
  }
}

NetworkPool::~NetworkPool() { stop(); }

void NetworkPool::set_tls(std::shared_ptr<TlsContextSource> tls) { tls_ = std::move(tls); }

bool NetworkPool::bind(const std::string& address, uint16_t port, const char* key,
                       std::unique_ptr<asio::ip::tcp::acceptor>* out, std::string* error) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(address, ec);
  if (ec) {
    *error = std::string(key) + " " + address + ": " + ec.message();
    return false;
  }
  asio::ip::tcp::endpoint ep(addr, port);
  auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(threads_[0]->io_);
  acceptor->open(ep.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(ep, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    *error = "cannot listen on " + address + ":" + std::to_string(port) + ": " + ec.message();
    return false;
  }
  *out = std::move(acceptor);
  return true;
}

bool NetworkPool::listen_secure(const std::string& address, uint16_t port, std::string* error) {
  if (!tls_) {
    *error = "secureClientPort: no TLS configuration";
    return false;
  }
  if (!bind(address, port, "secureClientPortAddress", &secure_acceptor_, error)) return false;
  secure_port_ = secure_acceptor_->local_endpoint().port();
  accept(*secure_acceptor_, true);
  return true;
}

bool NetworkPool::listen(const std::string& address, uint16_t port, std::string* error) {
  if (!bind(address, port, "clientPortAddress", &acceptor_, error)) return false;
  port_ = acceptor_->local_endpoint().port();
  accept(*acceptor_, false);
  if (tls_) tls_->watch(threads_[0]->io_.get_executor());
  for (auto& w : threads_) w->start();
  return true;
}

ConnectionSecurity NetworkPool::security_for(bool secure_only) const {
  ConnectionSecurity s;
  if (!tls_ || (!secure_only && !tls_->options().port_unification)) return s;
  s.tls = tls_->current();
  s.detect = !secure_only;
  s.handshake_timeout_ms = tls_->options().handshake_timeout_ms;
  return s;
}

HandshakeFigures NetworkPool::handshake_figures() const {
  HandshakeFigures f;
  f.outstanding_tls_handshakes = counters_.outstanding.load();
  f.unsuccessful_handshakes = counters_.unsuccessful.load();
  f.sessionless_closed = counters_.sessionless.load();
  if (tls_) {
    f.tls_reloads = static_cast<int64_t>(tls_->reloads());
    f.tls_failed_reloads = static_cast<int64_t>(tls_->failed_reloads());
  }
  return f;
}

NetworkPool::Worker& NetworkPool::worker_of(uint64_t conn) {
  return *threads_[conn % threads_.size()];
}

// On the acceptor's thread (worker 0). The socket is created on the io_context of the thread
// that will own the connection.
void NetworkPool::accept(asio::ip::tcp::acceptor& acceptor, bool secure_only) {
  const uint64_t id = next_conn_++;
  Worker& owner = worker_of(id);
  acceptor.async_accept(owner.io_, [this, id, &owner, &acceptor, secure_only](
                                       boost::system::error_code ec, asio::ip::tcp::socket socket) {
    if (stopped_) return;
    if (!ec) {
      asio::post(owner.io_, [this, id, &owner, s = std::move(socket), sec = security_for(secure_only)]() mutable {
        owner.adopt(std::move(s), id, limits_, clock_, std::move(sec));
      });
    } else if (ec == asio::error::operation_aborted) {
      return;
    } else {
      spdlog::warn("accept: {}", ec.message());
    }
    accept(acceptor, secure_only);
  });
}

void NetworkPool::stop() {
  if (stopped_.exchange(true)) return;
  to_state_.close();
  for (size_t i = 0; i < threads_.size(); ++i) {
    std::function<void()> also;
    if (i == 0 && acceptor_) {
      also = [this] {
        boost::system::error_code ec;
        acceptor_->close(ec);
        if (secure_acceptor_) secure_acceptor_->close(ec);
        if (tls_) tls_->stop();
      };
    }
    threads_[i]->stop(std::move(also));
  }
}

void NetworkPool::send(uint64_t conn, std::string framed) {
  worker_of(conn).stage(Op{conn, Send{std::move(framed)}});
}
void NetworkPool::close_after_flush(uint64_t conn) { worker_of(conn).stage(Op{conn, CloseAfterFlush{}}); }
void NetworkPool::close(uint64_t conn, std::string_view reason) {
  worker_of(conn).stage(Op{conn, Close{std::string(reason)}});
}
void NetworkPool::set_reading(uint64_t conn, bool reading) {
  worker_of(conn).stage(Op{conn, SetReading{reading}});
}
void NetworkPool::flush() {
  for (auto& w : threads_) w->hand_over();
}

}  // namespace zkraft::server
