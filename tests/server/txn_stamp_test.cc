// stamp_txn_time: the leader stamps a forwarded, already-encoded Txn with its own wall clock,
// in place, without decoding it.

#include <gtest/gtest.h>

#include "server/txn.h"

namespace zkraft::server {
namespace {

Txn full_txn() {
  Txn t;
  t.kind = TxnKind::kRequest;
  t.session_id = 0x0100000000000007;
  t.xid = 42;
  t.op = 5;
  t.time_ms = 0;  // a follower forwards it unstamped
  t.origin_server = 3;
  t.origin_request = 77;
  t.auth = {{"ip", "127.0.0.1"}};
  t.request = "record";
  return t;
}

TEST(StampTxnTime, SetsTheTimeThatDecodeSeesAndNothingElse) {
  Txn t = full_txn();
  std::string bytes = encode_txn(t);
  const size_t size = bytes.size();
  ASSERT_TRUE(stamp_txn_time(bytes, 1'700'000'123'456));
  EXPECT_EQ(bytes.size(), size);
  auto back = decode_txn(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->time_ms, 1'700'000'123'456);
  // Everything else is the follower's, untouched.
  t.time_ms = back->time_ms;
  EXPECT_EQ(encode_txn(*back), encode_txn(t));
  EXPECT_EQ(back->session_id, t.session_id);
  EXPECT_EQ(back->xid, 42);
  EXPECT_EQ(back->origin_server, 3u);
  EXPECT_EQ(back->origin_request, 77u);
}

TEST(StampTxnTime, AStampReplacesAnEarlierOne) {
  Txn t = full_txn();
  t.time_ms = 5;
  std::string bytes = encode_txn(t);
  ASSERT_TRUE(stamp_txn_time(bytes, -1));  // every bit of the field is written
  EXPECT_EQ(decode_txn(bytes)->time_ms, -1);
  ASSERT_TRUE(stamp_txn_time(bytes, 9));
  EXPECT_EQ(decode_txn(bytes)->time_ms, 9);
}

TEST(StampTxnTime, RefusesBytesThatAreNotATxnAndLeavesThemAlone) {
  for (std::string bytes : {std::string(), std::string("short"), std::string(40, '\0'),
                            std::string(40, '\x02')}) {
    const std::string before = bytes;
    EXPECT_FALSE(stamp_txn_time(bytes, 123)) << bytes.size();
    EXPECT_EQ(bytes, before);
  }
  // A Txn cut before the end of its time field.
  std::string cut = encode_txn(full_txn()).substr(0, 30);
  const std::string before = cut;
  EXPECT_FALSE(stamp_txn_time(cut, 123));
  EXPECT_EQ(cut, before);
}

}  // namespace
}  // namespace zkraft::server
