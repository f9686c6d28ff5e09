#include "consensus/peer_transport.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <deque>
#include <map>
#include <set>

#include "consensus/peer_stream.h"
#include "consensus/peer_transport_frame.h"

namespace zkraft::consensus {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using namespace transport;  // NOLINT: the frame format is this file's vocabulary

namespace {

using Strand = asio::strand<asio::io_context::executor_type>;

struct Counters {
  std::atomic<uint64_t> messages_sent{0}, messages_received{0}, bytes_sent{0}, bytes_received{0},
      writes{0}, messages_dropped{0}, connects{0}, connect_failures{0}, inbound_accepted{0},
      inbound_refused{0}, protocol_errors{0}, auth_failures{0}, unauthenticated_accepted{0},
      peer_down_events{0};
};

void add(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

// kNonceBytes from OpenSSL's CSPRNG; empty if it fails (the handshake then fails: never a
// predictable nonce).
std::string fresh_nonce() {
  std::string n(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(n.data()), static_cast<int>(n.size())) != 1) return {};
  return n;
}

}  // namespace

class Outbound;
class Inbound;

class PeerTransport::Impl : public std::enable_shared_from_this<PeerTransport::Impl> {
 public:
  Impl(asio::io_context& io, PeerTransportOptions opts, Handlers handlers)
      : strand_(asio::make_strand(io)), opts_(std::move(opts)), handlers_(std::move(handlers)),
        acceptor_(strand_) {}
  ~Impl() { close_all(); }

  Status listen(const std::string& host, uint16_t port);
  void do_accept();
  void add_peer(NodeId id, const std::string& host, uint16_t port);
  void remove_peer(NodeId id);
  void send(NodeId to, std::string payload);
  void close_all();

  bool peer_known(NodeId id) const { return peers_.count(id) != 0; }
  void deliver(NodeId from, std::string payload) {
    add(c_.messages_received);
    add(c_.bytes_received, payload.size());
    if (!stopped_.load() && handlers_.on_message) handlers_.on_message(from, std::move(payload));
  }
  void peer_down(NodeId id) {
    add(c_.peer_down_events);
    if (!stopped_.load() && handlers_.on_peer_down) handlers_.on_peer_down(id);
  }
  void forget_inbound(const std::shared_ptr<Inbound>& in) { inbound_.erase(in); }

  Strand strand_;
  PeerTransportOptions opts_;
  Handlers handlers_;
  tcp::acceptor acceptor_;
  std::atomic<uint16_t> port_{0};
  std::atomic<bool> stopped_{false};
  Counters c_;
  // Strand-only state.
  std::map<NodeId, std::shared_ptr<Outbound>> peers_;
  std::set<std::shared_ptr<Inbound>> inbound_;
};

// The connection we dial to one peer, carrying our messages to it. Owns its bounded queue and
// redials with backoff whenever the connection fails. Strand-only.
class Outbound : public std::enable_shared_from_this<Outbound> {
 public:
  Outbound(std::weak_ptr<PeerTransport::Impl> t, const Strand& strand, const PeerTransportOptions& opts,
           NodeId id, std::string host, uint16_t port)
      : t_(std::move(t)), opts_(opts), id_(id), host_(std::move(host)), port_(port), sock_(strand, opts.tls),
        resolver_(strand), timer_(strand), backoff_(opts.backoff_initial) {}

  void start() { connect(); }

  void readdress(const std::string& host, uint16_t port) {
    if (host == host_ && port == port_) return;
    host_ = host;
    port_ = port;
    if (state_ != State::kClosed) fail("peer address changed", {});
  }

  void enqueue(std::string payload) {
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

  void close() {
    state_ = State::kClosed;
    ++gen_;
    error_code ignore;
    sock_.close(ignore);
    timer_.cancel();
    resolver_.cancel();
    queue_.clear();
    queued_bytes_ = 0;
  }

 private:
  enum class State { kBackoff, kConnecting, kHandshake, kConnected, kClosed };

  // Every async operation carries the generation it was started in; a failure bumps the
  // generation, so late completions of an abandoned attempt are ignored.
  bool stale(uint64_t g) const { return g != gen_ || state_ == State::kClosed; }

  void connect() {
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

  // sslQuorum: TLS first (both sides present certificates), then the hello inside it.
  void tls_handshake(uint64_t g) {
    if (!sock_.secure()) return handshake(g);
    state_ = State::kHandshake;
    auto self = shared_from_this();
    timer_.expires_after(opts_.handshake_timeout);
    timer_.async_wait([this, self, g](error_code ec) {
      if (!ec && !stale(g) && state_ == State::kHandshake) fail("TLS handshake timeout", {});
    });
    sock_.async_handshake(asio::ssl::stream_base::client, [this, self, g](error_code ec) {
      if (stale(g)) return;
      if (ec) {
        spdlog::warn("peer transport {}: TLS handshake with peer {} at {}:{} failed: {}", opts_.self_id, id_,
                     host_, port_, ec.message());
        return fail("TLS handshake", ec);
      }
      handshake(g);
    });
  }

  void handshake(uint64_t g) {
    state_ = State::kHandshake;
    proved_ = false;
    auto self = shared_from_this();
    timer_.expires_after(opts_.handshake_timeout);
    timer_.async_wait([this, self, g](error_code ec) {
      if (!ec && !stale(g) && state_ == State::kHandshake) fail("handshake timeout", {});
    });
    Hello hello{opts_.self_id, id_, opts_.cluster_name};
    if (opts_.auth.enabled) {
      hello.user = opts_.auth.user;
      hello.nonce = fresh_nonce();
      if (hello.nonce.empty()) return fail("no random nonce", {});
    }
    hello_fields_ = hello;
    hello_ = encode_hello(hello);
    asio::async_write(sock_, asio::buffer(hello_), [this, self, g](error_code ec, size_t) {
      if (stale(g)) return;
      if (ec) return fail("send hello", ec);
      read_handshake_frame(g);
    });
  }

  // Reads the acceptor's next handshake frame: a challenge (it authenticates) or the ack.
  void read_handshake_frame(uint64_t g) {
    auto self = shared_from_this();
    asio::async_read(sock_, asio::buffer(ack_header_, kHeaderBytes), [this, self, g](error_code ec, size_t) {
      if (stale(g)) return;
      if (ec) return fail("read hello ack", ec);
      FrameHeader h;
      if (decode_header(ack_header_, &h) != HeaderError::kNone ||
          (h.type != FrameType::kHelloAck && h.type != FrameType::kChallenge) || h.length > kMaxHandshakeBytes) {
        return fail("malformed hello ack", {});
      }
      ack_payload_.assign(h.length, '\0');
      asio::async_read(sock_, asio::buffer(ack_payload_), [this, self, g, type = h.type](error_code ec, size_t) {
        if (stale(g)) return;
        if (ec) return fail("read hello ack", ec);
        if (type == FrameType::kChallenge) return on_challenge(g);
        auto ack = decode_hello_ack(ack_payload_);
        if (!ack) return fail("malformed hello ack", {});
        if (ack->code != AckCode::kOk) {
          spdlog::warn("peer transport {}: peer {} at {}:{} refused us: {}", opts_.self_id, id_, host_,
                       port_, ack->reason);
          return fail("refused", {});
        }
        if (opts_.auth.require_outbound && !proved_) {
          // quorum.auth.learnerRequireSasl: an acceptor that did not prove it knows the secret
          // may be anyone; our messages are not for it.
          spdlog::warn("peer transport {}: peer {} at {}:{} did not authenticate and "
                       "quorum.auth.learnerRequireSasl is set: not sending to it", opts_.self_id, id_, host_, port_);
          return fail("peer did not authenticate", {});
        }
        established(g);
      });
    });
  }

  void on_challenge(uint64_t g) {
    auto c = decode_challenge(ack_payload_);
    if (!c || hello_fields_.nonce.empty() || proved_) return fail("unexpected challenge", {});
    AuthTranscript t{opts_.self_id, id_, hello_fields_.cluster, hello_fields_.user, hello_fields_.nonce, c->nonce};
    if (!proofs_equal(auth_proof(opts_.auth.password, ProofRole::kAcceptor, t), c->proof)) {
      spdlog::warn("peer transport {}: peer {} at {}:{} failed to authenticate (wrong proof: another "
                   "password for learner user '{}'?): not sending to it", opts_.self_id, id_, host_, port_,
                   hello_fields_.user);
      return fail("peer failed authentication", {});
    }
    proved_ = true;
    auth_ = encode_auth(auth_proof(opts_.auth.password, ProofRole::kDialer, t));
    auto self = shared_from_this();
    asio::async_write(sock_, asio::buffer(auth_), [this, self, g](error_code ec, size_t) {
      if (stale(g)) return;
      if (ec) return fail("send auth", ec);
      read_handshake_frame(g);
    });
  }

  void established(uint64_t g) {
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

  void flush() {
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

  void fail(const char* what, error_code ec) {
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

  struct Batch {
    std::vector<std::string> payloads;
    std::string headers;
    std::vector<asio::const_buffer> buffers;
  };

  std::weak_ptr<PeerTransport::Impl> t_;
  PeerTransportOptions opts_;  // a copy: handlers may outlive the transport
  NodeId id_;
  std::string host_;
  uint16_t port_;
  PeerStream sock_;
  tcp::resolver resolver_;
  asio::steady_timer timer_;
  std::chrono::milliseconds backoff_;
  State state_ = State::kBackoff;
  uint64_t gen_ = 0;
  std::deque<std::string> queue_;
  size_t queued_bytes_ = 0;
  bool writing_ = false;
  std::string hello_;
  Hello hello_fields_;
  bool proved_ = false;  // the acceptor proved itself on this attempt
  std::string auth_;
  char ack_header_[kHeaderBytes] = {};
  std::string ack_payload_;
  char probe_ = 0;
};

// A connection a peer dialled to us, carrying its messages. Reads in bulk and splits frames out
// of its buffer. Strand-only.
class Inbound : public std::enable_shared_from_this<Inbound> {
 public:
  Inbound(std::weak_ptr<PeerTransport::Impl> t, const PeerTransportOptions& opts, tcp::socket sock)
      : t_(std::move(t)), opts_(opts), sock_(std::move(sock), opts.tls), timer_(sock_.get_executor()) {
    buf_.resize(kInitialBuffer);
    error_code ec;
    auto ep = sock_.socket().remote_endpoint(ec);
    remote_ = ec ? std::string("unknown address") : ep.address().to_string() + ":" + std::to_string(ep.port());
  }

  void start() {
    auto self = shared_from_this();
    timer_.expires_after(opts_.handshake_timeout);
    timer_.async_wait([this, self](error_code ec) {
      if (!ec && (state_ == State::kHandshake || state_ == State::kAuth)) close("handshake timeout");
    });
    if (!sock_.secure()) return read();
    sock_.async_handshake(asio::ssl::stream_base::server, [this, self](error_code ec) {
      if (state_ == State::kClosed) return;
      if (ec) {
        error_code ignore;
        const auto remote = sock_.socket().remote_endpoint(ignore);
        if (auto t = t_.lock()) add(t->c_.inbound_refused);
        spdlog::warn("peer transport {}: refusing connection from {}:{}: TLS handshake failed: {}", opts_.self_id,
                     remote.address().to_string(), remote.port(), ec.message());
        return close("TLS handshake failed");
      }
      read();
    });
  }

  NodeId peer_id() const { return peer_id_; }

  // Ends the connection; tells the owner about a lost peer if the handshake had completed.
  void close(const char* why, bool notify = true) {
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

 private:
  // kAuth: a challenge is out, the dialer's proof is awaited.
  enum class State { kHandshake, kAuth, kEstablished, kClosed };
  static constexpr size_t kInitialBuffer = 64 * 1024;

  void read() {
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

  // Handles every complete frame in the buffer; false if the connection was closed.
  bool parse() {
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

  bool on_hello(std::string_view payload) {
    auto t = t_.lock();
    if (!t) return false;
    auto hello = decode_hello(payload);
    HelloAck ack;
    if (!hello) {
      add(t->c_.protocol_errors);
      spdlog::warn("peer transport {}: closing connection from {}: malformed hello", opts_.self_id, remote_);
      close("malformed hello");
      return false;
    }
    if (hello->to != opts_.self_id) {
      ack = {AckCode::kWrongTarget, "this is server " + std::to_string(opts_.self_id) + ", not " + std::to_string(hello->to)};
    } else if (hello->cluster != opts_.cluster_name) {
      ack = {AckCode::kWrongCluster, "cluster '" + opts_.cluster_name + "' != '" + hello->cluster + "'"};
    } else if (hello->from == opts_.self_id || !t->peer_known(hello->from)) {
      ack = {AckCode::kUnknownId, "server id " + std::to_string(hello->from) + " is not a configured peer"};
    }
    if (ack.code != AckCode::kOk) return refuse(*t, hello->from, ack, false);
    claimed_ = *hello;
    const PeerAuthOptions& auth = opts_.auth;
    if (auth.enabled && !hello->nonce.empty()) {
      std::optional<std::string> password = auth.password_of ? auth.password_of(hello->user) : std::nullopt;
      if (!password) {
        // The same answer as a wrong proof: the refusal does not tell which users exist.
        spdlog::debug("peer transport {}: learner user '{}' from {} is not in the server's users",
                      opts_.self_id, hello->user, remote_);
        return refuse(*t, hello->from, {AckCode::kAuthFailed, "authentication failed"}, true);
      }
      password_ = std::move(*password);
      acceptor_nonce_ = fresh_nonce();
      if (acceptor_nonce_.empty()) return refuse(*t, hello->from, {AckCode::kAuthFailed, "no random nonce"}, true);
      AuthTranscript tr{hello->from, hello->to, hello->cluster, hello->user, hello->nonce, acceptor_nonce_};
      state_ = State::kAuth;
      auto frame = std::make_shared<std::string>(
          encode_challenge(Challenge{acceptor_nonce_, auth_proof(password_, ProofRole::kAcceptor, tr)}));
      auto self = shared_from_this();
      asio::async_write(sock_, asio::buffer(*frame), [this, self, frame](error_code ec, size_t) {
        if (ec && state_ != State::kClosed) close("challenge write failed");
      });
      return true;
    }
    if (auth.require_inbound) {
      return refuse(*t, hello->from,
                    {AckCode::kAuthRequired, "authentication required (quorum.auth.serverRequireSasl)"}, true);
    }
    if (auth.enabled) {
      add(t->c_.unauthenticated_accepted);
      spdlog::warn("peer transport {}: server {} at {} did not authenticate; let in because "
                   "quorum.auth.serverRequireSasl is false", opts_.self_id, hello->from, remote_);
    }
    return accept(*t);
  }

  bool on_auth(std::string_view payload) {
    auto t = t_.lock();
    if (!t) return false;
    auto proof = decode_auth(payload);
    AuthTranscript tr{claimed_.from, claimed_.to, claimed_.cluster, claimed_.user, claimed_.nonce, acceptor_nonce_};
    const bool ok = proof && proofs_equal(auth_proof(password_, ProofRole::kDialer, tr), *proof);
    password_.clear();
    // One attempt per connection and per acceptor nonce: a proof is never checked twice.
    acceptor_nonce_.clear();
    if (!ok) return refuse(*t, claimed_.from, {AckCode::kAuthFailed, "authentication failed"}, true);
    spdlog::debug("peer transport {}: server {} at {} authenticated as '{}'", opts_.self_id, claimed_.from,
                  remote_, claimed_.user);
    return accept(*t);
  }

  bool accept(PeerTransport::Impl& t) {
    peer_id_ = claimed_.from;
    state_ = State::kEstablished;
    timer_.cancel();
    add(t.c_.inbound_accepted);
    auto frame = std::make_shared<std::string>(encode_hello_ack(HelloAck{}));
    auto self = shared_from_this();
    asio::async_write(sock_, asio::buffer(*frame), [this, self, frame](error_code ec, size_t) {
      if (ec && state_ != State::kClosed) close("ack write failed");
    });
    return true;
  }

  // Sends the refusal, then closes; nothing more is read from this connection.
  bool refuse(PeerTransport::Impl& t, NodeId claimed, const HelloAck& ack, bool auth_failure) {
    add(t.c_.inbound_refused);
    if (auth_failure) add(t.c_.auth_failures);
    spdlog::warn("peer transport {}: refusing connection from {} claiming server {}: {}", opts_.self_id,
                 remote_, claimed, ack.reason);
    state_ = State::kClosed;  // stop reading; close once the refusal is out
    timer_.cancel();
    password_.clear();
    auto frame = std::make_shared<std::string>(encode_hello_ack(ack));
    auto self = shared_from_this();
    asio::async_write(sock_, asio::buffer(*frame), [this, self, frame](error_code, size_t) {
      error_code ignore;
      sock_.close(ignore);
      if (auto t = t_.lock()) t->forget_inbound(self);
    });
    return false;
  }

  std::weak_ptr<PeerTransport::Impl> t_;
  PeerTransportOptions opts_;  // a copy: handlers may outlive the transport
  PeerStream sock_;
  asio::steady_timer timer_;
  State state_ = State::kHandshake;
  NodeId peer_id_ = 0;  // set once the handshake completes
  std::string remote_;  // address:port, for the logs
  Hello claimed_;       // the hello, kept for the auth transcript
  std::string password_;
  std::string acceptor_nonce_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  size_t wanted_ = 0;  // bytes the current partial frame needs in total
};

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
  const Counters& c = impl_->c_;
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
