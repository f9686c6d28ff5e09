// The handshake of a peer connection, both sides, after the TCP connect or accept: TLS when
// sslQuorum is on, then the hello, the challenge-response when quorum authentication is on
// (peer_transport_auth.h has the exchange and what it proves), and the ack. A connection carries
// messages only once its handshake succeeded; any failure or timeout closes it (the dialer then
// redials with backoff, peer_transport.cc).
#include "consensus/peer_handshake.h"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include "consensus/peer_connections.h"

namespace zkraft::consensus {

using namespace peer_io;  // NOLINT: the connections' vocabulary

std::string fresh_nonce() {
  std::string n(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(n.data()), static_cast<int>(n.size())) != 1) return {};
  return n;
}

transport::HelloAck check_hello(const transport::Hello& hello, NodeId self, const std::string& cluster,
                                bool from_known) {
  transport::HelloAck ack;
  if (hello.to != self) {
    ack = {AckCode::kWrongTarget, "this is server " + std::to_string(self) + ", not " + std::to_string(hello.to)};
  } else if (hello.cluster != cluster) {
    ack = {AckCode::kWrongCluster, "cluster '" + cluster + "' != '" + hello.cluster + "'"};
  } else if (hello.from == self || !from_known) {
    ack = {AckCode::kUnknownId, "server id " + std::to_string(hello.from) + " is not a configured peer"};
  }
  return ack;
}

namespace peer_io {

// ---------------------------------------------------------------- the dialer's side (Outbound)

void Outbound::tls_handshake(uint64_t g) {
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

void Outbound::handshake(uint64_t g) {
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

void Outbound::read_handshake_frame(uint64_t g) {
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

void Outbound::on_challenge(uint64_t g) {
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

// ---------------------------------------------------------------- the acceptor's side (Inbound)

void Inbound::start() {
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

bool Inbound::on_hello(std::string_view payload) {
  auto t = t_.lock();
  if (!t) return false;
  auto hello = decode_hello(payload);
  if (!hello) {
    add(t->c_.protocol_errors);
    spdlog::warn("peer transport {}: closing connection from {}: malformed hello", opts_.self_id, remote_);
    close("malformed hello");
    return false;
  }
  const HelloAck ack = check_hello(*hello, opts_.self_id, opts_.cluster_name, t->peer_known(hello->from));
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

bool Inbound::on_auth(std::string_view payload) {
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

bool Inbound::accept(PeerTransport::Impl& t) {
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

bool Inbound::refuse(PeerTransport::Impl& t, NodeId claimed, const HelloAck& ack, bool auth_failure) {
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

}  // namespace peer_io
}  // namespace zkraft::consensus
