// ZnodeTree's incremental snapshots: the change record between snapshot points, the delta
// written from it, and the delta applied in a restore (znode_tree.h, "Incremental snapshots").
//
// Delta layout (jute primitives, big-endian):
//   int magic 'ZKTD', int format 1, long last_zxid, long rolling digest, long node count,
//   the ACL table and quota paths whole (as the snapshot header: int next_acl_id, int count,
//   count x { int id, vector<ACL> }, int quota_count, quota_count x ustring),
//   int link_count, link_count x { int 1, ustring path, int index (-1: appended), int kind,
//                                  long owner } or { int 0, ustring path } (an unlink),
//   long record_count, record_count x node record (snapshot.cc's layout), one per node changed
//   or created since the last point and still there, in no particular order.
//
// A restore replays the links and unlinks in order on the earlier state (a linked node is a
// placeholder of its kind until its record arrives), then overwrites each recorded node with
// its record, then rebuilds the ACL table's counts from the nodes. It checks the node count and
// the rolling digest the writer had: a delta applied to the wrong base, or a change the record
// missed, fails the restore instead of yielding another tree.
#include "tree/invariant.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {

namespace {

constexpr int32_t kDeltaMagic = 0x5a4b5444;  // "ZKTD"
constexpr int32_t kDeltaFormat = 1;
constexpr int32_t kUnlink = 0;
constexpr int32_t kLink = 1;
// write_node's bytes beyond the path and data: the two lengths and the fixed fields.
constexpr uint64_t kRecordOverhead = 4 + 4 + 6 * 8 + 5 * 4;

bool valid_owner(NodeKind kind, int64_t owner) {
  switch (kind) {
    case NodeKind::kEphemeral: return owner != 0;
    case NodeKind::kTtl: return owner > 0 && owner <= kMaxTtlMs;
    default: return owner == 0;
  }
}

}  // namespace

void ZnodeTree::track_changes(bool on, uint64_t max_bytes) {
  if (!on) {
    changes_.reset();
    return;
  }
  // No point yet: the first delta needs a full snapshot taken after start_change_record().
  changes_ = std::make_unique<ChangeRecord>();
  changes_->base_lost = true;
  changes_->max_bytes = max_bytes;
}

void ZnodeTree::start_change_record() {
  if (!changes_) return;
  const uint64_t max_bytes = changes_->max_bytes;
  changes_ = std::make_unique<ChangeRecord>();
  changes_->max_bytes = max_bytes;
  changes_->links.reset(std::move(spare_links_));
  spare_links_ = std::string();
}

void ZnodeTree::bound_change_record() {
  // Each changed node will take at least a record's fixed bytes.
  if (changes_->links.size() + changes_->changed.size() * kRecordOverhead <= changes_->max_bytes) return;
  const uint64_t max_bytes = changes_->max_bytes;
  changes_ = std::make_unique<ChangeRecord>();  // frees the record's memory
  changes_->base_lost = true;
  changes_->max_bytes = max_bytes;
}

void ZnodeTree::note_changed(ZnodeEntry* e) {
  if (changes_->base_lost) return;
  if (changes_->changed.insert(e).second) bound_change_record();
}

uint64_t ZnodeTree::pending_delta_bytes() const {
  if (!changes_) return 0;
  uint64_t bytes = changes_->links.size();
  for (const ZnodeEntry* e : changes_->changed) {
    bytes += std::string_view(e->first).size() + e->second.data.size() + kRecordOverhead;
  }
  return bytes;
}

void ZnodeTree::record_link(ZnodeEntry& e, int32_t at) {
  if (changes_->base_lost) return;
  jute::Writer& w = changes_->links;
  w.write_int(kLink);
  w.write_string(std::string_view(e.first));
  w.write_int(at);
  w.write_int(static_cast<int32_t>(e.second.kind()));
  w.write_long(e.second.owner());
  ++changes_->link_count;
  changes_->changed.insert(&e);
  bound_change_record();
}

void ZnodeTree::record_unlink(ZnodeEntry& e) {
  if (changes_->base_lost) return;
  jute::Writer& w = changes_->links;
  w.write_int(kUnlink);
  w.write_string(std::string_view(e.first));
  ++changes_->link_count;
  changes_->changed.erase(&e);  // its address may hold another node later
  bound_change_record();
}

void ZnodeTree::write_delta_header(jute::Writer& w) const {
  ZKRAFT_INVARIANT(delta_possible(), "a delta is written against a snapshot point of this tree");
  w.write_int(kDeltaMagic);
  w.write_int(kDeltaFormat);
  w.write_long(last_zxid_);
  w.write_long(static_cast<int64_t>(rolling_));
  w.write_long(static_cast<int64_t>(index_.size()));
  write_acls_and_quotas(w);
  w.write_int(static_cast<int32_t>(changes_->link_count));
}

void ZnodeTree::write_delta(jute::Writer& w) {
  write_delta_header(w);
  w.write_raw(changes_->links.bytes());
  w.write_long(static_cast<int64_t>(changes_->changed.size()));
  for (const ZnodeEntry* e : changes_->changed) write_node(w, *e);
  spare_links_ = changes_->links.take();
  start_change_record();
}

void ZnodeTree::begin_live_delta(jute::Writer& w) {
  ZKRAFT_INVARIANT(!live_snapshot_, "one live snapshot at a time");
  write_delta_header(w);
  auto snap = std::make_unique<LiveSnapshot>();
  snap->delta = true;
  snap->links = changes_->links.take();
  LiveSnapshot::Frame changed;
  changed.copy.reserve(changes_->changed.size());
  // These nodes alone are set apart from the tree's mark: a write to one keeps its pre-image
  // until the record is written (keep_pre_image), and every other node is left alone.
  for (ZnodeEntry* e : changes_->changed) {
    e->second.snapshot_mark = !snapshot_mark_;
    changed.copy.push_back(e);
  }
  changed.end = changed.copy.size();
  snap->nodes_at_start = changed.end;
  snap->frames.push_back(std::move(changed));
  snap->mark = snapshot_mark_;
  live_snapshot_ = std::move(snap);
  start_change_record();
}

bool ZnodeTree::continue_delta_links(jute::Writer& w, size_t max_bytes) {
  LiveSnapshot& snap = *live_snapshot_;
  if (snap.count_written) return true;
  const size_t n = std::min(max_bytes, snap.links.size() - snap.links_written);
  w.write_raw(std::string_view(snap.links).substr(snap.links_written, n));
  snap.links_written += n;
  if (snap.links_written < snap.links.size()) return false;
  w.write_long(static_cast<int64_t>(snap.nodes_at_start));
  snap.count_written = true;
  if (spare_links_.capacity() < snap.links.capacity()) spare_links_ = std::move(snap.links);
  snap.links = std::string();
  return true;
}

bool ZnodeTree::apply_delta(jute::Reader& r) {
  ZKRAFT_INVARIANT(!live_snapshot_ && !changes_, "a delta is applied to a tree being restored");
  int32_t magic = 0, format = 0, link_count = 0;
  int64_t last_zxid = 0, rolling = 0, node_count = 0;
  if (!r.read_int(magic) || magic != kDeltaMagic || !r.read_int(format) || format != kDeltaFormat) return false;
  if (!r.read_long(last_zxid) || !r.read_long(rolling) || !r.read_long(node_count)) return false;
  AclCache acls;
  std::set<std::string> quota_paths;
  if (!read_acls_and_quotas(r, acls, quota_paths)) return false;

  // Links and unlinks, in order. A linked node is a placeholder (the root's ACL, which the
  // current table counts) until its record below; one unlinked again has none.
  if (!r.read_int(link_count) || link_count < 0) return false;
  std::string path;
  for (int32_t i = 0; i < link_count; ++i) {
    int32_t op = 0;
    if (!r.read_int(op) || !r.read_string(path) || path == "/" || !validate_path(path)) return false;
    std::string_view parent_path = parent_of(path);
    if (parent_path.empty()) parent_path = "/";
    ZnodeEntry* parent = find(parent_path);
    if (!parent) return false;
    if (op == kUnlink) {
      ZnodeEntry* e = find(path);
      if (!e || e->second.num_children() != 0) return false;
      remove_entry(e, parent);
      continue;
    }
    int32_t at = 0, kind = 0;
    int64_t owner = 0;
    if (op != kLink || !r.read_int(at) || !r.read_int(kind) || !r.read_long(owner)) return false;
    if (kind < 0 || kind > static_cast<int32_t>(NodeKind::kTtl)) return false;
    const NodeKind node_kind = static_cast<NodeKind>(kind);
    if (!valid_owner(node_kind, owner) || find(path) != nullptr) return false;
    if (parent->second.kind() == NodeKind::kEphemeral) return false;
    if (at < -1 || (at >= 0 && static_cast<size_t>(at) >= parent->second.num_children())) return false;
    Znode n;
    n.acl = find("/")->second.acl;
    n.set_kind(node_kind, owner);
    n.index_in_parent = at >= 0 ? static_cast<uint32_t>(at) : 0;
    insert_entry(path, std::move(n), parent, at >= 0);
  }

  // The records of the nodes changed since the earlier point. Their ACL ids are the delta's
  // table's; the counts are rebuilt below, so they are set here without counting.
  int64_t record_count = 0;
  if (!r.read_long(record_count) || record_count < 0) return false;
  jute::Buffer data;
  Znode rec;
  for (int64_t i = 0; i < record_count; ++i) {
    if (!read_record(r, data, path, rec) || !acls.contains(rec.acl)) return false;
    ZnodeEntry* e = find(path);
    if (!e) return false;
    Znode& n = e->second;
    if (n.kind() != rec.kind() || n.owner() != rec.owner()) return false;
    // A node with children keeps its list; a record with a leaf's stamp on it would not say so.
    if (n.num_children() != 0 && rec.children() == nullptr) return false;
    NodeChange change(*this, e, Touches::kMetaAndData);
    data_size_ += static_cast<int64_t>(rec.data.size()) - static_cast<int64_t>(n.data.size());
    n.czxid = rec.czxid;
    n.mzxid = rec.mzxid;
    n.ctime = rec.ctime;
    n.mtime = rec.mtime;
    n.version = rec.version;
    n.aversion = rec.aversion;
    n.acl = rec.acl;
    n.set_child_stamp(rec.pzxid(), rec.cversion());
    n.data_null = rec.data_null;
    n.data = std::move(rec.data);
  }
  if (!r.ok()) return false;

  // Every node's ACL id in the delta's table, counted once per node.
  if (!count_acl_refs(acls)) return false;
  acls.purge_unused();
  acls_ = std::move(acls);
  quota_paths_ = std::move(quota_paths);
  last_zxid_ = last_zxid;
  return index_.size() == static_cast<uint64_t>(node_count) && rolling_ == static_cast<uint64_t>(rolling);
}

}  // namespace zkraft::tree
