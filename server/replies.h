#pragma once
// The reply frames the server builds itself (the rest are jute::reply_frame of a record).

#include <cstdint>
#include <string>
#include <string_view>

#include "jute/connect.h"
#include "jute/frame.h"
#include "jute/headers.h"

namespace zkraft::server {

// Header followed by an already-encoded record (empty: header only, as for errors and pings).
inline std::string reply_with_body(const jute::ReplyHeader& h, std::string_view body = {}) {
  jute::Writer w;
  size_t at = jute::begin_frame(w);
  jute::encode(w, h);
  w.write_raw(body);
  jute::end_frame(w, at);
  return w.take();
}

// The handshake's answer. A client that sent no readOnly byte (pre-3.4 layout) gets the 36-byte
// ConnectResponse without it. `read_only`: the session is a read-only server's (Kazoo shows
// CONNECTED_RO, the Java client CONNECTEDREADONLY).
inline std::string connect_reply(bool old_client, int32_t timeout, int64_t session_id,
                                 const std::string& password, bool read_only = false) {
  jute::ConnectResponse resp;
  resp.read_only = read_only;
  resp.time_out = timeout;
  resp.session_id = session_id;
  resp.passwd = jute::Buffer{password, false};
  resp.has_read_only = !old_client;
  return jute::record_frame(resp);
}

// A refused handshake: timeout 0, session 0, a zero password; the client gives up the session.
inline std::string refused_connect_reply(bool old_client) {
  return connect_reply(old_client, 0, 0, std::string(16, '\0'));
}

}  // namespace zkraft::server
