// Peer authentication in the transport handshake (consensus/peer_transport_auth.h): the pure
// proof and frame functions, then loopback transports and a hand-written client speaking the frame
// format, as a rogue process on the peer port would. Every refusal is checked by what did NOT
// happen: no message delivered, no connection established. Waits use generous deadlines only to
// fail instead of hanging.

#include <gtest/gtest.h>

#include "transport_test_util.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "consensus/peer_transport.h"
#include "consensus/peer_transport_auth.h"
#include "consensus/peer_transport_frame.h"

namespace zkraft::consensus {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace transport;  // NOLINT

using testing::wait_until;

// ---- pure parts ----

AuthTranscript sample() {
  static const std::string dn(kNonceBytes, 'd'), an(kNonceBytes, 'a');
  return AuthTranscript{1, 2, "zk", "learner", dn, an};
}

TEST(PeerAuthProof, BoundToRolePasswordAndEveryTranscriptField) {
  const std::string base = auth_proof("pw", ProofRole::kDialer, sample());
  ASSERT_EQ(base.size(), kProofBytes);
  EXPECT_EQ(auth_proof("pw", ProofRole::kDialer, sample()), base);  // deterministic
  EXPECT_NE(auth_proof("pw", ProofRole::kAcceptor, sample()), base);  // no reflection
  EXPECT_NE(auth_proof("pW", ProofRole::kDialer, sample()), base);
  EXPECT_NE(auth_proof("", ProofRole::kDialer, sample()), base);
  const std::string other_nonce(kNonceBytes, 'x');
  std::vector<AuthTranscript> changed(7, sample());
  changed[0].from = 3;
  changed[1].to = 3;
  changed[2].cluster = "zk2";
  changed[3].user = "learner2";
  changed[4].dialer_nonce = other_nonce;
  changed[5].acceptor_nonce = other_nonce;
  // Field boundaries matter: moving a byte from cluster to user is another transcript.
  changed[6].cluster = "zkl";
  changed[6].user = "earner";
  for (const auto& t : changed) EXPECT_NE(auth_proof("pw", ProofRole::kDialer, t), base);
}

TEST(PeerAuthProof, ProofsEqualIsExactAndWantsFullLength) {
  const std::string p = auth_proof("pw", ProofRole::kDialer, sample());
  EXPECT_TRUE(proofs_equal(p, p));
  std::string q = p;
  q[kProofBytes - 1] ^= 1;
  EXPECT_FALSE(proofs_equal(p, q));
  EXPECT_FALSE(proofs_equal(p.substr(0, 16), p.substr(0, 16)));  // a short proof never matches
  EXPECT_FALSE(proofs_equal("", ""));
}

TEST(PeerAuthFrames, HelloWithCredentialsChallengeAndAuthRoundTrip) {
  Hello h{7, 9, "zk-prod", "learner", std::string(kNonceBytes, 'n')};
  std::string f = encode_hello(h);
  EXPECT_EQ(decode_hello(std::string_view(f).substr(kHeaderBytes)), h);
  // Without credentials the hello is the one servers without authentication send.
  EXPECT_EQ(encode_hello(Hello{7, 9, "zk-prod"}), encode_hello(Hello{7, 9, "zk-prod", "ignored", ""}));
  // A truncated nonce is malformed, not "no credentials".
  EXPECT_FALSE(decode_hello(std::string_view(f).substr(kHeaderBytes, f.size() - kHeaderBytes - 1)));

  Challenge c{std::string(kNonceBytes, 'c'), std::string(kProofBytes, 'p')};
  std::string cf = encode_challenge(c);
  FrameHeader hdr;
  ASSERT_EQ(decode_header(cf.data(), &hdr), HeaderError::kNone);
  EXPECT_EQ(hdr.type, FrameType::kChallenge);
  EXPECT_EQ(decode_challenge(std::string_view(cf).substr(kHeaderBytes)), c);
  EXPECT_FALSE(decode_challenge(std::string_view(cf).substr(kHeaderBytes + 1)));

  std::string af = encode_auth(std::string(kProofBytes, 'q'));
  ASSERT_EQ(decode_header(af.data(), &hdr), HeaderError::kNone);
  EXPECT_EQ(hdr.type, FrameType::kAuth);
  EXPECT_EQ(decode_auth(std::string_view(af).substr(kHeaderBytes)), std::string(kProofBytes, 'q'));
  EXPECT_FALSE(decode_auth("short"));
  EXPECT_EQ(decode_hello_ack(std::string(1, static_cast<char>(AckCode::kAuthFailed)))->code, AckCode::kAuthFailed);
}

// ---- transports on loopback ----

struct Node {
  std::unique_ptr<PeerTransport> transport;
  std::mutex mu;
  std::vector<std::pair<NodeId, std::string>> received;
  size_t received_count() {
    std::lock_guard lock(mu);
    return received.size();
  }
};

PeerAuthOptions auth(std::string user, std::string password, bool require = true) {
  PeerAuthOptions a;
  a.enabled = true;
  a.require_inbound = require;
  a.require_outbound = require;
  a.user = std::move(user);
  a.password = std::move(password);
  // The acceptor knows learner "learner" with password "secret".
  a.password_of = [](std::string_view u) -> std::optional<std::string> {
    if (u == "learner") return std::string("secret");
    return std::nullopt;
  };
  return a;
}

class PeerAuthTransportTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (auto& [id, n] : nodes_) n->transport->stop();
    guard_.reset();
    if (io_thread_.joinable()) {
      if (!wait_until([this] { return io_done_.load(); }, 5s)) io_.stop();
      io_thread_.join();
    }
  }

  Node& node(NodeId id, PeerAuthOptions a, bool listen) {
    PeerTransportOptions o;
    o.self_id = id;
    o.backoff_initial = 10ms;
    o.backoff_max = 100ms;
    o.handshake_timeout = 2000ms;
    o.auth = std::move(a);
    auto n = std::make_unique<Node>();
    Node* raw = n.get();
    PeerTransport::Handlers h;
    h.on_message = [raw](NodeId from, std::string p) {
      std::lock_guard lock(raw->mu);
      raw->received.emplace_back(from, std::move(p));
    };
    n->transport = std::make_unique<PeerTransport>(io_, std::move(o), std::move(h));
    if (listen) {
      EXPECT_TRUE(n->transport->listen("127.0.0.1", 0).is_ok());
    }
    nodes_[id] = std::move(n);
    return *raw;
  }

  void start_io() {
    io_thread_ = std::thread([this] {
      io_.run();
      io_done_ = true;
    });
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_ = asio::make_work_guard(io_);
  std::thread io_thread_;
  std::atomic<bool> io_done_{false};
  std::map<NodeId, std::unique_ptr<Node>> nodes_;
};

TEST_F(PeerAuthTransportTest, SameSecretDeliversBothWays) {
  Node& a = node(1, auth("learner", "secret"), true);
  Node& b = node(2, auth("learner", "secret"), true);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  b.transport->add_peer(1, "127.0.0.1", a.transport->port());
  start_io();
  a.transport->send(2, "to b");
  b.transport->send(1, "to a");
  ASSERT_TRUE(wait_until([&] { return a.received_count() == 1 && b.received_count() == 1; }));
  EXPECT_EQ(b.transport->stats().auth_failures, 0u);
  EXPECT_EQ(b.transport->stats().inbound_accepted, 1u);
}

TEST_F(PeerAuthTransportTest, WrongPasswordIsRefusedAndCounted) {
  Node& a = node(1, auth("learner", "guess"), false);
  Node& b = node(2, auth("learner", "secret"), true);
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  a.transport->send(2, "forged");
  start_io();
  // The acceptor's proof does not check out for a (it holds another password), so a gives up
  // before proving anything; b sees the connection end unanswered and counts that.
  ASSERT_TRUE(wait_until([&] { return a.transport->stats().connect_failures >= 2; }));
  ASSERT_TRUE(wait_until([&] { return b.transport->stats().auth_failures >= 1; }));
  EXPECT_EQ(a.transport->stats().connects, 0u);
  EXPECT_EQ(b.received_count(), 0u);
  EXPECT_EQ(b.transport->stats().inbound_accepted, 0u);
}

TEST_F(PeerAuthTransportTest, UnknownUserIsRefusedAndCounted) {
  Node& a = node(1, auth("stranger", "secret"), false);
  Node& b = node(2, auth("learner", "secret"), true);
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  a.transport->send(2, "forged");
  start_io();
  ASSERT_TRUE(wait_until([&] { return b.transport->stats().auth_failures >= 2; }));
  EXPECT_EQ(b.received_count(), 0u);
  EXPECT_EQ(b.transport->stats().inbound_accepted, 0u);
  EXPECT_EQ(a.transport->stats().connects, 0u);
}

TEST_F(PeerAuthTransportTest, DialerWithoutCredentialsIsRefusedWhenRequired) {
  Node& a = node(1, PeerAuthOptions{}, false);
  Node& b = node(2, auth("learner", "secret"), true);
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  a.transport->send(2, "forged");
  start_io();
  ASSERT_TRUE(wait_until([&] { return b.transport->stats().auth_failures >= 2; }));
  EXPECT_EQ(b.received_count(), 0u);
  EXPECT_EQ(a.transport->stats().connects, 0u);
}

TEST_F(PeerAuthTransportTest, NotRequiredLetsUnauthenticatedPeersInAndCountsThem) {
  // ZooKeeper's rolling-upgrade step: enableSasl=true, nothing required yet.
  Node& a = node(1, PeerAuthOptions{}, false);
  Node& b = node(2, auth("learner", "secret", /*require=*/false), true);
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  a.transport->send(2, "hello");
  start_io();
  ASSERT_TRUE(wait_until([&] { return b.received_count() == 1; }));
  EXPECT_EQ(b.transport->stats().unauthenticated_accepted, 1u);
  EXPECT_EQ(b.transport->stats().auth_failures, 0u);
}

TEST_F(PeerAuthTransportTest, NotRequiredStillRefusesAWrongPassword) {
  Node& a = node(1, auth("stranger", "guess", /*require=*/false), false);
  Node& b = node(2, auth("learner", "secret", /*require=*/false), true);
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  a.transport->send(2, "forged");
  start_io();
  ASSERT_TRUE(wait_until([&] { return b.transport->stats().auth_failures >= 2; }));
  EXPECT_EQ(b.received_count(), 0u);
}

TEST_F(PeerAuthTransportTest, LearnerRequiringAuthDoesNotSendToAnAcceptorWithout) {
  Node& a = node(1, auth("learner", "secret"), false);
  Node& b = node(2, PeerAuthOptions{}, true);  // anyone listening on the address
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  a.transport->send(2, "not for you");
  start_io();
  ASSERT_TRUE(wait_until([&] { return a.transport->stats().connect_failures >= 2; }));
  EXPECT_EQ(a.transport->stats().connects, 0u);
  EXPECT_EQ(a.transport->stats().messages_sent, 0u);
  EXPECT_EQ(b.received_count(), 0u);
}

// ---- a rogue client speaking the frame format ----

struct RawClient {
  asio::io_context io;
  asio::ip::tcp::socket sock{io};
  explicit RawClient(uint16_t port) { sock.connect({asio::ip::make_address("127.0.0.1"), port}); }
  void send(const std::string& bytes) { asio::write(sock, asio::buffer(bytes)); }
  // The next frame, or nullopt when the server closed the connection.
  std::optional<std::pair<FrameType, std::string>> read_frame() {
    char hdr[kHeaderBytes];
    boost::system::error_code ec;
    asio::read(sock, asio::buffer(hdr), ec);
    if (ec) return std::nullopt;
    FrameHeader h;
    if (decode_header(hdr, &h) != HeaderError::kNone) return std::nullopt;
    std::string p(h.length, '\0');
    asio::read(sock, asio::buffer(p), ec);
    if (ec) return std::nullopt;
    return std::make_pair(h.type, p);
  }
  bool closed_by_server() {
    char c;
    boost::system::error_code ec;
    asio::read(sock, asio::buffer(&c, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }
};

std::string message_frame(const std::string& payload) {
  return encode_header(FrameType::kMessage, static_cast<uint32_t>(payload.size())) + payload;
}

TEST_F(PeerAuthTransportTest, PipelinedMessagesAfterAPlainHelloAreNeverDelivered) {
  Node& b = node(2, auth("learner", "secret"), true);
  b.transport->add_peer(1, "127.0.0.1", 1);
  start_io();
  RawClient c(b.transport->port());
  c.send(encode_hello(Hello{1, 2, ""}) + message_frame("forged vote") + message_frame("forged append"));
  auto f = c.read_frame();
  ASSERT_TRUE(f);
  ASSERT_EQ(f->first, FrameType::kHelloAck);
  EXPECT_EQ(decode_hello_ack(f->second)->code, AckCode::kAuthRequired);
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_EQ(b.received_count(), 0u);
  EXPECT_EQ(b.transport->stats().auth_failures, 1u);
}

TEST_F(PeerAuthTransportTest, AMessageInsteadOfTheProofIsAProtocolError) {
  Node& b = node(2, auth("learner", "secret"), true);
  b.transport->add_peer(1, "127.0.0.1", 1);
  start_io();
  RawClient c(b.transport->port());
  c.send(encode_hello(Hello{1, 2, "", "learner", std::string(kNonceBytes, 'n')}));
  auto f = c.read_frame();
  ASSERT_TRUE(f);
  ASSERT_EQ(f->first, FrameType::kChallenge);
  c.send(message_frame("forged"));
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_EQ(b.received_count(), 0u);
  EXPECT_EQ(b.transport->stats().protocol_errors, 1u);
}

TEST_F(PeerAuthTransportTest, AReplayedProofIsRefused) {
  Node& b = node(2, auth("learner", "secret"), true);
  b.transport->add_peer(1, "127.0.0.1", 1);
  start_io();
  const Hello hello{1, 2, "", "learner", std::string(kNonceBytes, 'n')};
  // A genuine exchange, recorded by an eavesdropper.
  std::string recorded;
  {
    RawClient c(b.transport->port());
    c.send(encode_hello(hello));
    auto f = c.read_frame();
    ASSERT_TRUE(f && f->first == FrameType::kChallenge);
    auto ch = decode_challenge(f->second);
    ASSERT_TRUE(ch);
    AuthTranscript t{1, 2, "", "learner", hello.nonce, ch->nonce};
    ASSERT_TRUE(proofs_equal(ch->proof, auth_proof("secret", ProofRole::kAcceptor, t)));
    recorded = encode_auth(auth_proof("secret", ProofRole::kDialer, t));
    c.send(recorded + message_frame("genuine"));
    auto ack = c.read_frame();
    ASSERT_TRUE(ack && ack->first == FrameType::kHelloAck);
    EXPECT_EQ(decode_hello_ack(ack->second)->code, AckCode::kOk);
    ASSERT_TRUE(wait_until([&] { return b.received_count() == 1; }));
  }
  // The same hello and proof again: the acceptor's nonce is new, so the proof is stale.
  RawClient c(b.transport->port());
  c.send(encode_hello(hello));
  auto f = c.read_frame();
  ASSERT_TRUE(f && f->first == FrameType::kChallenge);
  c.send(recorded + message_frame("replayed"));
  auto ack = c.read_frame();
  ASSERT_TRUE(ack && ack->first == FrameType::kHelloAck);
  EXPECT_EQ(decode_hello_ack(ack->second)->code, AckCode::kAuthFailed);
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_EQ(b.received_count(), 1u);
  EXPECT_EQ(b.transport->stats().auth_failures, 1u);
}

}  // namespace
}  // namespace zkraft::consensus
