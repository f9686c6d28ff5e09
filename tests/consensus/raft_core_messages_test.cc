#include <gtest/gtest.h>

#include "consensus/conf_change.h"
#include "consensus/messages.h"

namespace zkraft::consensus {
namespace {

Message full_message() {
  Message m;
  m.type = MessageType::kSnapshot;
  m.from = 3;
  m.to = 0x0102030405060708ull;
  m.term = 77;
  m.index = 1000;
  m.log_term = 76;
  m.commit = 999;
  m.entries = {Entry{76, 1001, EntryType::kNormal, "hello"}, Entry{77, 1002, EntryType::kConfChange, ""}};
  m.reject = true;
  m.reject_hint = 12;
  m.context = 0xdeadbeefull;
  m.snapshot.index = 900;
  m.snapshot.term = 70;
  m.snapshot.membership.voters = {1, 2, 3};
  m.snapshot.membership.learners = {9};
  m.snapshot_offset = 4096;
  m.snapshot_done = true;
  m.snapshot_chunk = std::string("\0\x01\xff", 3);
  return m;
}

TEST(RaftCoreMessages, RoundTripsEveryField) {
  const Message m = full_message();
  Message out;
  std::string err;
  ASSERT_TRUE(decode_message(encode_message(m), out, &err)) << err;
  EXPECT_EQ(out, m);
}

TEST(RaftCoreMessages, RoundTripsEveryType) {
  for (int t = 1; t <= 13; ++t) {
    Message m;
    m.type = static_cast<MessageType>(t);
    m.from = 1;
    m.to = 2;
    m.term = static_cast<Term>(t);
    if (m.type == MessageType::kSnapshot) m.snapshot_chunk = "abc";
    Message out;
    ASSERT_TRUE(decode_message(encode_message(m), out)) << t;
    EXPECT_EQ(out, m) << message_type_name(m.type);
  }
}

TEST(RaftCoreMessages, EveryTruncationIsRejected) {
  const std::string bytes = encode_message(full_message());
  for (size_t n = 0; n < bytes.size(); ++n) {
    Message out;
    std::string err;
    EXPECT_FALSE(decode_message(std::string_view(bytes).substr(0, n), out, &err)) << n;
    EXPECT_FALSE(err.empty());
  }
}

TEST(RaftCoreMessages, RejectsTrailingBytesBadVersionBadTypeAndHugeCounts) {
  std::string bytes = encode_message(full_message());
  Message out;
  EXPECT_FALSE(decode_message(bytes + "x", out));
  std::string v = bytes;
  v[0] = 2;
  EXPECT_FALSE(decode_message(v, out));
  std::string t = bytes;
  t[1] = 0;
  EXPECT_FALSE(decode_message(t, out));
  t[1] = 14;
  EXPECT_FALSE(decode_message(t, out));

  // An entry count far beyond the input must fail without allocating for it.
  Message m;
  m.type = MessageType::kAppend;
  std::string a = encode_message(m);
  const size_t count_pos = 2 + 8 * 6 + 1 + 8 + 8;
  a[count_pos] = '\x7f';
  EXPECT_FALSE(decode_message(a, out));

  MessageLimits small;
  small.max_entries = 1;
  EXPECT_FALSE(decode_message(bytes, out, nullptr, small));
  small = MessageLimits{};
  small.max_bytes = 10;
  EXPECT_FALSE(decode_message(bytes, out, nullptr, small));
}

TEST(RaftCoreMessages, SnapshotSectionOnlyOnSnapshotMessages) {
  Message m;
  m.type = MessageType::kAppend;
  std::string bytes = encode_message(m);
  bytes.back() = 1;  // claims a snapshot section that is not there
  Message out;
  EXPECT_FALSE(decode_message(bytes, out));
}

TEST(RaftCoreConfChange, EncodesAndValidates) {
  ConfChange cc{ConfChangeType::kPromoteLearner, 42};
  auto back = decode_conf_change(encode_conf_change(cc));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, cc);
  EXPECT_FALSE(decode_conf_change("").has_value());
  EXPECT_FALSE(decode_conf_change(std::string(9, '\0')).has_value());
  std::string bad = encode_conf_change(cc);
  bad[0] = 9;
  EXPECT_FALSE(decode_conf_change(bad).has_value());
}

TEST(RaftCoreConfChange, AppliesSingleServerChanges) {
  Membership m{{1, 2, 3}, {}};
  EXPECT_FALSE(apply_conf_change(m, {ConfChangeType::kAddVoter, 2}));
  EXPECT_TRUE(apply_conf_change(m, {ConfChangeType::kAddLearner, 5}));
  EXPECT_EQ(m.learners, std::vector<NodeId>{5});
  EXPECT_FALSE(apply_conf_change(m, {ConfChangeType::kPromoteLearner, 4}));
  EXPECT_TRUE(apply_conf_change(m, {ConfChangeType::kPromoteLearner, 5}));
  EXPECT_EQ(m.voters, (std::vector<NodeId>{1, 2, 3, 5}));
  EXPECT_TRUE(m.learners.empty());
  EXPECT_TRUE(apply_conf_change(m, {ConfChangeType::kRemoveNode, 1}));
  EXPECT_EQ(m.voters, (std::vector<NodeId>{2, 3, 5}));
  EXPECT_FALSE(apply_conf_change(m, {ConfChangeType::kRemoveNode, 1}));
  Membership one{{7}, {}};
  EXPECT_FALSE(apply_conf_change(one, {ConfChangeType::kRemoveNode, 7}));
}

}  // namespace
}  // namespace zkraft::consensus

namespace zkraft::consensus {
namespace {

// Random corruptions of valid encodings never crash the decoder, and whatever it accepts
// re-encodes to the same bytes (the encoding is canonical).
TEST(RaftCoreMessages, RandomCorruptionsAreHandled) {
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  const std::string base = encode_message(full_message());
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string b = base;
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int f = 0; f < flips; ++f) b[next() % b.size()] = static_cast<char>(next() & 0xff);
    if (next() % 4 == 0) b.resize(next() % b.size());
    Message out;
    if (decode_message(b, out)) {
      ++accepted;
      EXPECT_EQ(encode_message(out), b);
    }
  }
  EXPECT_GT(accepted, 0);  // flips inside payload bytes still decode
}

}  // namespace
}  // namespace zkraft::consensus
