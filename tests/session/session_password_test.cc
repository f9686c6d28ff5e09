#include "session/session_password.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace zkraft::session {
namespace {

std::string hex(const SessionPassword& p) {
  std::string s;
  char buf[3];
  for (uint8_t b : p) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

// Golden values from Java: new Random(id ^ 0xB3415C00L).nextBytes(new byte[16]).
TEST(SessionPassword, MatchesZooKeeperGenerator) {
  EXPECT_EQ(hex(make_password(0x0100000000000000LL, kZooKeeperSuperSecret)),
            "f22acd4a97e69d6d20a49bb638eadb38");
  EXPECT_EQ(hex(make_password(0x05123456789A0001LL, kZooKeeperSuperSecret)),
            "c79d9573d14da20aa70394be36c9fc41");
  EXPECT_EQ(hex(make_password(0xB3415C00LL, kZooKeeperSuperSecret)),  // seed 0
            "60b420bb3851d9d47acb933dbe70399b");
  EXPECT_EQ(hex(make_password(-1, kZooKeeperSuperSecret)), "20f62cb5648dc2d771471c8a2486a9ee");
}

TEST(SessionPassword, SecretChangesPassword) {
  EXPECT_NE(make_password(42, 1), make_password(42, 2));
}

TEST(SessionPassword, BytesRoundTrip) {
  SessionPassword p = make_password(7, 9);
  std::string b = to_bytes(p);
  ASSERT_EQ(b.size(), 16u);
  SessionPassword q{};
  ASSERT_TRUE(from_bytes(b, q));
  EXPECT_EQ(p, q);
  EXPECT_FALSE(from_bytes(b.substr(1), q));
  EXPECT_FALSE(from_bytes(b + "x", q));
}

}  // namespace
}  // namespace zkraft::session
