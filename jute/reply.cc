#include "jute/reply.h"

#include "jute/errors.h"
#include "jute/opcodes.h"

namespace zkraft::jute {

namespace {

bool decode_body(int32_t code, Reader& r, ResponseBody& out) {
  auto read_as = [&r, &out](auto record) {
    if (!decode(r, record)) return false;
    out = std::move(record);
    return true;
  };
  switch (code) {
    case op::kCreate: return read_as(CreateResponse{});
    case op::kCreate2:
    case op::kCreateContainer:
    case op::kCreateTTL: return read_as(Create2Response{});
    case op::kExists: return read_as(ExistsResponse{});
    case op::kGetData:
    case op::kReconfig: return read_as(GetDataResponse{});
    case op::kSetData:
    case op::kCheck: return read_as(SetDataResponse{});
    case op::kGetACL: return read_as(GetACLResponse{});
    case op::kSetACL: return read_as(SetACLResponse{});
    case op::kGetChildren: return read_as(GetChildrenResponse{});
    case op::kGetChildren2: return read_as(GetChildren2Response{});
    case op::kSync: return read_as(SyncResponse{});
    case op::kMulti:
    case op::kMultiRead: return read_as(MultiResponse{});
    case op::kSasl: return read_as(SetSASLResponse{});
    case op::kGetEphemerals: return read_as(GetEphemeralsResponse{});
    case op::kGetAllChildrenNumber: return read_as(GetAllChildrenNumberResponse{});
    case op::kAddWatch: return read_as(ErrorResponse{});
    case op::kWhoAmI: return read_as(WhoAmIResponse{});
    default: out = EmptyResponse{}; return r.ok();
  }
}

}  // namespace

int32_t decode_reply(std::string_view frame, int32_t op, const Limits& limits, DecodedReply& out) {
  Reader r(frame, limits);
  if (!decode(r, out.header)) return err::kMarshallingError;
  bool ok;
  if (out.header.xid == xid::kNotification) {
    WatcherEvent ev;
    ok = decode(r, ev);
    out.body = std::move(ev);
  } else if (out.header.err != err::kOk) {
    out.body = EmptyResponse{};
    ok = r.ok();
  } else {
    ok = decode_body(op, r, out.body);
  }
  return ok && r.ok() ? err::kOk : err::kMarshallingError;
}

void encode(Writer& w, const ResponseBody& v) {
  std::visit([&w](const auto& record) { encode(w, record); }, v);
}

std::string encode_reply(const DecodedReply& v) {
  Writer w;
  encode(w, v.header);
  encode(w, v.body);
  return w.take();
}

}  // namespace zkraft::jute
