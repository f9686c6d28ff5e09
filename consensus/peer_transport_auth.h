#pragma once
// Peer authentication for the transport's handshake: a mutual challenge-response over a shared
// secret (the learner's password, as ZooKeeper's quorum.auth.* with a DigestLoginModule JAAS file
// configures it). On one connection (the dialer D carries its messages to the acceptor A):
//
//   D -> A  Hello{from, to, cluster, user, nonce_d}        nonce_d: 32 fresh random bytes
//   A -> D  Challenge{nonce_a, proof_a}                     proof_a = HMAC(pw, "A" | transcript)
//   D -> A  Auth{proof_d}                                   proof_d = HMAC(pw, "D" | transcript)
//   A -> D  HelloAck{ok}
//
// transcript = from, to, cluster, user, nonce_d, nonce_a (lengths framed), so a proof is bound to
// the ids it claims and to both sides' fresh nonces: it cannot be replayed on another connection,
// reflected (the role byte differs), or moved to another claimed id. Both proofs are compared in
// constant time. HMAC-SHA256 is OpenSSL's.
//
// What it does not do: authenticate each frame after the handshake. A process that can reach the
// peer port but is not on the path cannot deliver a message; an attacker on the path between two
// servers can, and sslQuorum (TLS) is the answer to that.
//
// Pure: no clock, socket or randomness (nonces are the caller's).

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "consensus/types.h"

namespace zkraft::consensus {

// The transport's view of quorum authentication; server/peer_auth.h builds it from the config and
// the JAAS file (consensus knows neither). Invariant: require_* imply enabled.
struct PeerAuthOptions {
  // quorum.auth.enableSasl: dial with credentials and answer challenges. Alone (not required) it is
  // ZooKeeper's rolling-upgrade mode: peers that do not try to authenticate are still let in.
  bool enabled = false;
  // quorum.auth.serverRequireSasl: refuse dialers that do not authenticate.
  bool require_inbound = false;
  // quorum.auth.learnerRequireSasl: refuse to send to an acceptor that does not prove itself.
  bool require_outbound = false;
  // Our identity when we dial (QuorumLearner's username/password).
  std::string user;
  std::string password;
  // Acceptor side: the password of a learner user (QuorumServer's user_NAME), nullopt if unknown.
  std::function<std::optional<std::string>(std::string_view user)> password_of;
};

namespace transport {

inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kProofBytes = 32;  // HMAC-SHA256

enum class ProofRole : char { kAcceptor = 'A', kDialer = 'D' };

// What both sides' proofs are computed over.
struct AuthTranscript {
  NodeId from = 0;
  NodeId to = 0;
  std::string_view cluster;
  std::string_view user;
  std::string_view dialer_nonce;
  std::string_view acceptor_nonce;
};

// HMAC-SHA256(password, "zkraft-peer-auth-1" | role | transcript), kProofBytes bytes.
std::string auth_proof(std::string_view password, ProofRole role, const AuthTranscript& t);

// Constant-time equality of two proofs (false if a length differs, which leaks only the length).
bool proofs_equal(std::string_view a, std::string_view b);

}  // namespace transport
}  // namespace zkraft::consensus
