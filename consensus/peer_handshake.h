#pragma once
// The handshake of a peer connection (peer_handshake.cc): what the dialer (Outbound) and the
// acceptor (Inbound) exchange after TCP connects them, before any Raft message:
//
//   [TLS handshake, both sides presenting certificates]     sslQuorum only
//   D -> A  Hello{from, to, cluster[, user, nonce]}
//   A -> D  Challenge, D -> A Auth                          quorum authentication only
//                                                           (peer_transport_auth.h)
//   A -> D  HelloAck{ok | why not}
//
// Invariants: a connection carries messages only after an ok HelloAck; the acceptor refuses a
// hello not addressed to it, from another cluster, or from an id that is not a configured peer
// (check_hello), and then closes; each side's handshake is bounded by
// PeerTransportOptions::handshake_timeout. This header holds the handshake's parts that need no
// connection; the steps themselves are members of the connections (peer_connections.h).

#include <string>

#include "consensus/peer_transport_frame.h"
#include "consensus/types.h"

namespace zkraft::consensus {

// transport::kNonceBytes from OpenSSL's CSPRNG; empty if it fails (the handshake then fails:
// never a predictable nonce).
std::string fresh_nonce();

// The acceptor's answer to a well-formed hello on identity alone (authentication comes after):
// ok, or the refusal naming why. `from_known`: the hello's `from` is a configured peer.
transport::HelloAck check_hello(const transport::Hello& hello, NodeId self, const std::string& cluster,
                                bool from_known);

}  // namespace zkraft::consensus
