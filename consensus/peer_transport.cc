// PeerTransport: the public calls (posted to the strand), the listener and the peer table
// (PeerTransport::Impl), and the connections' life outside their handshake: dialling and
// redialling with backoff, the bounded queue and gathered writes (Outbound), reading and
// splitting frames (Inbound). The handshake: peer_handshake.cc.
#include "consensus/peer_transport.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "consensus/peer_connections.h"

namespace zkraft::consensus {

using namespace peer_io;  // NOLINT: the connections' vocabulary

namespace peer_io {

// ---------------------------------------------------------------- Outbound

void Outbound::readdress(const std::string& host, uint16_t port) {
  if (host == host_ && port == port_) return;
  host_ = host;
  port_ = port;
  if (state_ != State::kClosed) fail("peer address changed", {});
}

void Outbound::enqueue(std::string payload) {
  queued_bytes_ += payload.size();
  queue_.push_back(std::move(payload));
  uint64_t dropped = 0;
  while (queue_.size() > 1 &&
         (queue_.size() > opts_.max_queue_messages || queued_bytes_ > opts_.max_queue_bytes)) {
    queued_bytes_ -= queue_.front().size();
    queue_.pop_front();
    ++dropped;
  }
  if (dropped > 0) {
    if (auto t = t_.lock()) add(t->c_.messages_dropped, dropped);
  }
  flush();
}

void Outbound::close() {
  state_ = State::kClosed;
  ++gen_;
  error_code ignore;
  sock_.close(ignore);
  timer_.cancel();
  resolver_.cancel();
  queue_.clear();
  queued_bytes_ = 0;
}

void Outbound::connect() {
  state_ = State::kConnecting;
  const uint64_t g = ++gen_;
  auto self = shared_from_this();
  resolver_.async_resolve(host_, std::to_string(port_), [this, self, g](error_code ec, tcp::resolver::results_type rs) {
    if (stale(g)) return;
    if (ec) return fail("resolve", ec);
    sock_.reset(opts_.tls_hostname_verification ? host_ : std::string());
    asio::async_connect(sock_.socket(), rs, [this, self, g](error_code ec, const tcp::endpoint&) {
      if (stale(g)) return;
      if (ec) return fail("connect", ec);
      error_code ignore;
      sock_.set_option(tcp::no_delay(true), ignore);
      tls_handshake(g);
    });
  });
}

void Outbound::established(uint64_t g) {
  state_ = State::kConnected;
  timer_.cancel();
  backoff_ = opts_.backoff_initial;
  if (auto t = t_.lock()) add(t->c_.connects);
  spdlog::debug("peer transport {}: connected to peer {} at {}:{}", opts_.self_id, id_, host_, port_);
  // The acceptor never sends after its ack: a completed read means the connection is gone.
  auto self = shared_from_this();
  sock_.async_read_some(asio::buffer(&probe_, 1), [this, self, g](error_code ec, size_t) {
    if (stale(g)) return;
    fail(ec ? "connection closed" : "unexpected data from acceptor", ec);
  });
  flush();
}

void Outbound::flush() {
  if (state_ != State::kConnected || writing_ || queue_.empty()) return;
  auto batch = std::make_shared<Batch>();
  size_t bytes = 0;
  while (!queue_.empty() && (batch->payloads.empty() || bytes + queue_.front().size() <= opts_.max_batch_bytes)) {
    bytes += queue_.front().size();
    queued_bytes_ -= queue_.front().size();
    batch->payloads.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  const size_t n = batch->payloads.size();
  batch->headers.assign(n * kHeaderBytes, '\0');
  batch->buffers.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    char* h = batch->headers.data() + i * kHeaderBytes;
    encode_header(FrameType::kMessage, static_cast<uint32_t>(batch->payloads[i].size()), h);
    batch->buffers.emplace_back(h, kHeaderBytes);
    batch->buffers.emplace_back(asio::buffer(batch->payloads[i]));
  }
  writing_ = true;
  const uint64_t g = gen_;
  auto self = shared_from_this();
  // `batch` rides along in the handler so its buffers outlive the operation even if we give up
  // on this connection meanwhile.
  asio::async_write(sock_, batch->buffers, [this, self, g, batch, bytes](error_code ec, size_t) {
    if (stale(g)) return;
    writing_ = false;
    if (ec) {
      if (auto t = t_.lock()) add(t->c_.messages_dropped, batch->payloads.size());
      return fail("write", ec);
    }
    if (auto t = t_.lock()) {
      add(t->c_.writes);
      add(t->c_.messages_sent, batch->payloads.size());
      add(t->c_.bytes_sent, bytes);
    }
    flush();
  });
}

void Outbound::fail(const char* what, error_code ec) {
  const bool was_connected = state_ == State::kConnected;
  ++gen_;
  error_code ignore;
  sock_.close(ignore);
  timer_.cancel();
  resolver_.cancel();
  writing_ = false;
  auto t = t_.lock();
  if (was_connected) {
    spdlog::info("peer transport {}: connection to peer {} lost ({}{}{})", opts_.self_id, id_, what,
                 ec ? ": " : "", ec ? ec.message() : "");
    if (t) t->peer_down(id_);
  } else {
    spdlog::debug("peer transport {}: dialling peer {} at {}:{} failed ({}{}{})", opts_.self_id, id_,
                  host_, port_, what, ec ? ": " : "", ec ? ec.message() : "");
    if (t) add(t->c_.connect_failures);
  }
  if (!t || t->stopped_.load()) {
    state_ = State::kClosed;
    return;
  }
  state_ = State::kBackoff;
  const uint64_t g = gen_;
  timer_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, opts_.backoff_max);
  auto self = shared_from_this();
  timer_.async_wait([this, self, g](error_code ec) {
    if (ec || stale(g) || state_ != State::kBackoff) return;
    connect();
  });
}

// ---------------------------------------------------------------- Inbound

void Inbound::close(const char* why, bool notify) {
  if (state_ == State::kClosed) return;
  const bool was_established = state_ == State::kEstablished;
  const bool challenged = state_ == State::kAuth;
  state_ = State::kClosed;
  error_code ignore;
  sock_.close(ignore);
  timer_.cancel();
  auto t = t_.lock();
  if (challenged) {
    // The dialer did not answer our challenge: it could not check our proof (another password)
    // or it is not a server at all. Either way an authentication that failed.
    if (t) add(t->c_.auth_failures);
    spdlog::warn("peer transport {}: connection from {} claiming server {} ended before it answered "
                 "the authentication challenge ({}): another quorum password?", opts_.self_id, remote_,
                 claimed_.from, why);
  }
  if (was_established) {
    spdlog::info("peer transport {}: connection from peer {} closed ({})", opts_.self_id, peer_id_, why);
    if (t && notify) t->peer_down(peer_id_);
  }
  if (t) t->forget_inbound(shared_from_this());
}

void Inbound::read() {
  if (state_ == State::kClosed) return;
  if (begin_ == end_) begin_ = end_ = 0;
  if (buf_.size() > 4 * kInitialBuffer && end_ - begin_ < kInitialBuffer && wanted_ <= kInitialBuffer) {
    // Shrink after a large frame.
    std::vector<char> small(kInitialBuffer);
    std::copy(buf_.begin() + begin_, buf_.begin() + end_, small.begin());
    end_ -= begin_;
    begin_ = 0;
    buf_.swap(small);
  }
  size_t need = std::max(wanted_, kHeaderBytes);
  if (buf_.size() - begin_ < need || buf_.size() - end_ < 4096) {
    std::copy(buf_.begin() + begin_, buf_.begin() + end_, buf_.begin());
    end_ -= begin_;
    begin_ = 0;
    if (buf_.size() < need) buf_.resize(need);
  }
  auto self = shared_from_this();
  sock_.async_read_some(asio::buffer(buf_.data() + end_, buf_.size() - end_), [this, self](error_code ec, size_t n) {
    if (state_ == State::kClosed) return;
    if (ec) return close(ec == asio::error::eof ? "closed by peer" : "read error");
    end_ += n;
    if (parse()) read();
  });
}

bool Inbound::parse() {
  while (end_ - begin_ >= kHeaderBytes) {
    FrameHeader h;
    HeaderError err = decode_header(buf_.data() + begin_, &h);
    const FrameType expected = state_ == State::kHandshake ? FrameType::kHello
                               : state_ == State::kAuth    ? FrameType::kAuth
                                                           : FrameType::kMessage;
    const uint32_t limit = state_ == State::kEstablished ? opts_.max_message_bytes : kMaxHandshakeBytes;
    if (err != HeaderError::kNone || h.type != expected || h.length > limit) {
      if (auto t = t_.lock()) add(t->c_.protocol_errors);
      spdlog::warn("peer transport {}: closing connection from {} at {}: {}", opts_.self_id,
                   peer_id_ ? "peer " + std::to_string(peer_id_) : std::string("unidentified peer"), remote_,
                   err != HeaderError::kNone ? "bad frame header"
                   : h.type != expected      ? "unexpected frame type"
                                             : "frame of " + std::to_string(h.length) + " bytes exceeds the limit");
      close("protocol error");
      return false;
    }
    if (end_ - begin_ < kHeaderBytes + h.length) {
      wanted_ = kHeaderBytes + h.length;
      return true;
    }
    std::string_view payload(buf_.data() + begin_ + kHeaderBytes, h.length);
    begin_ += kHeaderBytes + h.length;
    wanted_ = 0;
    if (state_ == State::kHandshake) {
      if (!on_hello(payload)) return false;
    } else if (state_ == State::kAuth) {
      if (!on_auth(payload)) return false;
    } else if (auto t = t_.lock()) {
      t->deliver(peer_id_, std::string(payload));
      if (state_ == State::kClosed) return false;  // a handler may have stopped us
    }
  }
  return true;
}

}  // namespace peer_io

// ---------------------------------------------------------------- PeerTransport

Status PeerTransport::Impl::listen(const std::string& host, uint16_t port) {
  error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return Status::invalid_argument("bad listen address '" + host + "': " + ec.message());
  tcp::endpoint ep(addr, port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignore;
    acceptor_.close(ignore);
    return Status::io_error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  }
  port_.store(acceptor_.local_endpoint(ec).port());
  asio::post(strand_, [self = shared_from_this()] { self->do_accept(); });
  return Status::ok();
}

void PeerTransport::Impl::do_accept() {
  if (stopped_.load() || !acceptor_.is_open()) return;
  acceptor_.async_accept(strand_, [self = shared_from_this()](error_code ec, tcp::socket sock) {
    if (self->stopped_.load()) return;
    if (!ec) {
      error_code ignore;
      sock.set_option(tcp::no_delay(true), ignore);
      auto in = std::make_shared<Inbound>(self, self->opts_, std::move(sock));
      self->inbound_.insert(in);
      in->start();
    } else if (ec == asio::error::operation_aborted) {
      return;
    } else {
      spdlog::warn("peer transport {}: accept failed: {}", self->opts_.self_id, ec.message());
    }
    self->do_accept();
  });
}

void PeerTransport::Impl::add_peer(NodeId id, const std::string& host, uint16_t port) {
  if (stopped_.load() || id == opts_.self_id) return;
  auto it = peers_.find(id);
  if (it != peers_.end()) {
    it->second->readdress(host, port);
    return;
  }
  auto out = std::make_shared<Outbound>(weak_from_this(), strand_, opts_, id, host, port);
  peers_.emplace(id, out);
  out->start();
}

void PeerTransport::Impl::remove_peer(NodeId id) {
  auto it = peers_.find(id);
  if (it != peers_.end()) {
    it->second->close();
    peers_.erase(it);
  }
  std::vector<std::shared_ptr<Inbound>> from;
  for (auto& in : inbound_) {
    if (in->peer_id() == id) from.push_back(in);
  }
  for (auto& in : from) in->close("peer removed", false);
}

void PeerTransport::Impl::send(NodeId to, std::string payload) {
  auto it = peers_.find(to);
  if (it == peers_.end() || stopped_.load()) {
    add(c_.messages_dropped);
    return;
  }
  it->second->enqueue(std::move(payload));
}

void PeerTransport::Impl::close_all() {
  error_code ignore;
  acceptor_.close(ignore);
  for (auto& [id, out] : peers_) out->close();
  peers_.clear();
  auto inbound = inbound_;
  for (auto& in : inbound) in->close("transport stopped", false);
  inbound_.clear();
}

PeerTransport::PeerTransport(asio::io_context& io, PeerTransportOptions options, Handlers handlers)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(handlers))) {}

PeerTransport::~PeerTransport() { stop(); }

Status PeerTransport::listen(const std::string& host, uint16_t port) { return impl_->listen(host, port); }

uint16_t PeerTransport::port() const { return impl_->port_.load(); }

void PeerTransport::add_peer(NodeId id, const std::string& host, uint16_t port) {
  asio::post(impl_->strand_, [impl = impl_, id, host, port] { impl->add_peer(id, host, port); });
}

void PeerTransport::remove_peer(NodeId id) {
  asio::post(impl_->strand_, [impl = impl_, id] { impl->remove_peer(id); });
}

void PeerTransport::send(NodeId to, std::string payload) {
  if (payload.size() > impl_->opts_.max_message_bytes) {
    add(impl_->c_.messages_dropped);
    spdlog::warn("peer transport {}: dropping a {}-byte message to {}: above the {}-byte limit",
                 impl_->opts_.self_id, payload.size(), to, impl_->opts_.max_message_bytes);
    return;
  }
  asio::post(impl_->strand_, [impl = impl_, to, p = std::move(payload)]() mutable { impl->send(to, std::move(p)); });
}

void PeerTransport::stop() {
  if (impl_->stopped_.exchange(true)) return;
  asio::post(impl_->strand_, [impl = impl_] { impl->close_all(); });
}

PeerTransportStats PeerTransport::stats() const {
  const Impl::Counters& c = impl_->c_;
  PeerTransportStats s;
  s.messages_sent = c.messages_sent.load();
  s.messages_received = c.messages_received.load();
  s.bytes_sent = c.bytes_sent.load();
  s.bytes_received = c.bytes_received.load();
  s.writes = c.writes.load();
  s.messages_dropped = c.messages_dropped.load();
  s.connects = c.connects.load();
  s.connect_failures = c.connect_failures.load();
  s.inbound_accepted = c.inbound_accepted.load();
  s.inbound_refused = c.inbound_refused.load();
  s.protocol_errors = c.protocol_errors.load();
  s.auth_failures = c.auth_failures.load();
  s.unauthenticated_accepted = c.unauthenticated_accepted.load();
  s.peer_down_events = c.peer_down_events.load();
  return s;
}

}  // namespace zkraft::consensus

