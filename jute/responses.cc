#include "jute/responses.h"

namespace zkraft::jute {

void encode(Writer& w, const CreateResponse& v) { w.write_string(v.path); }

void encode(Writer& w, const Create2Response& v) {
  w.write_string(v.path);
  encode(w, v.stat);
}

void encode(Writer& w, const ExistsResponse& v) { encode(w, v.stat); }

void encode(Writer& w, const GetDataResponse& v) {
  w.write_buffer(v.data);
  encode(w, v.stat);
}

void encode(Writer& w, const SetDataResponse& v) { encode(w, v.stat); }

void encode(Writer& w, const GetACLResponse& v) {
  encode(w, v.acl);
  encode(w, v.stat);
}

void encode(Writer& w, const SetACLResponse& v) { encode(w, v.stat); }

void encode(Writer& w, const GetChildrenResponse& v) { w.write_strings(v.children); }

void encode(Writer& w, const GetChildren2Response& v) {
  w.write_strings(v.children);
  encode(w, v.stat);
}

void encode(Writer& w, const SyncResponse& v) { w.write_string(v.path); }

void encode(Writer& w, const ErrorResponse& v) { w.write_int(v.err); }

void encode(Writer& w, const SetSASLResponse& v) { w.write_buffer(v.token); }

void encode(Writer& w, const GetEphemeralsResponse& v) { w.write_strings(v.ephemerals); }

void encode(Writer& w, const GetAllChildrenNumberResponse& v) { w.write_int(v.total_number); }

void encode(Writer& w, const ClientInfo& v) {
  w.write_string(v.auth_scheme);
  w.write_string(v.user);
}

void encode(Writer& w, const WhoAmIResponse& v) {
  w.write_count(static_cast<int32_t>(v.client_info.size()));
  for (const auto& c : v.client_info) encode(w, c);
}

void encode(Writer& w, const WatcherEvent& v) {
  w.write_int(v.type);
  w.write_int(v.state);
  w.write_string(v.path);
}

void encode(Writer&, const EmptyResponse&) {}

bool decode(Reader& r, CreateResponse& v) { return r.read_string(v.path); }

bool decode(Reader& r, Create2Response& v) { return r.read_string(v.path) && decode(r, v.stat); }

bool decode(Reader& r, ExistsResponse& v) { return decode(r, v.stat); }

bool decode(Reader& r, GetDataResponse& v) { return r.read_buffer(v.data) && decode(r, v.stat); }

bool decode(Reader& r, SetDataResponse& v) { return decode(r, v.stat); }

bool decode(Reader& r, GetACLResponse& v) { return decode(r, v.acl) && decode(r, v.stat); }

bool decode(Reader& r, SetACLResponse& v) { return decode(r, v.stat); }

bool decode(Reader& r, GetChildrenResponse& v) { return r.read_strings(v.children); }

bool decode(Reader& r, GetChildren2Response& v) {
  return r.read_strings(v.children) && decode(r, v.stat);
}

bool decode(Reader& r, SyncResponse& v) { return r.read_string(v.path); }

bool decode(Reader& r, ErrorResponse& v) { return r.read_int(v.err); }

bool decode(Reader& r, SetSASLResponse& v) { return r.read_buffer(v.token); }

bool decode(Reader& r, GetEphemeralsResponse& v) { return r.read_strings(v.ephemerals); }

bool decode(Reader& r, GetAllChildrenNumberResponse& v) { return r.read_int(v.total_number); }

bool decode(Reader& r, ClientInfo& v) {
  return r.read_string(v.auth_scheme) && r.read_string(v.user);
}

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

bool decode(Reader& r, WatcherEvent& v) {
  return r.read_int(v.type) && r.read_int(v.state) && r.read_string(v.path);
}

bool decode(Reader& r, EmptyResponse&) { return r.ok(); }

}  // namespace zkraft::jute
