#include "jute/responses.h"

#include "jute/record_fields.h"

namespace zkraft::jute {

// Fields in wire order (jute/record_fields.h).
ZKRAFT_JUTE_RECORD(CreateResponse, v.path)
ZKRAFT_JUTE_RECORD(Create2Response, v.path, v.stat)
ZKRAFT_JUTE_RECORD(ExistsResponse, v.stat)
ZKRAFT_JUTE_RECORD(GetDataResponse, v.data, v.stat)
ZKRAFT_JUTE_RECORD(SetDataResponse, v.stat)
ZKRAFT_JUTE_RECORD(GetACLResponse, v.acl, v.stat)
ZKRAFT_JUTE_RECORD(SetACLResponse, v.stat)
ZKRAFT_JUTE_RECORD(GetChildrenResponse, v.children)
ZKRAFT_JUTE_RECORD(GetChildren2Response, v.children, v.stat)
ZKRAFT_JUTE_RECORD(SyncResponse, v.path)
ZKRAFT_JUTE_RECORD(ErrorResponse, v.err)
ZKRAFT_JUTE_RECORD(SetSASLResponse, v.token)
ZKRAFT_JUTE_RECORD(GetEphemeralsResponse, v.ephemerals)
ZKRAFT_JUTE_RECORD(GetAllChildrenNumberResponse, v.total_number)
ZKRAFT_JUTE_RECORD(ClientInfo, v.auth_scheme, v.user)
ZKRAFT_JUTE_RECORD(WatcherEvent, v.type, v.state, v.path)

void encode(Writer& w, const WhoAmIResponse& v) {
  w.write_count(static_cast<int32_t>(v.client_info.size()));
  for (const auto& c : v.client_info) encode(w, c);
}

void encode(Writer&, const EmptyResponse&) {}

bool decode(Reader& r, WhoAmIResponse& v) {
  int32_t n;
  // Each ClientInfo is at least two 4-byte lengths, so the count is checked against the input
  // before anything is allocated.
  if (!r.read_count(n, 8)) return false;
  std::vector<ClientInfo> out(static_cast<size_t>(n));
  for (auto& c : out) {
    if (!decode(r, c)) return false;
  }
  v.client_info = std::move(out);
  return true;
}

bool decode(Reader& r, EmptyResponse&) { return r.ok(); }

}  // namespace zkraft::jute
