#include "jute/requests.h"

namespace zkraft::jute {

// Encoders: fields in wire order.

void encode(Writer& w, const CreateRequest& v) {
  w.write_string(v.path);
  w.write_buffer(v.data);
  encode(w, v.acl);
  w.write_int(v.flags);
}

void encode(Writer& w, const CreateTTLRequest& v) {
  w.write_string(v.path);
  w.write_buffer(v.data);
  encode(w, v.acl);
  w.write_int(v.flags);
  w.write_long(v.ttl);
}

void encode(Writer& w, const DeleteRequest& v) {
  w.write_string(v.path);
  w.write_int(v.version);
}

void encode(Writer& w, const DeleteContainerRequest& v) { w.write_string(v.path); }

void encode(Writer& w, const ExistsRequest& v) {
  w.write_string(v.path);
  w.write_bool(v.watch);
}

void encode(Writer& w, const GetDataRequest& v) {
  w.write_string(v.path);
  w.write_bool(v.watch);
}

void encode(Writer& w, const SetDataRequest& v) {
  w.write_string(v.path);
  w.write_buffer(v.data);
  w.write_int(v.version);
}

void encode(Writer& w, const GetACLRequest& v) { w.write_string(v.path); }

void encode(Writer& w, const SetACLRequest& v) {
  w.write_string(v.path);
  encode(w, v.acl);
  w.write_int(v.version);
}

void encode(Writer& w, const GetChildrenRequest& v) {
  w.write_string(v.path);
  w.write_bool(v.watch);
}

void encode(Writer& w, const GetChildren2Request& v) {
  w.write_string(v.path);
  w.write_bool(v.watch);
}

void encode(Writer& w, const SyncRequest& v) { w.write_string(v.path); }

void encode(Writer& w, const CheckVersionRequest& v) {
  w.write_string(v.path);
  w.write_int(v.version);
}

void encode(Writer& w, const ReconfigRequest& v) {
  w.write_string(v.joining_servers);
  w.write_string(v.leaving_servers);
  w.write_string(v.new_members);
  w.write_long(v.cur_config_id);
}

void encode(Writer& w, const CheckWatchesRequest& v) {
  w.write_string(v.path);
  w.write_int(v.type);
}

void encode(Writer& w, const RemoveWatchesRequest& v) {
  w.write_string(v.path);
  w.write_int(v.type);
}

void encode(Writer& w, const AddWatchRequest& v) {
  w.write_string(v.path);
  w.write_int(v.mode);
}

void encode(Writer& w, const AuthPacket& v) {
  w.write_int(v.type);
  w.write_string(v.scheme);
  w.write_buffer(v.auth);
}

void encode(Writer& w, const SetWatches& v) {
  w.write_long(v.relative_zxid);
  w.write_strings(v.data_watches);
  w.write_strings(v.exist_watches);
  w.write_strings(v.child_watches);
}

void encode(Writer& w, const SetWatches2& v) {
  w.write_long(v.relative_zxid);
  w.write_strings(v.data_watches);
  w.write_strings(v.exist_watches);
  w.write_strings(v.child_watches);
  w.write_strings(v.persistent_watches);
  w.write_strings(v.persistent_recursive_watches);
}

void encode(Writer& w, const GetSASLRequest& v) { w.write_buffer(v.token); }

void encode(Writer& w, const GetEphemeralsRequest& v) { w.write_string(v.prefix_path); }

void encode(Writer& w, const GetAllChildrenNumberRequest& v) { w.write_string(v.path); }

void encode(Writer&, const EmptyRequest&) {}

// Decoders: every read is bounded by the Reader; the first failure makes the chain stop.

bool decode(Reader& r, CreateRequest& v) {
  return r.read_string(v.path) && r.read_buffer(v.data) && decode(r, v.acl) && r.read_int(v.flags);
}

bool decode(Reader& r, CreateTTLRequest& v) {
  return r.read_string(v.path) && r.read_buffer(v.data) && decode(r, v.acl) &&
         r.read_int(v.flags) && r.read_long(v.ttl);
}

bool decode(Reader& r, DeleteRequest& v) { return r.read_string(v.path) && r.read_int(v.version); }

bool decode(Reader& r, DeleteContainerRequest& v) { return r.read_string(v.path); }

bool decode(Reader& r, ExistsRequest& v) { return r.read_string(v.path) && r.read_bool(v.watch); }

bool decode(Reader& r, GetDataRequest& v) { return r.read_string(v.path) && r.read_bool(v.watch); }

bool decode(Reader& r, SetDataRequest& v) {
  return r.read_string(v.path) && r.read_buffer(v.data) && r.read_int(v.version);
}

bool decode(Reader& r, GetACLRequest& v) { return r.read_string(v.path); }

bool decode(Reader& r, SetACLRequest& v) {
  return r.read_string(v.path) && decode(r, v.acl) && r.read_int(v.version);
}

bool decode(Reader& r, GetChildrenRequest& v) {
  return r.read_string(v.path) && r.read_bool(v.watch);
}

bool decode(Reader& r, GetChildren2Request& v) {
  return r.read_string(v.path) && r.read_bool(v.watch);
}

bool decode(Reader& r, SyncRequest& v) { return r.read_string(v.path); }

bool decode(Reader& r, CheckVersionRequest& v) {
  return r.read_string(v.path) && r.read_int(v.version);
}

bool decode(Reader& r, ReconfigRequest& v) {
  return r.read_string(v.joining_servers) && r.read_string(v.leaving_servers) &&
         r.read_string(v.new_members) && r.read_long(v.cur_config_id);
}

bool decode(Reader& r, CheckWatchesRequest& v) {
  return r.read_string(v.path) && r.read_int(v.type);
}

bool decode(Reader& r, RemoveWatchesRequest& v) {
  return r.read_string(v.path) && r.read_int(v.type);
}

bool decode(Reader& r, AddWatchRequest& v) { return r.read_string(v.path) && r.read_int(v.mode); }

bool decode(Reader& r, AuthPacket& v) {
  return r.read_int(v.type) && r.read_string(v.scheme) && r.read_buffer(v.auth);
}

bool decode(Reader& r, SetWatches& v) {
  return r.read_long(v.relative_zxid) && r.read_strings(v.data_watches) &&
         r.read_strings(v.exist_watches) && r.read_strings(v.child_watches);
}

bool decode(Reader& r, SetWatches2& v) {
  return r.read_long(v.relative_zxid) && r.read_strings(v.data_watches) &&
         r.read_strings(v.exist_watches) && r.read_strings(v.child_watches) &&
         r.read_strings(v.persistent_watches) && r.read_strings(v.persistent_recursive_watches);
}

bool decode(Reader& r, GetSASLRequest& v) { return r.read_buffer(v.token); }

bool decode(Reader& r, GetEphemeralsRequest& v) { return r.read_string(v.prefix_path); }

bool decode(Reader& r, GetAllChildrenNumberRequest& v) { return r.read_string(v.path); }

bool decode(Reader& r, EmptyRequest&) { return r.ok(); }

}  // namespace zkraft::jute
