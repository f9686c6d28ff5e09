// Round trips, exact encodings and truncation of every jute record.

#include <gtest/gtest.h>

#include "jute/records.h"
#include "test_util.h"

namespace zkraft::jute {
namespace {

using testing::decode_exact;
using testing::encoded;
using testing::expect_every_truncation_fails;
using testing::expect_round_trip;
using testing::from_hex;
using testing::to_hex;

Stat sample_stat() {
  Stat s;
  s.czxid = 0x0102030405060708;
  s.mzxid = -2;
  s.ctime = 1700000000123;
  s.mtime = 1700000000456;
  s.version = 7;
  s.cversion = -1;
  s.aversion = 3;
  s.ephemeral_owner = 0x100000465420000;
  s.data_length = 11;
  s.num_children = 2;
  s.pzxid = 99;
  return s;
}

std::vector<ACL> sample_acl() {
  return {ACL{perms::kAll, Id{"world", "anyone"}}, ACL{perms::kRead, Id{"digest", "u:h+ash="}}};
}

Buffer buf(std::string s) { return Buffer{std::move(s), false}; }

// Round trip plus every-prefix-fails for one value.
template <class T>
void check(const T& v) {
  SCOPED_TRACE(to_hex(encoded(v)));
  expect_round_trip(v);
  expect_every_truncation_fails(v);
}

TEST(Records, HeadersHaveTheirWireSizeAndLayout) {
  EXPECT_EQ(to_hex(encoded(RequestHeader{5, op::kGetData})), "0000000500000004");
  EXPECT_EQ(to_hex(encoded(ReplyHeader{-2, 0x10, err::kNoNode})),
            "fffffffe0000000000000010ffffff9b");
  check(RequestHeader{-8, op::kSetWatches});
  check(ReplyHeader{-1, -1, 0});
}

// extend + put_be32/put_be64 (a snapshot's fixed fields in one step) write what write_int and
// write_long write, and leave what was written before alone.
TEST(Records, ExtendedFieldsAreTheBytesOfWriteIntAndWriteLong) {
  Writer one_by_one;
  one_by_one.write_string("/a");
  one_by_one.write_long(0x0102030405060708);
  one_by_one.write_long(-2);
  one_by_one.write_int(-1);
  one_by_one.write_int(0x0a0b0c0d);
  Writer extended;
  extended.write_string("/a");
  char* p = extended.extend(8 + 8 + 4 + 4);
  p = put_be64(p, 0x0102030405060708);
  p = put_be64(p, static_cast<uint64_t>(int64_t{-2}));
  p = put_be32(p, static_cast<uint32_t>(-1));
  EXPECT_EQ(put_be32(p, 0x0a0b0c0d), extended.bytes().data() + extended.size());
  EXPECT_EQ(to_hex(extended.bytes()), to_hex(one_by_one.bytes()));
  EXPECT_EQ(to_hex(extended.bytes()),
            "000000022f61" "0102030405060708" "fffffffffffffffe" "ffffffff" "0a0b0c0d");
}

TEST(Records, ConnectRequestWithAndWithoutReadOnlyByte) {
  ConnectRequest c{0, 0x1234, 30000, 0x100000465420001, buf(std::string(16, '\x07')), true, true};
  std::string with = encoded(c);
  EXPECT_EQ(with.size(), 45u);
  expect_round_trip(c);
  // Every prefix shorter than the mandatory fields fails; the one without the flag is valid.
  for (size_t n = 0; n + 1 < with.size(); ++n) {
    ConnectRequest out;
    EXPECT_FALSE(decode_exact(std::string_view(with).substr(0, n), out)) << n;
  }
  ConnectRequest old;
  ASSERT_TRUE(decode_exact(std::string_view(with).substr(0, 44), old));
  EXPECT_FALSE(old.has_read_only);
  EXPECT_FALSE(old.read_only);
  EXPECT_EQ(old.session_id, c.session_id);
  EXPECT_EQ(encoded(old), with.substr(0, 44));  // answers old clients in their own style

  ConnectRequest legacy = c;
  legacy.has_read_only = false;
  legacy.read_only = false;  // not on the wire without the trailing byte
  expect_round_trip(legacy);
}

TEST(Records, ConnectResponseIs36Or37Bytes) {
  ConnectResponse r{0, 4000, 0x100000465420000, buf(std::string(16, 'p')), false, true};
  EXPECT_EQ(encoded(r).size(), 37u);
  expect_round_trip(r);
  r.has_read_only = false;
  EXPECT_EQ(encoded(r).size(), 36u);
  expect_round_trip(r);
  // The expired-session answer: timeout 0, session 0, 16 zero bytes.
  ConnectResponse expired{0, 0, 0, buf(std::string(16, '\0')), false, true};
  EXPECT_EQ(to_hex(encoded(expired)),
            "00000000000000000000000000000000000000100000000000000000000000000000000000");
}

TEST(Records, NullAndEmptyBuffersStayDistinct) {
  SetDataRequest null_data{"/a", Buffer::null(), -1};
  SetDataRequest empty_data{"/a", buf(""), -1};
  EXPECT_EQ(to_hex(encoded(null_data)), "000000022f61ffffffffffffffff");
  EXPECT_EQ(to_hex(encoded(empty_data)), "000000022f6100000000ffffffff");
  SetDataRequest a, b;
  ASSERT_TRUE(decode_exact(encoded(null_data), a));
  ASSERT_TRUE(decode_exact(encoded(empty_data), b));
  EXPECT_TRUE(a.data.is_null);
  EXPECT_FALSE(b.data.is_null);
  EXPECT_TRUE(b.data.bytes.empty());
  check(null_data);
  check(empty_data);
}

TEST(Records, KazooMinusOneForEmptyStringDecodesAsEmpty) {
  // kazoo writes "" as length -1: an AuthPacket with scheme "" and a null auth buffer.
  AuthPacket p;
  ASSERT_TRUE(decode_exact(from_hex("00000000ffffffffffffffff"), p));
  EXPECT_EQ(p.scheme, "");
  EXPECT_TRUE(p.auth.is_null);
  ReconfigRequest rc;
  ASSERT_TRUE(decode_exact(from_hex("ffffffffffffffff00000003613d31ffffffffffffffff"), rc));
  EXPECT_EQ(rc.joining_servers, "");
  EXPECT_EQ(rc.leaving_servers, "");
  EXPECT_EQ(rc.new_members, "a=1");
  EXPECT_EQ(rc.cur_config_id, -1);
  GetChildrenResponse children;
  ASSERT_TRUE(decode_exact(from_hex("ffffffff"), children));  // null vector -> empty
  EXPECT_TRUE(children.children.empty());
}

TEST(Records, StatIs68Bytes) {
  EXPECT_EQ(encoded(sample_stat()).size(), 68u);
  check(sample_stat());
}

TEST(Records, CreateFamily) {
  CreateRequest c{"/app/seq-", buf("data"), sample_acl(), 3};
  check(c);
  check(CreateRequest{"/n", Buffer::null(), {ACL{31, Id{"world", "anyone"}}}, 4});
  check(CreateTTLRequest{"/ttl", buf("x"), sample_acl(), 5, 60000});
  check(CreateResponse{"/app/seq-0000000001"});
  check(Create2Response{"/app/x", sample_stat()});
}

TEST(Records, ReadsAndWrites) {
  check(DeleteRequest{"/a/b", 4});
  check(DeleteContainerRequest{"/c"});
  check(ExistsRequest{"/a", true});
  check(ExistsResponse{sample_stat()});
  check(GetDataRequest{"/a", false});
  check(GetDataResponse{buf(std::string("\0\1\2", 3)), sample_stat()});
  check(GetDataResponse{Buffer::null(), sample_stat()});
  check(SetDataRequest{"/a", buf("v"), 12});
  check(SetDataResponse{sample_stat()});
  check(GetACLRequest{"/a"});
  check(GetACLResponse{sample_acl(), sample_stat()});
  check(SetACLRequest{"/a", sample_acl(), 0});
  check(SetACLResponse{sample_stat()});
  check(GetChildrenRequest{"/", true});
  check(GetChildrenResponse{{"a", "b", "zookeeper"}});
  check(GetChildren2Request{"/x", false});
  check(GetChildren2Response{{"c1"}, sample_stat()});
  check(SyncRequest{"/s"});
  check(SyncResponse{"/s"});
  check(CheckVersionRequest{"/v", 2});
  check(ReconfigRequest{"server.4=127.0.0.1:1:2;3", "2", "", 0x100000003});
}

TEST(Records, WatchesAuthAndSessionRecords) {
  check(CheckWatchesRequest{"/w", watcher_type::kData});
  check(RemoveWatchesRequest{"/w", watcher_type::kAny});
  check(AddWatchRequest{"/w", add_watch_mode::kPersistentRecursive});
  check(AuthPacket{0, "digest", buf("user:pw")});
  check(SetWatches{0x42, {"/d1", "/d2"}, {"/e"}, {}});
  check(SetWatches2{0x43, {"/d"}, {}, {"/c"}, {"/p"}, {"/r", "/r2"}});
  check(GetSASLRequest{buf("token")});
  check(SetSASLResponse{buf("challenge")});
  check(GetEphemeralsRequest{"/app"});
  check(GetEphemeralsResponse{{"/app/e1", "/app/e2"}});
  check(GetAllChildrenNumberRequest{"/"});
  check(GetAllChildrenNumberResponse{17});
  check(ClientInfo{"ip", "127.0.0.1"});
  check(WhoAmIResponse{{ClientInfo{"ip", "127.0.0.1"}, ClientInfo{"digest", "u"}}});
  check(WhoAmIResponse{});
  check(ErrorResponse{err::kNoWatcher});
  check(WatcherEvent{event::kNodeDataChanged, keeper_state::kSyncConnected, "/app"});
  EXPECT_EQ(to_hex(encoded(WatcherEvent{event::kNodeCreated, keeper_state::kSyncConnected, "/a"})),
            "0000000100000003000000022f61");
}

TEST(Records, EmptyBodies) {
  EXPECT_TRUE(encoded(EmptyRequest{}).empty());
  EXPECT_TRUE(encoded(EmptyResponse{}).empty());
  EmptyRequest e;
  EXPECT_TRUE(decode_exact("", e));
}

}  // namespace
}  // namespace zkraft::jute
