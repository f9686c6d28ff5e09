// multi / multiRead requests and responses: layout, every sub-op, error results, hostile input.

#include <gtest/gtest.h>

#include "jute/records.h"
#include "jute/reply.h"
#include "jute/request.h"
#include "test_util.h"

namespace zkraft::jute {
namespace {

using testing::decode_exact;
using testing::encoded;
using testing::expect_every_truncation_fails;
using testing::expect_round_trip;
using testing::from_hex;
using testing::to_hex;

const std::vector<ACL> kOpen = {ACL{perms::kAll, Id{"world", "anyone"}}};

MultiRequest every_write_op() {
  MultiRequest m;
  m.ops.push_back({op::kCreate, CreateRequest{"/a", Buffer{"x", false}, kOpen, 0}});
  m.ops.push_back({op::kCreate2, CreateRequest{"/b", Buffer::null(), kOpen, 1}});
  m.ops.push_back({op::kCreateContainer, CreateRequest{"/c", Buffer{}, kOpen, 4}});
  m.ops.push_back({op::kCreateTTL, CreateTTLRequest{"/t", Buffer{}, kOpen, 5, 1000}});
  m.ops.push_back({op::kDelete, DeleteRequest{"/a", -1}});
  m.ops.push_back({op::kSetData, SetDataRequest{"/b", Buffer{"y", false}, 0}});
  m.ops.push_back({op::kCheck, CheckVersionRequest{"/b", 1}});
  return m;
}

TEST(Multi, RequestLayoutIsHeaderRecordAndTerminator) {
  MultiRequest m;
  m.ops.push_back({op::kDelete, DeleteRequest{"/a", 3}});
  EXPECT_EQ(to_hex(encoded(m)),
            "0000000200ffffffff"     // MultiHeader{delete, false, -1}
            "000000022f6100000003"   // DeleteRequest
            "ffffffff01ffffffff");   // MultiHeader{-1, true, -1}
  EXPECT_EQ(to_hex(encoded(MultiRequest{})), "ffffffff01ffffffff");
}

TEST(Multi, EveryWriteSubOpRoundTrips) {
  MultiRequest m = every_write_op();
  expect_round_trip(m);
  expect_every_truncation_fails(m);
  MultiRequest back;
  ASSERT_TRUE(decode_exact(encoded(m), back));
  ASSERT_EQ(back.ops.size(), 7u);
  EXPECT_EQ(back.ops[1].type, op::kCreate2);
  EXPECT_TRUE(std::holds_alternative<CreateRequest>(back.ops[1].body));
  EXPECT_TRUE(std::holds_alternative<CreateTTLRequest>(back.ops[3].body));
  EXPECT_FALSE(back.is_read_only());
}

TEST(Multi, ReadSubOpsRoundTrip) {
  MultiRequest m;
  m.ops.push_back({op::kGetData, GetDataRequest{"/a", false}});
  m.ops.push_back({op::kGetChildren, GetChildrenRequest{"/", false}});
  expect_round_trip(m);
  expect_every_truncation_fails(m);
  EXPECT_TRUE(m.is_read_only());
  EXPECT_FALSE(MultiRequest{}.is_read_only());
}

TEST(Multi, MixingReadsAndWritesFails) {
  MultiRequest m;
  m.ops.push_back({op::kGetData, GetDataRequest{"/a", false}});
  m.ops.push_back({op::kDelete, DeleteRequest{"/a", -1}});
  MultiRequest back;
  EXPECT_FALSE(decode_exact(encoded(m), back));
}

TEST(Multi, UnknownOrForbiddenSubOpFails) {
  for (int32_t type : {0, 3, 6, 7, 9, 11, 12, 14, 20, 22, 100, 999}) {
    // header{type} + a plausible path record + terminator
    Writer w;
    encode(w, MultiHeader{type, false, -1});
    w.write_string("/a");
    w.write_int(0);
    encode(w, MultiHeader{-1, true, -1});
    MultiRequest back;
    EXPECT_FALSE(decode_exact(w.bytes(), back)) << type;
  }
}

TEST(Multi, OpCountIsBoundedByMaxVector) {
  Limits limits;
  limits.max_vector = 3;
  auto build = [](int n) {
    MultiRequest m;
    for (int i = 0; i < n; ++i) m.ops.push_back({op::kCheck, CheckVersionRequest{"/x", i}});
    return encoded(m);
  };
  MultiRequest back;
  EXPECT_TRUE(decode_exact(build(3), back, limits));
  EXPECT_FALSE(decode_exact(build(4), back, limits));
}

TEST(Multi, MissingTerminatorFails) {
  std::string bytes = encoded(every_write_op());
  bytes.resize(bytes.size() - 9);
  MultiRequest back;
  EXPECT_FALSE(decode_exact(bytes, back));
}

MultiResponse every_result() {
  Stat st;
  st.czxid = 5;
  st.version = 2;
  MultiResponse r;
  r.results.push_back({op::kCreate, 0, CreateResponse{"/a"}});
  r.results.push_back({op::kCreate2, 0, Create2Response{"/b", st}});
  r.results.push_back({op::kCreateContainer, 0, Create2Response{"/c", st}});
  r.results.push_back({op::kCreateTTL, 0, Create2Response{"/t", st}});
  r.results.push_back({op::kDelete, 0, EmptyResponse{}});
  r.results.push_back({op::kSetData, 0, SetDataResponse{st}});
  r.results.push_back({op::kCheck, 0, EmptyResponse{}});
  r.results.push_back({op::kGetData, 0, GetDataResponse{Buffer{"d", false}, st}});
  r.results.push_back({op::kGetChildren, 0, GetChildrenResponse{{"x", "y"}}});
  r.results.push_back(MultiResult::error(err::kNoNode));
  return r;
}

TEST(Multi, EveryResultKindRoundTrips) {
  expect_round_trip(every_result());
  expect_every_truncation_fails(every_result());
}

TEST(Multi, FailedMultiResultsAsZooKeeperSendsThem) {
  // ops before the failing one: 0; the failing op: its code; ops after: -2.
  MultiResponse r;
  r.results.push_back(MultiResult::error(err::kOk));
  r.results.push_back(MultiResult::error(err::kNoNode));
  r.results.push_back(MultiResult::error(err::kRuntimeInconsistency));
  EXPECT_EQ(to_hex(encoded(r)),
            "ffffffff0000000000" "00000000"
            "ffffffff00ffffff9b" "ffffff9b"
            "ffffffff00fffffffe" "fffffffe"
            "ffffffff01ffffffff");
  expect_round_trip(r);
}

TEST(Multi, UnknownResultTypeFails) {
  Writer w;
  encode(w, MultiHeader{op::kExists, false, 0});
  encode(w, Stat{});
  encode(w, MultiHeader{-1, true, -1});
  MultiResponse back;
  EXPECT_FALSE(decode_exact(w.bytes(), back));
}

TEST(Multi, ThroughTheRequestAndReplyEntryPoints) {
  DecodedRequest req{RequestHeader{12, op::kMulti}, every_write_op()};
  std::string frame = encode_request(req);
  DecodedRequest back;
  ASSERT_EQ(decode_request(frame, Limits{}, back), err::kOk);
  EXPECT_EQ(back, req);

  DecodedReply rep{ReplyHeader{12, 0x55, 0}, every_result()};
  DecodedReply rep_back;
  ASSERT_EQ(decode_reply(encode_reply(rep), op::kMulti, Limits{}, rep_back), err::kOk);
  EXPECT_EQ(rep_back, rep);
}

}  // namespace
}  // namespace zkraft::jute
