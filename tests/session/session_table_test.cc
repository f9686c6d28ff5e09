#include "session/session_table.h"

#include <gtest/gtest.h>

namespace zkraft::session {
namespace {

SessionPassword pw(uint8_t fill) {
  SessionPassword p;
  p.fill(fill);
  return p;
}

TEST(SessionTable, AddFindRemove) {
  SessionTable t;
  EXPECT_TRUE(t.empty());
  EXPECT_TRUE(t.add(10, 30000, pw(1)));
  EXPECT_FALSE(t.add(10, 5000, pw(2)));  // duplicate: unchanged
  ASSERT_NE(t.find(10), nullptr);
  EXPECT_EQ(t.find(10)->timeout_ms, 30000);
  EXPECT_EQ(t.find(10)->password, pw(1));
  EXPECT_EQ(t.find(11), nullptr);
  EXPECT_TRUE(t.contains(10));
  EXPECT_EQ(t.size(), 1u);
  EXPECT_TRUE(t.remove(10));
  EXPECT_FALSE(t.remove(10));
  EXPECT_TRUE(t.empty());
}

// Found by fuzz_state: a createSession with timeout 0 was applied, and the snapshot it then wrote
// could not be restored (deserialize refuses such a session).
TEST(SessionTable, RefusesATimeoutItCouldNotLoadAgain) {
  SessionTable t;
  EXPECT_FALSE(t.add(7, 0, SessionPassword{}));
  EXPECT_FALSE(t.add(8, -5, SessionPassword{}));
  EXPECT_TRUE(t.empty());
  EXPECT_TRUE(t.add(9, 1, SessionPassword{}));
}

TEST(SessionTable, PasswordCheck) {
  SessionTable t;
  t.add(5, 4000, pw(7));
  EXPECT_TRUE(t.password_matches(5, to_bytes(pw(7))));
  EXPECT_FALSE(t.password_matches(5, to_bytes(pw(8))));
  EXPECT_FALSE(t.password_matches(5, to_bytes(pw(7)).substr(0, 15)));
  EXPECT_FALSE(t.password_matches(5, ""));
  EXPECT_FALSE(t.password_matches(6, to_bytes(pw(7))));
}

TEST(SessionTable, IdsAreAscendingWhateverTheInsertOrder) {
  SessionTable t;
  t.add(30, 1, pw(0));
  t.add(-4, 1, pw(0));
  t.add(10, 1, pw(0));
  EXPECT_EQ(t.ids(), (std::vector<int64_t>{-4, 10, 30}));
}

TEST(SessionTable, SerializeRoundTrip) {
  SessionTable t;
  t.add(0x0100000000000001LL, 30000, make_password(1, 2));
  t.add(0x0100000000000002LL, 4000, make_password(3, 4));
  t.add(-7, 40000, pw(0xff));
  jute::Writer w;
  t.serialize(w);
  // count + 3 * (8 + 4 + 4 + 16)
  EXPECT_EQ(w.size(), 4u + 3u * 32u);
  SessionTable u;
  u.add(99, 1, pw(1));  // replaced by the load
  jute::Reader r(w.bytes());
  ASSERT_TRUE(u.deserialize(r));
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(u, t);
}

TEST(SessionTable, EmptyRoundTrip) {
  SessionTable t;
  jute::Writer w;
  t.serialize(w);
  SessionTable u;
  u.add(1, 1, pw(1));
  jute::Reader r(w.bytes());
  ASSERT_TRUE(u.deserialize(r));
  EXPECT_TRUE(u.empty());
}

TEST(SessionTable, TruncatedInputLeavesTableUnchanged) {
  SessionTable t;
  t.add(1, 4000, pw(1));
  t.add(2, 4000, pw(2));
  jute::Writer w;
  t.serialize(w);
  const std::string bytes = w.bytes();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    SessionTable u;
    u.add(77, 5, pw(5));
    SessionTable before = u;
    jute::Reader r(std::string_view(bytes).substr(0, cut));
    EXPECT_FALSE(u.deserialize(r)) << "cut at " << cut;
    EXPECT_EQ(u, before);
  }
}

TEST(SessionTable, RejectsMalformedRecords) {
  auto encode = [](int64_t id1, int64_t id2, int32_t timeout, std::string pw2) {
    jute::Writer w;
    w.write_count(2);
    w.write_long(id1);
    w.write_int(4000);
    w.write_buffer(jute::Buffer{std::string(16, 'a'), false});
    w.write_long(id2);
    w.write_int(timeout);
    w.write_buffer(jute::Buffer{pw2, false});
    return w.take();
  };
  SessionTable u;
  {
    std::string ok = encode(1, 2, 4000, std::string(16, 'b'));
    jute::Reader r(ok);
    EXPECT_TRUE(u.deserialize(r));
    EXPECT_EQ(u.size(), 2u);
  }
  for (const std::string& bad : {encode(2, 1, 4000, std::string(16, 'b')),    // unordered
                                 encode(1, 1, 4000, std::string(16, 'b')),    // duplicate
                                 encode(1, 2, 0, std::string(16, 'b')),       // zero timeout
                                 encode(1, 2, 4000, std::string(15, 'b'))}) {  // short password
    SessionTable v;
    jute::Reader r(bad);
    EXPECT_FALSE(v.deserialize(r));
    EXPECT_TRUE(v.empty());
  }
  // A huge count cannot allocate or loop: read_count bounds it by the remaining input.
  jute::Writer w;
  w.write_count(1 << 30);
  SessionTable v;
  jute::Reader r(w.bytes());
  EXPECT_FALSE(v.deserialize(r));
}

}  // namespace
}  // namespace zkraft::session

namespace zkraft::session {
namespace {

// Deterministic garbage (and corrupted snapshots) must be rejected or accepted without crashing,
// and a rejected load must leave the table as it was.
TEST(SessionTable, RandomInputNeverCrashes) {
  SessionTable good;
  for (int64_t id = 1; id <= 5; ++id) good.add(id * 1000, 4000, make_password(id, 7));
  jute::Writer w;
  good.serialize(w);
  const std::string base = w.bytes();
  uint64_t x = 0x9E3779B97F4A7C15ull;
  auto next = [&x]() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = base;
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int i = 0; i < flips; ++i) bytes[next() % bytes.size()] = static_cast<char>(next());
    if (round % 3 == 0) bytes.resize(next() % (bytes.size() + 1));
    SessionTable t;
    t.add(1, 1, SessionPassword{});
    const SessionTable before = t;
    jute::Reader r(bytes);
    if (!t.deserialize(r)) {
      EXPECT_EQ(t, before);
    } else {
      for (const auto& [id, info] : t.sessions()) EXPECT_GT(info.timeout_ms, 0);
    }
  }
}

}  // namespace
}  // namespace zkraft::session
