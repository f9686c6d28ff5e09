// PeerMessage: the one typed, versioned server-to-server payload. Round trips, and a decoder that
// refuses (bounded) anything that is not a message of its format and kinds.

#include <gtest/gtest.h>

#include "jute/archive.h"
#include "server/peer_message.h"
#include "server/txn.h"

namespace zkraft::server {
namespace {

TEST(PeerMessage, ForwardedWriteRoundTripsItsTxnBytesExactly) {
  Txn t;
  t.session_id = 7;
  t.op = 5;
  t.request = std::string("\0\xff\x01", 3);
  ForwardedWrite w{encode_txn(t)};
  auto back = decode_peer_message(encode_peer_message(w));
  ASSERT_TRUE(back.has_value());
  ASSERT_TRUE(std::holds_alternative<ForwardedWrite>(*back));
  EXPECT_EQ(std::get<ForwardedWrite>(*back), w);
}

TEST(PeerMessage, SessionsAliveRoundTripsInOrder) {
  SessionsAlive s{{3, -1, 0x0100000000000002}};
  auto back = decode_peer_message(encode_peer_message(s));
  ASSERT_TRUE(back.has_value());
  ASSERT_TRUE(std::holds_alternative<SessionsAlive>(*back));
  EXPECT_EQ(std::get<SessionsAlive>(*back), s);
  auto empty = decode_peer_message(encode_peer_message(SessionsAlive{}));
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(std::get<SessionsAlive>(*empty).session_ids.empty());
}

TEST(PeerMessage, WireFormStartsWithFormatThenKind) {
  std::string f = encode_peer_message(ForwardedWrite{"x"});
  std::string s = encode_peer_message(SessionsAlive{});
  ASSERT_GE(f.size(), 2u);
  ASSERT_GE(s.size(), 2u);
  EXPECT_EQ(f[0], 1);
  EXPECT_EQ(s[0], 1);
  EXPECT_NE(f[1], s[1]);
}

TEST(PeerMessage, RefusesAnUnknownFormat) {
  std::string m = encode_peer_message(SessionsAlive{{1}});
  m[0] = 2;
  EXPECT_FALSE(decode_peer_message(m).has_value());
  m[0] = 0;
  EXPECT_FALSE(decode_peer_message(m).has_value());
}

TEST(PeerMessage, RefusesAnUnknownKind) {
  std::string m = encode_peer_message(ForwardedWrite{"abc"});
  for (int kind : {0, 4, 0x57 /* the old 'W' tag */, 255}) {
    m[1] = static_cast<char>(kind);
    EXPECT_FALSE(decode_peer_message(m).has_value()) << kind;
  }
}

TEST(PeerMessage, RefusesEveryTruncation) {
  for (const std::string& m : {encode_peer_message(ForwardedWrite{"payload"}),
                               encode_peer_message(SessionsAlive{{1, 2, 3}})}) {
    for (size_t cut = 0; cut < m.size(); ++cut) {
      EXPECT_FALSE(decode_peer_message(std::string_view(m).substr(0, cut)).has_value()) << cut;
    }
  }
}

TEST(PeerMessage, RefusesMoreSessionsThanTheBound) {
  SessionsAlive s;
  for (int64_t i = 1; i <= 5; ++i) s.session_ids.push_back(i);
  std::string m = encode_peer_message(s);
  EXPECT_TRUE(decode_peer_message(m, 5).has_value());
  EXPECT_FALSE(decode_peer_message(m, 4).has_value());
}

TEST(PeerMessage, RefusesACountTheBytesCannotHold) {
  // A count of 2^30 ids in a few bytes: refused before anything is allocated for it.
  jute::Writer w;
  w.write_raw(std::string("\x01\x02", 2));
  w.write_int(1 << 30);
  w.write_long(1);
  EXPECT_FALSE(decode_peer_message(w.bytes(), 1 << 30).has_value());
  jute::Writer neg;
  neg.write_raw(std::string("\x01\x01", 2));
  neg.write_int(-5);  // a negative buffer length
  EXPECT_FALSE(decode_peer_message(neg.bytes()).has_value());
}

TEST(PeerMessage, LeadershipRequestIsItsKindAloneAndRefusesTrailingBytes) {
  std::string m = encode_peer_message(LeadershipRequest{});
  EXPECT_EQ(m, std::string("\x01\x03", 2));
  auto d = decode_peer_message(m);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(std::holds_alternative<LeadershipRequest>(*d));
  EXPECT_FALSE(decode_peer_message(m + "x").has_value());
}

TEST(PeerMessage, MemberFiguresRoundTripAndRefuseTrailingBytes) {
  MemberFigures f{7, 0x100000002, 0x100000001};
  const std::string m = encode_peer_message(f);
  auto back = decode_peer_message(m);
  ASSERT_TRUE(back.has_value());
  ASSERT_TRUE(std::holds_alternative<MemberFigures>(*back));
  EXPECT_EQ(std::get<MemberFigures>(*back), f);
  EXPECT_EQ(m.size(), 2u + 24u);
  EXPECT_FALSE(decode_peer_message(m + "x").has_value());
  EXPECT_FALSE(decode_peer_message(m.substr(0, m.size() - 1)).has_value());
}

}  // namespace
}  // namespace zkraft::server
