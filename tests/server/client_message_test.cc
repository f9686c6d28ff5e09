// ClientMessage decoding, done once on the network thread: writes to their header only, reads
// in full, handshakes as ConnectRequests, bad frames as error codes.

#include <gtest/gtest.h>

#include "jute/errors.h"
#include "jute/opcodes.h"
#include "server/client_message.h"
#include "client_frames.h"

namespace zkraft::server {
namespace {

using namespace testing;
namespace op = jute::op;
namespace err = jute::err;

TEST(ClientMessage, AWriteIsDecodedToItsHeaderAndKeepsItsRecordBytes) {
  jute::SetDataRequest set{"/a", {"new", false}, 3};
  ClientMessage m = decode_request_frame(7, request_body(12, op::kSetData, set), jute::Limits{});
  EXPECT_EQ(m.kind, ClientMessage::Kind::kRequest);
  EXPECT_EQ(m.conn, 7u);
  EXPECT_EQ(m.rc, err::kOk);
  EXPECT_TRUE(m.logged);
  EXPECT_EQ(m.request.header.xid, 12);
  EXPECT_EQ(m.request.header.type, op::kSetData);
  EXPECT_EQ(m.record, record_bytes(set));
  // The body was not decoded: it is still the default alternative.
  EXPECT_TRUE(std::holds_alternative<jute::EmptyRequest>(m.request.body));
}

TEST(ClientMessage, AMalformedWriteRecordStillTravelsAsBytes) {
  // Decoded where it is applied (MarshallingError there, with a zxid), not here.
  std::string frame = header_only(3, op::kCreate) + "\x01";
  ClientMessage m = decode_request_frame(1, frame, jute::Limits{});
  EXPECT_EQ(m.rc, err::kOk);
  EXPECT_TRUE(m.logged);
  EXPECT_EQ(m.record, "\x01");
}

TEST(ClientMessage, CloseSessionIsAWriteWithAnEmptyRecord) {
  ClientMessage m = decode_request_frame(1, header_only(9, op::kCloseSession), jute::Limits{});
  EXPECT_EQ(m.rc, err::kOk);
  EXPECT_TRUE(m.logged);
  EXPECT_TRUE(m.record.empty());
}

TEST(ClientMessage, AReadIsFullyDecoded) {
  ClientMessage m = decode_request_frame(2, request_body(5, op::kGetData, jute::GetDataRequest{"/x", true}),
                                         jute::Limits{});
  EXPECT_EQ(m.rc, err::kOk);
  EXPECT_FALSE(m.logged);
  EXPECT_TRUE(m.record.empty());
  EXPECT_EQ(m.request.header.xid, 5);
  ASSERT_TRUE(std::holds_alternative<jute::GetDataRequest>(m.request.body));
  EXPECT_EQ(std::get<jute::GetDataRequest>(m.request.body), (jute::GetDataRequest{"/x", true}));
}

TEST(ClientMessage, AnUnknownOpIsUnimplementedWithItsHeader) {
  ClientMessage m = decode_request_frame(2, header_only(8, 999), jute::Limits{});
  EXPECT_EQ(m.rc, err::kUnimplemented);
  EXPECT_FALSE(m.logged);
  EXPECT_EQ(m.request.header.xid, 8);
  EXPECT_EQ(m.request.header.type, 999);
}

TEST(ClientMessage, ATruncatedHeaderIsAMarshallingError) {
  std::string frame = header_only(8, op::kGetData);
  for (size_t cut = 0; cut < frame.size(); ++cut) {
    ClientMessage m = decode_request_frame(2, frame.substr(0, cut), jute::Limits{});
    EXPECT_EQ(m.rc, err::kMarshallingError) << cut;
    EXPECT_FALSE(m.logged) << cut;
  }
}

TEST(ClientMessage, ATruncatedReadRecordIsAMarshallingError) {
  std::string frame = request_body(5, op::kGetData, jute::GetDataRequest{"/xyz", false});
  ClientMessage m = decode_request_frame(2, frame.substr(0, frame.size() - 2), jute::Limits{});
  EXPECT_EQ(m.rc, err::kMarshallingError);
  EXPECT_EQ(m.request.header.xid, 5);
}

TEST(ClientMessage, TheFirstFrameIsAConnectRequest) {
  ClientMessage m = decode_connect_frame(4, connect_body(12000, 0x55, std::string(16, 'k'), 9),
                                         jute::Limits{});
  EXPECT_EQ(m.kind, ClientMessage::Kind::kConnect);
  EXPECT_EQ(m.conn, 4u);
  EXPECT_EQ(m.rc, err::kOk);
  EXPECT_EQ(m.connect.time_out, 12000);
  EXPECT_EQ(m.connect.session_id, 0x55);
  EXPECT_EQ(m.connect.passwd.bytes, std::string(16, 'k'));
  EXPECT_EQ(m.connect.last_zxid_seen, 9);
  EXPECT_TRUE(m.connect.has_read_only);
}

TEST(ClientMessage, ATruncatedConnectRequestIsAMarshallingError) {
  std::string body = connect_body();
  ClientMessage m = decode_connect_frame(4, body.substr(0, 10), jute::Limits{});
  EXPECT_EQ(m.kind, ClientMessage::Kind::kConnect);
  EXPECT_EQ(m.rc, err::kMarshallingError);
}

}  // namespace
}  // namespace zkraft::server
