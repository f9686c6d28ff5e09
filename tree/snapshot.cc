// ZnodeTree snapshot: serialize / deserialize / digest.
//
// Layout (jute primitives, big-endian):
//   int magic 'ZKTR', int format 1, long last_zxid, int next_acl_id,
//   int acl_count, acl_count x { int id, vector<ACL> },
//   int quota_count, quota_count x ustring (paths marked by zookeeper_limits nodes),
//   long node_count, node_count x node in pre-order (a parent before its children, children in
//   their list order, so loading reproduces the child order exactly):
//     ustring path, buffer data, long czxid, mzxid, pzxid, ctime, mtime, owner,
//     int version, cversion, aversion, int acl_id, int kind.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "tree/node_prefetch.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {

namespace {

constexpr int32_t kMagic = 0x5a4b5452;  // "ZKTR"
constexpr int32_t kFormat = 1;

// FNV-1a, 64 bit: fixed by its definition, so every build and platform agrees.
struct Fnv64 {
  uint64_t h = 0xcbf29ce484222325ULL;
  void update(std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
  }
};

}  // namespace

void ZnodeTree::write_header(jute::Writer& w) const {
  w.write_int(kMagic);
  w.write_int(kFormat);
  w.write_long(last_zxid_);
  write_acls_and_quotas(w);
  w.write_long(static_cast<int64_t>(index_.size()));
}

void ZnodeTree::write_acls_and_quotas(jute::Writer& w) const {
  w.write_int(static_cast<int32_t>(acls_.next_id()));
  w.write_int(static_cast<int32_t>(acls_.size()));
  acls_.for_each([&](uint32_t id, const std::vector<jute::ACL>& acl) {
    w.write_int(static_cast<int32_t>(id));
    jute::encode(w, acl);
  });
  w.write_int(static_cast<int32_t>(quota_paths_.size()));
  for (const auto& q : quota_paths_) w.write_string(q);
}

bool ZnodeTree::read_acls_and_quotas(jute::Reader& r, AclCache& acls, std::set<std::string>& quota_paths) {
  int32_t next_acl = 0, acl_count = 0;
  if (!r.read_int(next_acl) || !r.read_int(acl_count)) return false;
  if (next_acl < 1 || acl_count < 0) return false;
  acls.set_next_id(static_cast<uint32_t>(next_acl));
  for (int32_t i = 0; i < acl_count; ++i) {
    int32_t id = 0;
    std::vector<jute::ACL> acl;
    if (!r.read_int(id) || !jute::decode(r, acl)) return false;
    if (id < 1 || !acls.restore_entry(static_cast<uint32_t>(id), std::move(acl))) return false;
  }
  int32_t quota_count = 0;
  if (!r.read_int(quota_count) || quota_count < 0) return false;
  for (int32_t i = 0; i < quota_count; ++i) {
    std::string q;
    if (!r.read_string(q) || q.empty() || q[0] != '/') return false;
    quota_paths.insert(std::move(q));
  }
  return true;
}

bool ZnodeTree::read_record(jute::Reader& r, jute::Buffer& data, std::string& path, Znode& n) {
  n = Znode();
  int32_t acl = 0, kind = 0, cversion = 0;
  int64_t pzxid = 0, owner = 0;
  if (!r.read_string(path) || !r.read_buffer(data) || !r.read_long(n.czxid) || !r.read_long(n.mzxid) ||
      !r.read_long(pzxid) || !r.read_long(n.ctime) || !r.read_long(n.mtime) || !r.read_long(owner) ||
      !r.read_int(n.version) || !r.read_int(cversion) || !r.read_int(n.aversion) || !r.read_int(acl) ||
      !r.read_int(kind)) {
    return false;
  }
  if (kind < 0 || kind > static_cast<int32_t>(NodeKind::kTtl)) return false;
  const NodeKind node_kind = static_cast<NodeKind>(kind);
  if (acl < 1) return false;
  n.acl = static_cast<uint32_t>(acl);
  n.data_null = data.is_null;
  if (data.is_null && !data.bytes.empty()) return false;
  n.data.assign(data.bytes);
  switch (node_kind) {
    case NodeKind::kEphemeral:
      if (owner == 0) return false;
      // An ephemeral never has had a child, so it has a leaf's child stamp (and no room for
      // another: Znode keeps its owner where a parent keeps its ChildList).
      if (pzxid != n.czxid || cversion != 0) return false;
      break;
    case NodeKind::kTtl:
      if (owner <= 0 || owner > kMaxTtlMs) return false;
      break;
    default:
      if (owner != 0) return false;
  }
  n.set_child_stamp(pzxid, cversion);
  n.set_kind(node_kind, owner);
  return validate_path(path);
}

void ZnodeTree::write_node(jute::Writer& w, const ZnodeEntry& e) {
  const Znode& n = e.second;
  w.write_string(e.first);
  if (n.data_null) {
    w.write_int(-1);
  } else {
    w.write_string(n.data.view());  // same bytes as a non-null buffer
  }
  // The fixed-size fields in one step (jute::Writer::extend says why).
  constexpr size_t kFixedBytes = 6 * 8 + 5 * 4;
  char* p = w.extend(kFixedBytes);
  p = jute::put_be64(p, static_cast<uint64_t>(n.czxid));
  p = jute::put_be64(p, static_cast<uint64_t>(n.mzxid));
  p = jute::put_be64(p, static_cast<uint64_t>(n.pzxid()));
  p = jute::put_be64(p, static_cast<uint64_t>(n.ctime));
  p = jute::put_be64(p, static_cast<uint64_t>(n.mtime));
  p = jute::put_be64(p, static_cast<uint64_t>(n.owner()));
  p = jute::put_be32(p, static_cast<uint32_t>(n.version));
  p = jute::put_be32(p, static_cast<uint32_t>(n.cversion()));
  p = jute::put_be32(p, static_cast<uint32_t>(n.aversion));
  p = jute::put_be32(p, static_cast<uint32_t>(n.acl));
  jute::put_be32(p, static_cast<uint32_t>(static_cast<int32_t>(n.kind())));
}

template <class F>
void ZnodeTree::for_each_preorder(F&& f) const {
  const ZnodeEntry* root = find("/");
  std::vector<const ZnodeEntry*> stack{root};
  while (!stack.empty()) {
    // The nodes visited next are the stack's top ones (all live: nothing changes the tree meanwhile).
    const size_t n = stack.size();
    if (n > internal::kEntryAhead) internal::prefetch_entry(stack[n - 1 - internal::kEntryAhead]);
    if (n > internal::kBlocksAhead) internal::prefetch_blocks(stack[n - 1 - internal::kBlocksAhead]);
    const ZnodeEntry* e = stack.back();
    stack.pop_back();
    if constexpr (std::is_same_v<decltype(f(*e)), bool>) {
      if (!f(*e)) return;  // the caller is done
    } else {
      f(*e);
    }
    if (const ChildList* list = e->second.children()) {
      const auto& kids = list->entries;
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
    }
  }
}

void ZnodeTree::serialize(jute::Writer& w) const {
  write_header(w);
  for_each_preorder([&](const ZnodeEntry& e) { write_node(w, e); });
}

bool ZnodeTree::serialize_in_pieces(jute::Writer& w, size_t piece_bytes,
                                    const std::function<bool(std::string_view)>& out) const {
  bool ok = true;
  auto flush_if_full = [&] {
    if (w.size() >= piece_bytes) {
      ok = out(w.bytes());
      w.clear();
    }
    return ok;
  };
  write_header(w);
  if (!flush_if_full()) return false;
  for_each_preorder([&](const ZnodeEntry& e) {
    write_node(w, e);
    return flush_if_full();
  });
  return ok;
}

bool ZnodeTree::count_acl_refs(AclCache& acls) const {
  bool known = true;
  for_each_preorder([&](const ZnodeEntry& e) {
    if (!acls.contains(e.second.acl)) return known = false;
    acls.add_ref(e.second.acl);
    return true;
  });
  return known;
}

uint64_t ZnodeTree::digest() const {
  Fnv64 hash;
  jute::Writer w;
  write_header(w);
  hash.update(w.bytes());
  for_each_preorder([&](const ZnodeEntry& e) {
    w.clear();
    write_node(w, e);
    hash.update(w.bytes());
  });
  return hash.h;
}

bool ZnodeTree::deserialize(jute::Reader& r) {
  int32_t magic = 0, format = 0;
  int64_t last_zxid = 0, node_count = 0;
  if (!r.read_int(magic) || magic != kMagic || !r.read_int(format) || format != kFormat) return false;
  if (!r.read_long(last_zxid)) return false;

  ZnodeTree t(EmptyTag{}, options_);
  t.last_zxid_ = last_zxid;
  if (!read_acls_and_quotas(r, t.acls_, t.quota_paths_)) return false;
  if (!r.read_long(node_count) || node_count < 1) return false;
  // Each node takes at least 77 bytes on the wire, which bounds the reservation by the input.
  // A quarter more than the snapshot holds: the log replayed after it (up to snapCount entries)
  // adds nodes, and a rehash of a 1,000,000-entry index right after start costs ~100 ms.
  const int64_t fits = static_cast<int64_t>(r.remaining() / 77);
  t.index_.reserve(static_cast<size_t>(std::min<int64_t>(node_count, fits) +
                                       std::min<int64_t>(node_count, fits) / 4));

  // Pre-order: a node's parent is the node before it or one of that node's ancestors, kept on
  // this stack, so the parent is found by comparing paths instead of a hash lookup per node.
  // A snapshot in another order (a parent earlier, but not an ancestor of the previous node)
  // still loads: the lookup is the fallback.
  std::vector<ZnodeEntry*> ancestors;
  jute::Buffer data;  // reused: its capacity survives from node to node
  struct Record {
    std::string path;
    uint64_t path_hash = 0;
    Znode node;
  };
  // Reads and checks the next record (everything but where it goes in the tree).
  auto decode = [&](Record& rec) {
    if (!read_record(r, data, rec.path, rec.node) || !t.acls_.contains(rec.node.acl)) return false;
    rec.path_hash = PathIndex::hash(rec.path);
    return true;
  };
  // Puts a decoded record (not the root) under its parent.
  auto insert = [&](Record& rec) {
    std::string_view parent_path = parent_of(rec.path);
    if (parent_path.empty()) parent_path = "/";  // the root's children
    while (!ancestors.empty() && ancestors.back()->first != parent_path) ancestors.pop_back();
    ZnodeEntry* parent = ancestors.empty() ? t.find(parent_path) : ancestors.back();
    if (!parent || parent->second.kind() == NodeKind::kEphemeral) return false;
    if (ancestors.empty()) ancestors.push_back(parent);
    ZnodeEntry* e = t.insert_entry_if_new(rec.path, rec.path_hash, std::move(rec.node), parent);
    if (!e) return false;  // the same path twice
    ancestors.push_back(e);
    return true;
  };

  Record records[2];
  if (!decode(records[0]) || records[0].path != "/" ||
      records[0].node.kind() != NodeKind::kPersistent) {
    return false;
  }
  ancestors.push_back(t.insert_entry("/", std::move(records[0].node), nullptr, false));
  // Each record after the root is inserted one step after it is decoded, with its slot in the
  // index prefetched in between: in a table of millions that slot is a cache miss, and decoding
  // the next record hides it (tree_memory_bench 1000000 100, deserialize of the flat tree, two
  // runs each: 771 and 789 ms with the prefetch, 974 and 1020 ms without).
  Record* pending = nullptr;
  for (int64_t i = 1; i < node_count; ++i) {
    Record& rec = records[i % 2];
    if (!decode(rec)) return false;
    t.index_.prefetch(rec.path_hash);
    if (pending && !insert(*pending)) return false;
    pending = &rec;
  }
  if (pending && !insert(*pending)) return false;
  if (!r.ok()) return false;
  t.acls_.purge_unused();
  replace_with(std::move(t));
  return true;
}

}  // namespace zkraft::tree
