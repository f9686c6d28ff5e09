#pragma once
// The headers in front of every request and reply after the handshake.

#include <cstdint>

#include "jute/archive.h"

namespace zkraft::jute {

// In front of every client request: the client's xid (see jute/opcodes.h for special xids) and
// the op code.
struct RequestHeader {
  int32_t xid = 0;
  int32_t type = 0;
  bool operator==(const RequestHeader&) const = default;
};

// In front of every reply and notification. The reply record follows only when err == 0.
struct ReplyHeader {
  int32_t xid = 0;
  int64_t zxid = 0;  // the server's last processed zxid (for 3.8 notifications: -1)
  int32_t err = 0;
  bool operator==(const ReplyHeader&) const = default;
};

void encode(Writer& w, const RequestHeader& v);
void encode(Writer& w, const ReplyHeader& v);
bool decode(Reader& r, RequestHeader& v);
bool decode(Reader& r, ReplyHeader& v);

}  // namespace zkraft::jute
