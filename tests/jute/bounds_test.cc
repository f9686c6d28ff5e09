// Hostile input: negative and huge lengths, huge counts, unknown ops, truncation of whole frames.

#include <gtest/gtest.h>

#include "jute/records.h"
#include "jute/request.h"
#include "jute/reply.h"
#include "test_util.h"

namespace zkraft::jute {
namespace {

using testing::decode_exact;
using testing::from_hex;
using testing::to_hex;

std::string request_frame(int32_t xid, int32_t type, std::string_view body_hex) {
  Writer w;
  encode(w, RequestHeader{xid, type});
  w.write_raw(from_hex(body_hex));
  return w.take();
}

TEST(Bounds, NegativeLengthsOtherThanMinusOneFail) {
  GetDataRequest g;
  EXPECT_FALSE(decode_exact(from_hex("fffffffe00"), g));   // string length -2
  EXPECT_FALSE(decode_exact(from_hex("8000000000"), g));   // INT_MIN
  SetDataRequest s;
  EXPECT_FALSE(decode_exact(from_hex("000000022f61fffffffdffffffff"), s));  // buffer length -3
  GetChildrenResponse c;
  EXPECT_FALSE(decode_exact(from_hex("fffffffe"), c));  // count -2
}

TEST(Bounds, HugeLengthsFailWithoutReadingOrAllocating) {
  GetDataRequest g;
  EXPECT_FALSE(decode_exact(from_hex("7fffffff2f6101"), g));
  SetDataRequest s;
  EXPECT_FALSE(decode_exact(from_hex("000000022f617fffffff00"), s));
  // A length above limits.max_buffer fails even when the bytes are there.
  Limits small;
  small.max_buffer = 4;
  SyncRequest ok, too_long;
  EXPECT_TRUE(decode_exact(from_hex("000000042f616263"), ok, small));
  EXPECT_FALSE(decode_exact(from_hex("000000052f61626364"), too_long, small));
}

TEST(Bounds, HugeVectorCountsFail) {
  GetChildrenResponse c;
  EXPECT_FALSE(decode_exact(from_hex("7fffffff"), c));
  EXPECT_FALSE(decode_exact(from_hex("00100001"), c));  // max_vector + 1
  // A count the limit allows but the remaining input cannot hold.
  EXPECT_FALSE(decode_exact(from_hex("0000000300000001610000000162"), c));
  CreateRequest cr;
  EXPECT_FALSE(decode_exact(from_hex("000000022f61ffffffff0fffffff00000000"), cr));  // ACL count
  WhoAmIResponse who;
  EXPECT_FALSE(decode_exact(from_hex("00010000"), who));
  SetWatches sw;
  EXPECT_FALSE(decode_exact(from_hex("00000000000000007ffffffe"), sw));
  Limits small;
  small.max_vector = 2;
  GetChildrenResponse two, three;
  EXPECT_TRUE(decode_exact(from_hex("0000000200000001610000000162"), two, small));
  EXPECT_EQ(two.children, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(decode_exact(from_hex("00000003000000016100000001620000000163"), three, small));
}

TEST(Bounds, DecodeRequestSortsErrors) {
  DecodedRequest d;
  EXPECT_EQ(decode_request(request_frame(7, op::kGetData, "000000022f6101"), Limits{}, d),
            err::kOk);
  EXPECT_EQ(d.header.xid, 7);
  EXPECT_EQ(std::get<GetDataRequest>(d.body), (GetDataRequest{"/a", true}));

  // Unknown and client-forbidden ops: kUnimplemented, header still known.
  for (int32_t op : {10, 0, -1, -10, 23, 99, 108, 0x7fffffff}) {
    DecodedRequest u;
    EXPECT_EQ(decode_request(request_frame(9, op, "00"), Limits{}, u), err::kUnimplemented) << op;
    EXPECT_EQ(u.header.xid, 9);
    EXPECT_EQ(u.header.type, op);
  }
  // Truncated header and truncated record: kMarshallingError.
  EXPECT_EQ(decode_request(from_hex("000000"), Limits{}, d), err::kMarshallingError);
  EXPECT_EQ(decode_request(from_hex(""), Limits{}, d), err::kMarshallingError);
  DecodedRequest t;
  EXPECT_EQ(decode_request(request_frame(3, op::kSetData, "000000022f61"), Limits{}, t),
            err::kMarshallingError);
  EXPECT_EQ(t.header.xid, 3);
  // Bytes after the record are ignored, as ZooKeeper does.
  EXPECT_EQ(decode_request(request_frame(4, op::kSync, "000000012fdeadbeef"), Limits{}, d),
            err::kOk);
  // Ping, closeSession and whoAmI have no body.
  EXPECT_EQ(decode_request(request_frame(-2, op::kPing, ""), Limits{}, d), err::kOk);
  EXPECT_TRUE(std::holds_alternative<EmptyRequest>(d.body));
  EXPECT_EQ(decode_request(request_frame(5, op::kCloseSession, ""), Limits{}, d), err::kOk);
}

TEST(Bounds, EveryTruncationOfEveryRequestFails) {
  // One valid frame per op that has a body; every strict prefix must give kMarshallingError.
  const std::pair<int32_t, const char*> frames[] = {
      {op::kCreate, "000000022f6100000001780000000100000001000000057772"
                    "6f6c640000000161" "00000000"},
      {op::kCreateTTL, "000000022f61ffffffff000000000000000500000000000003e8"},
      {op::kDelete, "000000022f61ffffffff"},
      {op::kExists, "000000022f6100"},
      {op::kSetData, "000000022f6100000000ffffffff"},
      {op::kGetACL, "000000022f61"},
      {op::kSetACL, "000000022f610000000000000001"},
      {op::kCheck, "000000022f6100000001"},
      {op::kReconfig, "0000000178" "00000000" "00000000" "0000000000000001"},
      {op::kCheckWatches, "000000022f6100000001"},
      {op::kAddWatch, "000000022f6100000000"},
      {op::kAuth, "0000000000000006646967657374ffffffff"},
      {op::kSetWatches, "00000000000000010000000100000001610000000000000000"},
      {op::kSetWatches2, "00000000000000010000000000000000000000000000000000000000"},
      {op::kSasl, "0000000141"},
      {op::kGetEphemerals, "000000012f"},
      {op::kMulti, "0000000200ffffffff000000022f61ffffffffffffffff01ffffffff"},
  };
  for (const auto& [op, hex] : frames) {
    std::string f = request_frame(1, op, hex);
    DecodedRequest full;
    ASSERT_EQ(decode_request(f, Limits{}, full), err::kOk) << op_name(op) << " " << hex;
    EXPECT_EQ(to_hex(encode_request(full)), to_hex(f)) << op_name(op);
    for (size_t n = 0; n < f.size(); ++n) {
      std::unique_ptr<char[]> copy(new char[n + 1]);
      std::memcpy(copy.get(), f.data(), n);
      DecodedRequest d;
      EXPECT_EQ(decode_request(std::string_view(copy.get(), n), Limits{}, d),
                err::kMarshallingError)
          << op_name(op) << " prefix " << n;
    }
  }
}

TEST(Bounds, ConnectRequestDecoder) {
  ConnectRequest c;
  std::string good = from_hex(
      "00000000000000000000000000007530000000000000000000000010000000000000000000000000000000"
      "0000");
  ASSERT_EQ(good.size(), 45u);
  EXPECT_EQ(decode_connect_request(good, Limits{}, c), err::kOk);
  EXPECT_EQ(c.time_out, 30000);
  EXPECT_TRUE(c.has_read_only);
  EXPECT_EQ(decode_connect_request(good.substr(0, 44), Limits{}, c), err::kOk);
  EXPECT_FALSE(c.has_read_only);
  for (size_t n = 0; n < 44; ++n) {
    EXPECT_EQ(decode_connect_request(good.substr(0, n), Limits{}, c), err::kMarshallingError) << n;
  }
  std::string huge_passwd = good;
  huge_passwd[24] = '\x7f';  // passwd length 0x7f000010
  EXPECT_EQ(decode_connect_request(huge_passwd, Limits{}, c), err::kMarshallingError);
}

TEST(Bounds, ConnectResponseDecoderLeavesOutputAloneOnError) {
  ConnectResponse c{0, 1, 2, Buffer{"pw", false}, true, true};
  std::string bytes = testing::encoded(c);
  for (size_t n = 0; n < 4 + 4 + 8 + 4 + 2; ++n) {
    ConnectResponse out{9, 9, 9, Buffer{"keep", false}, false, false};
    ConnectResponse before = out;
    EXPECT_EQ(decode_connect_response(bytes.substr(0, n), Limits{}, out), err::kMarshallingError);
    EXPECT_EQ(out, before);
  }
  ConnectResponse out;
  ASSERT_EQ(decode_connect_response(bytes, Limits{}, out), err::kOk);
  EXPECT_EQ(out, c);
}

TEST(Bounds, ReplyDecoderNeedsTheRightBody) {
  DecodedReply r;
  // An error reply is header only.
  EXPECT_EQ(decode_reply(from_hex("000000070000000000000004ffffff9b"), op::kExists, Limits{}, r),
            err::kOk);
  EXPECT_TRUE(std::holds_alternative<EmptyResponse>(r.body));
  // A success exists reply without its Stat is malformed.
  EXPECT_EQ(decode_reply(from_hex("00000007000000000000000400000000"), op::kExists, Limits{}, r),
            err::kMarshallingError);
  // A notification carries a WatcherEvent whatever op is passed.
  EXPECT_EQ(decode_reply(from_hex("ffffffffffffffffffffffff000000000000000300000003000000022f61"),
                         op::kPing, Limits{}, r),
            err::kOk);
  EXPECT_EQ(std::get<WatcherEvent>(r.body), (WatcherEvent{3, 3, "/a"}));
}

}  // namespace
}  // namespace zkraft::jute
