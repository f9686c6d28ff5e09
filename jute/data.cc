#include "jute/data.h"

#include "jute/record_fields.h"

namespace zkraft::jute {

// Fields in wire order (jute/record_fields.h).
ZKRAFT_JUTE_RECORD(Id, v.scheme, v.id)
ZKRAFT_JUTE_RECORD(ACL, v.perms, v.id)
ZKRAFT_JUTE_RECORD(Stat, v.czxid, v.mzxid, v.ctime, v.mtime, v.version, v.cversion, v.aversion,
                   v.ephemeral_owner, v.data_length, v.num_children, v.pzxid)

void encode(Writer& w, const std::vector<ACL>& v) {
  w.write_count(static_cast<int32_t>(v.size()));
  for (const auto& a : v) encode(w, a);
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
