// The connection-free parts of the peer handshake (consensus/peer_handshake.h): the acceptor's
// identity check of a hello and the nonces. The handshake over sockets is exercised by
// transport_peer_test.cc and transport_auth_test.cc.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "consensus/peer_handshake.h"
#include "consensus/peer_transport_auth.h"

namespace zkraft::consensus {
namespace {

using namespace transport;  // NOLINT

Hello hello(NodeId from, NodeId to, std::string cluster = "") {
  Hello h;
  h.from = from;
  h.to = to;
  h.cluster = std::move(cluster);
  return h;
}

TEST(PeerHandshake, AHelloToUsFromAKnownPeerOfOurClusterIsAccepted) {
  const HelloAck ack = check_hello(hello(2, 1, "zk"), 1, "zk", true);
  EXPECT_EQ(ack.code, AckCode::kOk);
  EXPECT_EQ(ack.reason, "");
}

TEST(PeerHandshake, AHelloForAnotherServerIsRefusedNamingBoth) {
  const HelloAck ack = check_hello(hello(2, 3), 1, "", true);
  EXPECT_EQ(ack.code, AckCode::kWrongTarget);
  EXPECT_EQ(ack.reason, "this is server 1, not 3");
}

TEST(PeerHandshake, AHelloFromAnotherClusterIsRefused) {
  const HelloAck ack = check_hello(hello(2, 1, "other"), 1, "zk", true);
  EXPECT_EQ(ack.code, AckCode::kWrongCluster);
  EXPECT_EQ(ack.reason, "cluster 'zk' != 'other'");
  // One side naming a cluster is enough to refuse.
  EXPECT_EQ(check_hello(hello(2, 1, ""), 1, "zk", true).code, AckCode::kWrongCluster);
  EXPECT_EQ(check_hello(hello(2, 1, "zk"), 1, "", true).code, AckCode::kWrongCluster);
}

TEST(PeerHandshake, AnUnknownIdOrOurOwnIsRefused) {
  HelloAck ack = check_hello(hello(7, 1), 1, "", false);
  EXPECT_EQ(ack.code, AckCode::kUnknownId);
  EXPECT_EQ(ack.reason, "server id 7 is not a configured peer");
  // A dialer claiming to be us is refused even if the id were in the peer table.
  ack = check_hello(hello(1, 1), 1, "", true);
  EXPECT_EQ(ack.code, AckCode::kUnknownId);
}

TEST(PeerHandshake, TheTargetIsCheckedBeforeTheClusterAndTheId) {
  EXPECT_EQ(check_hello(hello(7, 3, "other"), 1, "zk", false).code, AckCode::kWrongTarget);
  EXPECT_EQ(check_hello(hello(7, 1, "other"), 1, "zk", false).code, AckCode::kWrongCluster);
}

TEST(PeerHandshake, NoncesAreFreshAndOfTheFrameSize) {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    const std::string n = fresh_nonce();
    ASSERT_EQ(n.size(), kNonceBytes);
    EXPECT_TRUE(seen.insert(n).second) << "a nonce repeated";
  }
}

}  // namespace
}  // namespace zkraft::consensus
