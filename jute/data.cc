#include "jute/data.h"

namespace zkraft::jute {

void encode(Writer& w, const Id& v) {
  w.write_string(v.scheme);
  w.write_string(v.id);
}

void encode(Writer& w, const ACL& v) {
  w.write_int(v.perms);
  encode(w, v.id);
}

void encode(Writer& w, const Stat& v) {
  w.write_long(v.czxid);
  w.write_long(v.mzxid);
  w.write_long(v.ctime);
  w.write_long(v.mtime);
  w.write_int(v.version);
  w.write_int(v.cversion);
  w.write_int(v.aversion);
  w.write_long(v.ephemeral_owner);
  w.write_int(v.data_length);
  w.write_int(v.num_children);
  w.write_long(v.pzxid);
}

void encode(Writer& w, const std::vector<ACL>& v) {
  w.write_count(static_cast<int32_t>(v.size()));
  for (const auto& a : v) encode(w, a);
}

bool decode(Reader& r, Id& v) { return r.read_string(v.scheme) && r.read_string(v.id); }

bool decode(Reader& r, ACL& v) { return r.read_int(v.perms) && decode(r, v.id); }

bool decode(Reader& r, Stat& v) {
  return r.read_long(v.czxid) && r.read_long(v.mzxid) && r.read_long(v.ctime) &&
         r.read_long(v.mtime) && r.read_int(v.version) && r.read_int(v.cversion) &&
         r.read_int(v.aversion) && r.read_long(v.ephemeral_owner) && r.read_int(v.data_length) &&
         r.read_int(v.num_children) && r.read_long(v.pzxid);
}

bool decode(Reader& r, std::vector<ACL>& v) {
  int32_t n;
  if (!r.read_count(n, 12)) return false;
  std::vector<ACL> out(static_cast<size_t>(n));
  for (auto& a : out) {
    if (!decode(r, a)) return false;
  }
  v = std::move(out);
  return true;
}

}  // namespace zkraft::jute
