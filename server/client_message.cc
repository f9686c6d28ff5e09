#include "server/client_message.h"

#include "jute/errors.h"
#include "jute/opcodes.h"

namespace zkraft::server {

ClientMessage decode_connect_frame(uint64_t conn, std::string_view frame, const jute::Limits& limits) {
  ClientMessage m;
  m.kind = ClientMessage::Kind::kConnect;
  m.conn = conn;
  m.rc = jute::decode_connect_request(frame, limits, m.connect);
  return m;
}

ClientMessage decode_request_frame(uint64_t conn, std::string_view frame, const jute::Limits& limits) {
  ClientMessage m;
  m.kind = ClientMessage::Kind::kRequest;
  m.conn = conn;
  constexpr size_t kHeaderBytes = 8;  // RequestHeader: xid, type
  if (frame.size() >= kHeaderBytes) {
    jute::Reader r(frame.substr(0, kHeaderBytes), limits);
    jute::decode(r, m.request.header);
    if (r.ok() && jute::op_is_logged(m.request.header.type)) {
      m.logged = true;
      m.rc = jute::err::kOk;
      m.record = std::string(frame.substr(kHeaderBytes));
      return m;
    }
  }
  m.rc = jute::decode_request(frame, limits, m.request);
  return m;
}

}  // namespace zkraft::server
