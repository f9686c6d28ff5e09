#include "jute/connect.h"

namespace zkraft::jute {

void encode(Writer& w, const ConnectRequest& v) {
  w.write_int(v.protocol_version);
  w.write_long(v.last_zxid_seen);
  w.write_int(v.time_out);
  w.write_long(v.session_id);
  w.write_buffer(v.passwd);
  if (v.has_read_only) w.write_bool(v.read_only);
}

void encode(Writer& w, const ConnectResponse& v) {
  w.write_int(v.protocol_version);
  w.write_int(v.time_out);
  w.write_long(v.session_id);
  w.write_buffer(v.passwd);
  if (v.has_read_only) w.write_bool(v.read_only);
}

bool decode(Reader& r, ConnectRequest& v) {
  ConnectRequest out;
  if (!(r.read_int(out.protocol_version) && r.read_long(out.last_zxid_seen) &&
        r.read_int(out.time_out) && r.read_long(out.session_id) && r.read_buffer(out.passwd))) {
    return false;
  }
  out.has_read_only = r.remaining() > 0;
  if (out.has_read_only && !r.read_bool(out.read_only)) return false;
  v = std::move(out);
  return true;
}

bool decode(Reader& r, ConnectResponse& v) {
  ConnectResponse out;
  if (!(r.read_int(out.protocol_version) && r.read_int(out.time_out) &&
        r.read_long(out.session_id) && r.read_buffer(out.passwd))) {
    return false;
  }
  out.has_read_only = r.remaining() > 0;
  if (out.has_read_only && !r.read_bool(out.read_only)) return false;
  v = std::move(out);
  return true;
}

}  // namespace zkraft::jute
