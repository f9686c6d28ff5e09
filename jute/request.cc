#include "jute/request.h"

#include "jute/errors.h"
#include "jute/opcodes.h"

namespace zkraft::jute {

int32_t decode_request_body(int32_t code, Reader& r, RequestBody& out) {
  auto read_as = [&r, &out](auto record) -> int32_t {
    if (!decode(r, record) || !r.ok()) return err::kMarshallingError;
    out = std::move(record);
    return err::kOk;
  };
  switch (code) {
    case op::kCreate:
    case op::kCreate2:
    case op::kCreateContainer: return read_as(CreateRequest{});
    case op::kCreateTTL: return read_as(CreateTTLRequest{});
    case op::kDelete: return read_as(DeleteRequest{});
    case op::kDeleteContainer: return read_as(DeleteContainerRequest{});
    case op::kExists: return read_as(ExistsRequest{});
    case op::kGetData: return read_as(GetDataRequest{});
    case op::kSetData: return read_as(SetDataRequest{});
    case op::kGetACL: return read_as(GetACLRequest{});
    case op::kSetACL: return read_as(SetACLRequest{});
    case op::kGetChildren: return read_as(GetChildrenRequest{});
    case op::kGetChildren2: return read_as(GetChildren2Request{});
    case op::kSync: return read_as(SyncRequest{});
    case op::kCheck: return read_as(CheckVersionRequest{});
    case op::kMulti:
    case op::kMultiRead: return read_as(MultiRequest{});
    case op::kReconfig: return read_as(ReconfigRequest{});
    case op::kCheckWatches: return read_as(CheckWatchesRequest{});
    case op::kRemoveWatches: return read_as(RemoveWatchesRequest{});
    case op::kAddWatch: return read_as(AddWatchRequest{});
    case op::kAuth: return read_as(AuthPacket{});
    case op::kSetWatches: return read_as(SetWatches{});
    case op::kSetWatches2: return read_as(SetWatches2{});
    case op::kSasl: return read_as(GetSASLRequest{});
    case op::kGetEphemerals: return read_as(GetEphemeralsRequest{});
    case op::kGetAllChildrenNumber: return read_as(GetAllChildrenNumberRequest{});
    case op::kPing:
    case op::kCloseSession:
    case op::kWhoAmI: return read_as(EmptyRequest{});
    default: return err::kUnimplemented;
  }
}

int32_t decode_request(std::string_view frame, const Limits& limits, DecodedRequest& out) {
  Reader r(frame, limits);
  if (!decode(r, out.header)) return err::kMarshallingError;
  return decode_request_body(out.header.type, r, out.body);
}

int32_t decode_connect_request(std::string_view frame, const Limits& limits, ConnectRequest& out) {
  Reader r(frame, limits);
  ConnectRequest req;
  if (!decode(r, req)) return err::kMarshallingError;
  out = std::move(req);
  return err::kOk;
}

int32_t decode_connect_response(std::string_view frame, const Limits& limits,
                                ConnectResponse& out) {
  Reader r(frame, limits);
  ConnectResponse resp;
  if (!decode(r, resp)) return err::kMarshallingError;
  out = std::move(resp);
  return err::kOk;
}

void encode(Writer& w, const RequestBody& v) {
  std::visit([&w](const auto& record) { encode(w, record); }, v);
}

std::string encode_request(const DecodedRequest& v) {
  Writer w;
  encode(w, v.header);
  encode(w, v.body);
  return w.take();
}

}  // namespace zkraft::jute
