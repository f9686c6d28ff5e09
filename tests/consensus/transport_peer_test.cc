// PeerTransport on loopback: delivery in order, batching of queued messages, drop-oldest queue
// bound, reconnect after the peer restarts, refusal of unknown ids and foreign clusters, and an
// oversized frame closing the connection. Waits use generous deadlines only to fail instead of
// hanging; no assertion depends on timing.

#include <gtest/gtest.h>

#include "transport_test_util.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "consensus/peer_transport.h"
#include "consensus/peer_transport_frame.h"

namespace zkraft::consensus {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

using testing::wait_until;

// One server's transport plus what its handlers saw.
struct Node {
  std::unique_ptr<PeerTransport> transport;
  std::mutex mu;
  std::vector<std::pair<NodeId, std::string>> received;
  std::vector<NodeId> downs;

  size_t received_count() {
    std::lock_guard lock(mu);
    return received.size();
  }
  size_t down_count() {
    std::lock_guard lock(mu);
    return downs.size();
  }
  std::vector<std::string> payloads_from(NodeId id) {
    std::lock_guard lock(mu);
    std::vector<std::string> out;
    for (auto& [from, p] : received) {
      if (from == id) out.push_back(p);
    }
    return out;
  }
};

class PeerTransportTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (auto& [id, n] : nodes_) {
      if (n->transport) n->transport->stop();
    }
    stop_io();
  }

  PeerTransportOptions options(NodeId id) {
    PeerTransportOptions o;
    o.self_id = id;
    o.backoff_initial = 10ms;
    o.backoff_max = 100ms;
    return o;
  }

  Node& make_node(NodeId id, PeerTransportOptions o) {
    auto n = std::make_unique<Node>();
    Node* raw = n.get();
    PeerTransport::Handlers h;
    h.on_message = [raw](NodeId from, std::string p) {
      std::lock_guard lock(raw->mu);
      raw->received.emplace_back(from, std::move(p));
    };
    h.on_peer_down = [raw](NodeId peer) {
      std::lock_guard lock(raw->mu);
      raw->downs.push_back(peer);
    };
    n->transport = std::make_unique<PeerTransport>(io_, std::move(o), std::move(h));
    nodes_[id] = std::move(n);
    return *raw;
  }

  Node& listening_node(NodeId id, PeerTransportOptions o) {
    Node& n = make_node(id, std::move(o));
    Status s = n.transport->listen("127.0.0.1", 0);
    EXPECT_TRUE(s.is_ok()) << s.to_string();
    return n;
  }

  void start_io() {
    io_thread_ = std::thread([this] {
      io_.run();
      io_done_ = true;
    });
  }

  void stop_io() {
    guard_.reset();
    if (io_thread_.joinable()) {
      if (!wait_until([this] { return io_done_.load(); }, 5s)) io_.stop();
      io_thread_.join();
    }
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_ = asio::make_work_guard(io_);
  std::thread io_thread_;
  std::atomic<bool> io_done_{false};
  std::map<NodeId, std::unique_ptr<Node>> nodes_;
};

TEST_F(PeerTransportTest, DeliversInOrderBothWays) {
  Node& a = listening_node(1, options(1));
  Node& b = listening_node(2, options(2));
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  b.transport->add_peer(1, "127.0.0.1", a.transport->port());
  start_io();
  for (int i = 0; i < 200; ++i) a.transport->send(2, "a->b " + std::to_string(i));
  for (int i = 0; i < 100; ++i) b.transport->send(1, "b->a " + std::to_string(i));
  a.transport->send(2, "");  // empty payloads are legal
  ASSERT_TRUE(wait_until([&] { return b.received_count() == 201 && a.received_count() == 100; }));
  auto at_b = b.payloads_from(1);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(at_b[i], "a->b " + std::to_string(i));
  EXPECT_EQ(at_b[200], "");
  auto at_a = a.payloads_from(2);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(at_a[i], "b->a " + std::to_string(i));
  EXPECT_EQ(a.transport->stats().messages_sent, 201u);
  EXPECT_EQ(b.transport->stats().messages_received, 201u);
  EXPECT_EQ(b.transport->stats().inbound_accepted, 1u);
}

TEST_F(PeerTransportTest, QueuedMessagesGoOutInFewWrites) {
  Node& a = make_node(1, options(1));
  Node& b = listening_node(2, options(2));
  b.transport->add_peer(1, "127.0.0.1", 1);  // a known id; we never dial it back here
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  // Posted before the io thread runs, so all are queued before the connection exists.
  const int n = 1000;
  for (int i = 0; i < n; ++i) a.transport->send(2, std::string(100, 'x') + std::to_string(i));
  start_io();
  ASSERT_TRUE(wait_until([&] { return b.received_count() == n; }));
  auto at_b = b.payloads_from(1);
  for (int i = 0; i < n; ++i) ASSERT_EQ(at_b[i], std::string(100, 'x') + std::to_string(i));
  PeerTransportStats s = a.transport->stats();
  EXPECT_EQ(s.messages_sent, static_cast<uint64_t>(n));
  EXPECT_LE(s.writes, 2u);  // ~100 KB fits one gathered write of max_batch_bytes (1 MB)
}

TEST_F(PeerTransportTest, LargeAndSmallMessagesInterleaved) {
  Node& a = make_node(1, options(1));
  Node& b = listening_node(2, options(2));
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  start_io();
  std::vector<std::string> sent;
  for (size_t size : {5u << 20, 10u, 300u << 10, 0u, 70u << 10, 1u}) {
    std::string p(size, '\0');
    for (size_t i = 0; i < size; ++i) p[i] = static_cast<char>(i * 31 + size);
    sent.push_back(p);
    a.transport->send(2, p);
  }
  ASSERT_TRUE(wait_until([&] { return b.received_count() == sent.size(); }));
  EXPECT_EQ(b.payloads_from(1), sent);
}

TEST_F(PeerTransportTest, RemovedPeerIsNoLongerReachableOrAccepted) {
  Node& a = listening_node(1, options(1));
  Node& b = listening_node(2, options(2));
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  b.transport->add_peer(1, "127.0.0.1", a.transport->port());
  start_io();
  a.transport->send(2, "one");
  ASSERT_TRUE(wait_until([&] { return b.received_count() == 1; }));
  b.transport->remove_peer(1);
  // b closes a's inbound connection; a redials and is now refused.
  ASSERT_TRUE(wait_until([&] { return b.transport->stats().inbound_refused >= 1; }));
  a.transport->send(2, "two");
  b.transport->send(1, "to a removed peer");  // dropped: unknown peer
  ASSERT_TRUE(wait_until([&] { return b.transport->stats().messages_dropped >= 1; }));
  EXPECT_EQ(b.payloads_from(1), std::vector<std::string>{"one"});
}

TEST_F(PeerTransportTest, FullQueueDropsTheOldest) {
  PeerTransportOptions ao = options(1);
  ao.max_queue_messages = 10;
  Node& a = make_node(1, ao);
  Node& b = listening_node(2, options(2));
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  for (int i = 0; i < 100; ++i) a.transport->send(2, "m" + std::to_string(i));
  start_io();
  ASSERT_TRUE(wait_until([&] { return b.received_count() == 10; }));
  auto at_b = b.payloads_from(1);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(at_b[i], "m" + std::to_string(90 + i));
  EXPECT_EQ(a.transport->stats().messages_dropped, 90u);
}

TEST_F(PeerTransportTest, ReconnectsAfterPeerRestartAndReportsPeerDown) {
  Node& a = listening_node(1, options(1));
  Node* b = &listening_node(2, options(2));
  const uint16_t b_port = b->transport->port();
  a.transport->add_peer(2, "127.0.0.1", b_port);
  b->transport->add_peer(1, "127.0.0.1", a.transport->port());
  start_io();
  a.transport->send(2, "before");
  ASSERT_TRUE(wait_until([&] { return b->received_count() == 1; }));

  b->transport->stop();
  // a sees both its connection to b and b's connection to it break.
  ASSERT_TRUE(wait_until([&] { return a.down_count() >= 1; }));
  {
    std::lock_guard lock(a.mu);
    for (NodeId d : a.downs) EXPECT_EQ(d, 2u);
  }

  // b comes back on the same port with a fresh transport.
  Node& b2 = make_node(3, options(2));  // map key 3 only keeps both objects alive
  b2.transport->add_peer(1, "127.0.0.1", a.transport->port());
  Status s;
  ASSERT_TRUE(wait_until([&] { return (s = b2.transport->listen("127.0.0.1", b_port)).is_ok(); }))
      << s.to_string();
  // Messages sent while b was away may be lost; keep sending until one gets through.
  int sent = 0;
  ASSERT_TRUE(wait_until([&] {
    a.transport->send(2, "after " + std::to_string(sent++));
    return b2.received_count() > 0;
  }));
  EXPECT_EQ(b2.payloads_from(1)[0].rfind("after ", 0), 0u);
  EXPECT_GE(a.transport->stats().connects, 2u);
  // b2 also dials a; a accepts it.
  b2.transport->send(1, "hello again");
  ASSERT_TRUE(wait_until([&] { return a.received_count() == 1; }));
}

TEST_F(PeerTransportTest, UnknownIdAndForeignClusterAreRefused) {
  Node& b = listening_node(2, options(2));
  b.transport->add_peer(1, "127.0.0.1", 1);  // b knows only server 1
  Node& a = make_node(1, options(1));
  Node& c = make_node(3, options(3));  // unknown to b
  PeerTransportOptions fo = options(1);
  fo.cluster_name = "other-cluster";
  Node& foreign = make_node(4, fo);  // claims id 1 but from another cluster
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  c.transport->add_peer(2, "127.0.0.1", b.transport->port());
  foreign.transport->add_peer(2, "127.0.0.1", b.transport->port());
  start_io();
  c.transport->send(2, "from c");
  foreign.transport->send(2, "from foreign");
  a.transport->send(2, "from a");
  ASSERT_TRUE(wait_until([&] { return b.transport->stats().inbound_refused >= 2 && b.received_count() >= 1; }));
  ASSERT_TRUE(wait_until([&] { return c.transport->stats().connect_failures >= 2; }));  // keeps retrying
  EXPECT_EQ(b.payloads_from(1), std::vector<std::string>{"from a"});
  EXPECT_EQ(b.received_count(), 1u);
  EXPECT_EQ(c.transport->stats().connects, 0u);
  EXPECT_EQ(foreign.transport->stats().connects, 0u);
  EXPECT_EQ(b.transport->stats().inbound_accepted, 1u);
}

TEST_F(PeerTransportTest, OversizedFrameClosesTheConnection) {
  PeerTransportOptions bo = options(2);
  bo.max_message_bytes = 1024;
  Node& b = listening_node(2, bo);
  b.transport->add_peer(1, "127.0.0.1", 1);
  start_io();

  // A hand-written client speaking the frame format directly.
  asio::io_context cio;
  asio::ip::tcp::socket sock(cio);
  sock.connect({asio::ip::make_address("127.0.0.1"), b.transport->port()});
  asio::write(sock, asio::buffer(transport::encode_hello({1, 2, ""})));
  char hdr[transport::kHeaderBytes];
  asio::read(sock, asio::buffer(hdr));
  transport::FrameHeader h;
  ASSERT_EQ(transport::decode_header(hdr, &h), transport::HeaderError::kNone);
  ASSERT_EQ(h.type, transport::FrameType::kHelloAck);
  std::string ack(h.length, '\0');
  asio::read(sock, asio::buffer(ack));
  ASSERT_EQ(transport::decode_hello_ack(ack)->code, transport::AckCode::kOk);

  std::string ok_msg(1024, 'k');  // exactly at the limit: accepted
  std::string frame = transport::encode_header(transport::FrameType::kMessage, 1024) + ok_msg;
  frame += transport::encode_header(transport::FrameType::kMessage, 1025);  // one byte too many
  asio::write(sock, asio::buffer(frame));
  // The server closes without reading the oversized payload: our read ends with EOF or reset.
  boost::system::error_code ec;
  char c;
  asio::read(sock, asio::buffer(&c, 1), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  ASSERT_TRUE(wait_until([&] { return b.down_count() == 1; }));
  EXPECT_EQ(b.payloads_from(1), std::vector<std::string>{ok_msg});
  EXPECT_EQ(b.transport->stats().protocol_errors, 1u);
}

TEST_F(PeerTransportTest, BadMagicClosesTheConnection) {
  Node& b = listening_node(2, options(2));
  b.transport->add_peer(1, "127.0.0.1", 1);
  start_io();
  asio::io_context cio;
  asio::ip::tcp::socket sock(cio);
  sock.connect({asio::ip::make_address("127.0.0.1"), b.transport->port()});
  asio::write(sock, asio::buffer(std::string("GET / HTTP/1.1\r\n\r\n")));
  boost::system::error_code ec;
  char c;
  asio::read(sock, asio::buffer(&c, 1), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  EXPECT_EQ(b.transport->stats().protocol_errors, 1u);
  EXPECT_EQ(b.received_count(), 0u);
}

TEST_F(PeerTransportTest, OversizedSendIsDroppedLocally) {
  PeerTransportOptions ao = options(1);
  ao.max_message_bytes = 100;
  Node& a = make_node(1, ao);
  Node& b = listening_node(2, options(2));
  b.transport->add_peer(1, "127.0.0.1", 1);
  a.transport->add_peer(2, "127.0.0.1", b.transport->port());
  a.transport->send(2, std::string(101, 'x'));
  a.transport->send(2, std::string(100, 'y'));
  start_io();
  ASSERT_TRUE(wait_until([&] { return b.received_count() == 1; }));
  EXPECT_EQ(b.payloads_from(1), std::vector<std::string>{std::string(100, 'y')});
  EXPECT_EQ(a.transport->stats().messages_dropped, 1u);
}

TEST(PeerTransportFrame, HelloRoundTripAndHeaderChecks) {
  transport::Hello h{7, 9, "zk-prod"};
  std::string f = transport::encode_hello(h);
  transport::FrameHeader hdr;
  ASSERT_EQ(transport::decode_header(f.data(), &hdr), transport::HeaderError::kNone);
  EXPECT_EQ(hdr.type, transport::FrameType::kHello);
  ASSERT_EQ(hdr.length, f.size() - transport::kHeaderBytes);
  EXPECT_EQ(transport::decode_hello(std::string_view(f).substr(transport::kHeaderBytes)), h);
  EXPECT_FALSE(transport::decode_hello(std::string_view(f).substr(transport::kHeaderBytes, 10)));
  std::string bad = f;
  bad[2] = 2;  // version
  EXPECT_EQ(transport::decode_header(bad.data(), &hdr), transport::HeaderError::kBadVersion);
  bad = f;
  bad[0] = 'X';
  EXPECT_EQ(transport::decode_header(bad.data(), &hdr), transport::HeaderError::kBadMagic);
  bad = f;
  bad[3] = 9;
  EXPECT_EQ(transport::decode_header(bad.data(), &hdr), transport::HeaderError::kBadType);
}

}  // namespace
}  // namespace zkraft::consensus
