// LiveSnapshotCheck: reads each record as ZnodeTree::write_node writes it and sums its node hash.
#include "tree/live_snapshot_check.h"

#include <algorithm>

#include "tree/node_hash.h"

namespace zkraft::tree {

namespace {

// A bounded reader of big-endian fields over one piece.
class Fields {
 public:
  explicit Fields(std::string_view in) : p_(in.data()), end_(in.data() + in.size()) {}
  bool at_end() const { return p_ == end_; }
  bool be32(int32_t& v) {
    uint64_t u = 0;
    if (!be(4, u)) return false;
    v = static_cast<int32_t>(static_cast<uint32_t>(u));
    return true;
  }
  bool be64(int64_t& v) {
    uint64_t u = 0;
    if (!be(8, u)) return false;
    v = static_cast<int64_t>(u);
    return true;
  }
  bool bytes(size_t n, std::string_view& v) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    v = std::string_view(p_, n);
    p_ += n;
    return true;
  }

 private:
  bool be(size_t n, uint64_t& v) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(p_[i]);
    p_ += n;
    return true;
  }
  const char* p_;
  const char* end_;
};

// One record (tree/snapshot.cc, write_node): path, data (-1: null), czxid, mzxid, pzxid, ctime,
// mtime, owner, version, cversion, aversion, acl, kind.
bool record_hash(Fields& f, uint64_t& hash) {
  int32_t path_len = 0, data_len = 0;
  std::string_view path, data;
  if (!f.be32(path_len) || path_len < 0 || !f.bytes(static_cast<size_t>(path_len), path)) return false;
  if (!f.be32(data_len) || data_len < -1) return false;
  if (data_len >= 0 && !f.bytes(static_cast<size_t>(data_len), data)) return false;
  internal::NodeMeta m{};
  int32_t acl = 0, kind = 0;
  if (!f.be64(m.czxid) || !f.be64(m.mzxid) || !f.be64(m.pzxid) || !f.be64(m.ctime) || !f.be64(m.mtime) ||
      !f.be64(m.owner) || !f.be32(m.version) || !f.be32(m.cversion) || !f.be32(m.aversion) || !f.be32(acl) ||
      !f.be32(kind)) {
    return false;
  }
  m.acl = static_cast<uint32_t>(acl);
  m.kind = static_cast<uint32_t>(kind);
  const internal::NodeHasher prefix = internal::path_prefix(path);
  hash = internal::finish_content(prefix, data_len < 0, data) + internal::finish_meta(prefix, m);
  return true;
}

}  // namespace

bool LiveSnapshotCheck::add(std::string_view piece) {
  const uint64_t skipped = std::min<uint64_t>(skip_, piece.size());
  skip_ -= skipped;
  piece.remove_prefix(skipped);
  Fields f(piece);
  while (!f.at_end()) {
    uint64_t h = 0;
    if (!record_hash(f, h)) return false;
    sum_ += h;
    ++seen_;
  }
  return true;
}

}  // namespace zkraft::tree
