#include "jute/headers.h"

#include "jute/record_fields.h"

namespace zkraft::jute {

// Fields in wire order (jute/record_fields.h).
ZKRAFT_JUTE_RECORD(RequestHeader, v.xid, v.type)
ZKRAFT_JUTE_RECORD(ReplyHeader, v.xid, v.zxid, v.err)

}  // namespace zkraft::jute
