#include "jute/headers.h"

namespace zkraft::jute {

void encode(Writer& w, const RequestHeader& v) {
  w.write_int(v.xid);
  w.write_int(v.type);
}

void encode(Writer& w, const ReplyHeader& v) {
  w.write_int(v.xid);
  w.write_long(v.zxid);
  w.write_int(v.err);
}

bool decode(Reader& r, RequestHeader& v) { return r.read_int(v.xid) && r.read_int(v.type); }

bool decode(Reader& r, ReplyHeader& v) {
  return r.read_int(v.xid) && r.read_long(v.zxid) && r.read_int(v.err);
}

}  // namespace zkraft::jute
