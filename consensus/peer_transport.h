#pragma once
// PeerTransport: carries opaque Raft message bytes between server ids over TCP (Boost.Asio).
//
// Each server listens once and dials every configured peer for its own outbound traffic, so
// between two servers there are two one-way connections. A connection starts with a handshake
// (ids, optional cluster name; unknown ids are refused), then carries framed messages (see
// peer_transport_frame.h). Whatever queued while a write was in flight goes out as one gathered
// write. Outbound queues are bounded and drop the OLDEST messages when full: Raft tolerates loss
// and retransmits, and the newest messages are the most useful. Broken or refused connections
// are redialled with exponential backoff.
//
// Threads: all work runs on a strand of the given io_context; send/add_peer/remove_peer/stop may be
// called from any thread. Handlers run on that strand: keep them short (post heavy work elsewhere)
// and do not block. on_peer_down(id) fires whenever an established connection to or from `id`
// breaks (so possibly twice for one failure, once per direction); callers use it to notice a dead
// leader quickly instead of waiting for an election timeout.
//
// Delivery: at most once, in order per connection; no delivery across a reconnect is promised.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "consensus/peer_transport_auth.h"
#include "consensus/status.h"
#include "consensus/types.h"

namespace zkraft::consensus {

struct PeerTransportOptions {
  NodeId self_id = 0;
  // If non-empty on either side, both sides must use the same name.
  std::string cluster_name;
  // Quorum authentication (off by default).
  PeerAuthOptions auth;
  // Largest message payload accepted or sent; a bigger incoming frame closes the connection.
  uint32_t max_message_bytes = 16u << 20;
  // Per-peer outbound queue bounds (oldest dropped beyond either).
  size_t max_queue_messages = 8192;
  size_t max_queue_bytes = 64u << 20;
  // Upper bound of one gathered write (at least one message is always written).
  size_t max_batch_bytes = 1u << 20;
  std::chrono::milliseconds backoff_initial{50};
  std::chrono::milliseconds backoff_max{2000};
  std::chrono::milliseconds handshake_timeout{5000};
  // sslQuorum: mutual TLS on every peer connection, the peer's certificate checked against the
  // context's trust store (built by the server, server/tls_context.h); null = plain TCP.
  std::shared_ptr<boost::asio::ssl::context> tls;
  bool tls_hostname_verification = true;  // the dialling side checks the peer's name
};

// Counters since start, readable from any thread.
struct PeerTransportStats {
  uint64_t messages_sent = 0;      // written to a socket
  uint64_t messages_received = 0;  // delivered to on_message
  uint64_t bytes_sent = 0;         // payload bytes
  uint64_t bytes_received = 0;
  uint64_t writes = 0;             // gathered socket writes (messages_sent / writes = batching)
  uint64_t messages_dropped = 0;   // queue overflow, unknown peer, oversized, or lost on a break
  uint64_t connects = 0;           // outbound handshakes that succeeded
  uint64_t connect_failures = 0;   // outbound dials or handshakes that failed
  uint64_t inbound_accepted = 0;   // inbound handshakes we accepted
  uint64_t inbound_refused = 0;    // inbound handshakes we refused (unknown id, wrong cluster...)
  uint64_t protocol_errors = 0;    // bad magic/version/type or oversized frames received
  // Inbound handshakes that failed authentication: no credential where one is required, an
  // unknown user or a wrong proof (each also in inbound_refused, and logged with the address).
  uint64_t auth_failures = 0;
  // Inbound peers let in without authenticating (auth enabled but not required: rolling upgrade).
  uint64_t unauthenticated_accepted = 0;
  uint64_t peer_down_events = 0;
};

class PeerTransport {
 public:
  struct Handlers {
    std::function<void(NodeId from, std::string payload)> on_message;
    std::function<void(NodeId peer)> on_peer_down;
  };

  PeerTransport(boost::asio::io_context& io, PeerTransportOptions options, Handlers handlers);
  // Calls stop().
  ~PeerTransport();
  PeerTransport(const PeerTransport&) = delete;
  PeerTransport& operator=(const PeerTransport&) = delete;

  // Binds and starts accepting (synchronous bind, so a port-in-use error is returned here).
  // Port 0 picks an ephemeral port; see port().
  Status listen(const std::string& host, uint16_t port);
  uint16_t port() const;

  // Adds or re-addresses a peer: it may then connect to us, and we start dialling it.
  void add_peer(NodeId id, const std::string& host, uint16_t port);
  // Forgets a peer: drops its queue, closes connections to and from it, refuses it from now on.
  void remove_peer(NodeId id);

  // Queues `payload` for peer `to`. Never blocks; drops (and counts) when the peer is unknown, the
  // payload exceeds max_message_bytes, or the queue overflows (dropping the oldest).
  void send(NodeId to, std::string payload);

  // Closes the listener and all connections. After it returns no new handler call starts.
  void stop();

  PeerTransportStats stats() const;

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace zkraft::consensus
