#pragma once
// The handshake records: the first frame a client sends (no RequestHeader before it) and the
// server's answer.

#include <cstdint>

#include "jute/archive.h"

namespace zkraft::jute {

// ConnectRequest. `read_only` is optional on the wire: clients before 3.4 omit the trailing byte.
// has_read_only records whether it was present, so the server can answer in the same style and a
// re-encode reproduces the original bytes.
struct ConnectRequest {
  int32_t protocol_version = 0;
  int64_t last_zxid_seen = 0;
  int32_t time_out = 0;  // requested session timeout, ms
  int64_t session_id = 0;  // 0 asks for a new session
  Buffer passwd;           // 16 bytes; zeros for a new session
  bool read_only = false;
  bool has_read_only = true;
  bool operator==(const ConnectRequest&) const = default;
};

// ConnectResponse: 36-byte body without the read_only byte (old clients), 37 bytes with it.
// time_out=0, session_id=0 and a zero passwd tell the client its session expired.
struct ConnectResponse {
  int32_t protocol_version = 0;
  int32_t time_out = 0;
  int64_t session_id = 0;
  Buffer passwd;
  bool read_only = false;
  bool has_read_only = true;
  bool operator==(const ConnectResponse&) const = default;
};

void encode(Writer& w, const ConnectRequest& v);
void encode(Writer& w, const ConnectResponse& v);
// Both decoders read the optional trailing byte only if input remains; bytes after it are left
// unread (ZooKeeper ignores them as well).
bool decode(Reader& r, ConnectRequest& v);
bool decode(Reader& r, ConnectResponse& v);

}  // namespace zkraft::jute
