#pragma once
// Internal to the peer transport (peer_transport.cc, peer_handshake.cc): the transport's shared
// state (PeerTransport::Impl) and its two kinds of connection, Outbound (the one we dial to a
// peer, carrying our messages) and Inbound (one a peer dialled to us, carrying its messages).
// Everything here runs on the transport's strand, except the counters (atomics, read by stats()
// from any thread). The handshake of both kinds is in peer_handshake.cc, the rest of their
// life (dialling, queueing, writing, reading frames, failing) in peer_transport.cc.

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "consensus/peer_stream.h"
#include "consensus/peer_transport.h"
#include "consensus/peer_transport_frame.h"

namespace zkraft::consensus {

// The connections' names, kept out of zkraft::consensus itself.
namespace peer_io {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Strand = asio::strand<asio::io_context::executor_type>;
using namespace transport;  // NOLINT: the frame format is the connections' vocabulary

inline void add(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

class Outbound;
class Inbound;
}  // namespace peer_io

class PeerTransport::Impl : public std::enable_shared_from_this<PeerTransport::Impl> {
 public:
  Impl(boost::asio::io_context& io, PeerTransportOptions opts, Handlers handlers)
      : strand_(boost::asio::make_strand(io)), opts_(std::move(opts)), handlers_(std::move(handlers)),
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
    peer_io::add(c_.messages_received);
    peer_io::add(c_.bytes_received, payload.size());
    if (!stopped_.load() && handlers_.on_message) handlers_.on_message(from, std::move(payload));
  }
  void peer_down(NodeId id) {
    peer_io::add(c_.peer_down_events);
    if (!stopped_.load() && handlers_.on_peer_down) handlers_.on_peer_down(id);
  }
  void forget_inbound(const std::shared_ptr<peer_io::Inbound>& in) { inbound_.erase(in); }

  // Counted from any thread (stats() reads them), relaxed.
  struct Counters {
    std::atomic<uint64_t> messages_sent{0}, messages_received{0}, bytes_sent{0}, bytes_received{0},
        writes{0}, messages_dropped{0}, connects{0}, connect_failures{0}, inbound_accepted{0},
        inbound_refused{0}, protocol_errors{0}, auth_failures{0}, unauthenticated_accepted{0},
        peer_down_events{0};
  };

  peer_io::Strand strand_;
  PeerTransportOptions opts_;
  Handlers handlers_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::atomic<uint16_t> port_{0};
  std::atomic<bool> stopped_{false};
  Counters c_;
  // Strand-only state.
  std::map<NodeId, std::shared_ptr<peer_io::Outbound>> peers_;
  std::set<std::shared_ptr<peer_io::Inbound>> inbound_;
};

namespace peer_io {

// The connection we dial to one peer, carrying our messages to it. Owns its bounded queue and
// redials with backoff whenever the connection fails. Strand-only.
class Outbound : public std::enable_shared_from_this<Outbound> {
 public:
  Outbound(std::weak_ptr<PeerTransport::Impl> t, const Strand& strand, const PeerTransportOptions& opts,
           NodeId id, std::string host, uint16_t port)
      : t_(std::move(t)), opts_(opts), id_(id), host_(std::move(host)), port_(port), sock_(strand, opts.tls),
        resolver_(strand), timer_(strand), backoff_(opts.backoff_initial) {}

  void start() { connect(); }

  void readdress(const std::string& host, uint16_t port);
  void enqueue(std::string payload);
  void close();

 private:
  enum class State { kBackoff, kConnecting, kHandshake, kConnected, kClosed };

  // Every async operation carries the generation it was started in; a failure bumps the
  // generation, so late completions of an abandoned attempt are ignored.
  bool stale(uint64_t g) const { return g != gen_ || state_ == State::kClosed; }

  void connect();

  // The handshake (peer_handshake.cc). sslQuorum: TLS first (both sides present certificates),
  // then the hello inside it.
  void tls_handshake(uint64_t g);
  void handshake(uint64_t g);

  // Reads the acceptor's next handshake frame: a challenge (it authenticates) or the ack.
  void read_handshake_frame(uint64_t g);
  void on_challenge(uint64_t g);

  // Connected, and after (peer_transport.cc).
  void established(uint64_t g);
  void flush();
  void fail(const char* what, error_code ec);

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

  // Starts the handshake (peer_handshake.cc): TLS if configured, then the hello is awaited.
  void start();

  NodeId peer_id() const { return peer_id_; }

  // Ends the connection; tells the owner about a lost peer if the handshake had completed.
  void close(const char* why, bool notify = true);

 private:
  // kAuth: a challenge is out, the dialer's proof is awaited.
  enum class State { kHandshake, kAuth, kEstablished, kClosed };
  static constexpr size_t kInitialBuffer = 64 * 1024;

  void read();

  // Handles every complete frame in the buffer; false if the connection was closed.
  bool parse();
  // The handshake frames (peer_handshake.cc); false if the connection was closed.
  bool on_hello(std::string_view payload);
  bool on_auth(std::string_view payload);
  bool accept(PeerTransport::Impl& t);

  // Sends the refusal, then closes; nothing more is read from this connection.
  bool refuse(PeerTransport::Impl& t, NodeId claimed, const HelloAck& ack, bool auth_failure);

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

}  // namespace peer_io
}  // namespace zkraft::consensus
