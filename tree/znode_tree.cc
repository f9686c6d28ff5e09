// ZnodeTree core: construction of the fresh tree, lookups, Stat, and the primitive mutations that
// keep the side indexes right and record undo steps while a multi runs.
#include "tree/znode_tree.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "tree/invariant.h"
#include "tree/node_hash.h"
#include "tree/tree_internal.h"

namespace zkraft::tree {

using internal::wrap_add;

// ---------------------------------------------------------------- construction

ZnodeTree::ZnodeTree() : ZnodeTree(Options{}) {}

ZnodeTree::ZnodeTree(EmptyTag, Options options) : options_(std::move(options)) {}

ZnodeTree::ZnodeTree(Options options) : options_(std::move(options)) {
  const std::vector<jute::ACL> open{{jute::perms::kAll, {"world", "anyone"}}};
  const std::vector<jute::ACL> read_only{{jute::perms::kRead, {"world", "anyone"}}};
  auto make = [&](const std::vector<jute::ACL>& acl) {
    Znode n;
    n.acl = acls_.intern(acl);
    return n;
  };
  ZnodeEntry* root = insert_entry("/", make(open), nullptr, false);
  ZnodeEntry* zk = insert_entry("/zookeeper", make(open), root, false);
  insert_entry("/zookeeper/quota", make(open), zk, false);
  Znode config = make(read_only);
  config.aversion = -1;  // ZooKeeper sets its ACL with setACL(..., version -1)
  insert_entry("/zookeeper/config", std::move(config), zk, false);
}

void ZnodeTree::set_config_data(std::string_view text) {
  ZnodeEntry* e = find("/zookeeper/config");
  if (!e) return;
  NodeChange change(*this, e, Touches::kMetaAndData);  // keeps the rolling digest current
  Znode& n = e->second;
  data_size_ += static_cast<int64_t>(text.size()) - static_cast<int64_t>(n.data.size());
  n.data.assign(text);
  n.data_null = false;
  n.version = -1;
}

// ---------------------------------------------------------------- helpers

ZnodeEntry* ZnodeTree::find(std::string_view path) {
  return index_.find(path.empty() ? std::string_view("/") : path);
}

const ZnodeEntry* ZnodeTree::find(std::string_view path) const {
  return index_.find(path.empty() ? std::string_view("/") : path);
}

bool ZnodeTree::allowed(const Znode& n, int32_t perm, const std::vector<jute::Id>& auth) const {
  return acl_allows(acls_.get(n.acl), perm, auth, options_.schemes);
}

void ZnodeTree::fill_stat(const Znode& n, jute::Stat& s) const {
  auto children = static_cast<int32_t>(n.num_children());
  s.czxid = n.czxid;
  s.mzxid = n.mzxid;
  s.ctime = n.ctime;
  s.mtime = n.mtime;
  s.version = n.version;
  // Creates counted twice minus the children still present = creates + deletes.
  const int32_t cversion = n.cversion();
  s.cversion = wrap_add(wrap_add(cversion, cversion), -children);
  s.aversion = n.aversion;
  s.ephemeral_owner = n.client_owner();
  s.data_length = static_cast<int32_t>(n.data.size());
  s.num_children = children;
  s.pzxid = n.pzxid();
}

namespace {

using internal::finish_content;
using internal::finish_meta;
using internal::NodeMeta;

internal::NodeHasher path_prefix(const ZnodeEntry& e) { return internal::path_prefix(e.first.view()); }

uint64_t finish_content(internal::NodeHasher h, const Znode& n) {
  return finish_content(h, n.data_null, n.data.view());
}

uint64_t finish_meta(internal::NodeHasher h, const Znode& n) {
  return finish_meta(h, NodeMeta{n.czxid, n.mzxid, n.pzxid(), n.ctime, n.mtime, n.owner(), n.version,
                                 n.cversion(), n.aversion, n.acl, static_cast<uint32_t>(n.kind())});
}

}  // namespace

uint64_t ZnodeTree::content_hash(const ZnodeEntry& e) { return finish_content(path_prefix(e), e.second); }

uint64_t ZnodeTree::meta_hash(const ZnodeEntry& e) { return finish_meta(path_prefix(e), e.second); }

uint64_t ZnodeTree::node_hash(const ZnodeEntry& e) {
  // content_hash(e) + meta_hash(e), with the path hashed once for both.
  const internal::NodeHasher prefix = path_prefix(e);
  return finish_content(prefix, e.second) + finish_meta(prefix, e.second);
}

int64_t ZnodeTree::size_of(std::string_view path, const Znode& n) {
  // ZooKeeper indexes the root as "" (the "/" alias is counted once, in data_size_'s start).
  return static_cast<int64_t>(path == "/" ? 0 : path.size()) + static_cast<int64_t>(n.data.size());
}

Znode ZnodeTree::copy_header(const Znode& n) {
  Znode c;
  c.czxid = n.czxid;
  c.mzxid = n.mzxid;
  c.set_child_stamp(n.pzxid(), n.cversion());
  c.set_kind(n.kind(), n.owner());
  c.ctime = n.ctime;
  c.mtime = n.mtime;
  c.version = n.version;
  c.aversion = n.aversion;
  c.acl = n.acl;
  c.index_in_parent = n.index_in_parent;
  c.data_null = n.data_null;
  c.data = n.data;
  return c;
}

// ---------------------------------------------------------------- primitive mutations

ZnodeEntry* ZnodeTree::insert_entry(std::string_view path, Znode node, ZnodeEntry* parent,
                                    bool at_saved_index) {
  uint32_t saved_index = node.index_in_parent;
  auto [e, inserted] = index_.emplace(path, std::move(node));
  ZKRAFT_INVARIANT(inserted, "a path is in the index at most once");
  return link_entry(e, parent, at_saved_index, saved_index);
}

ZnodeEntry* ZnodeTree::insert_entry_if_new(std::string_view path, uint64_t path_hash, Znode node,
                                           ZnodeEntry* parent) {
  auto [e, inserted] = index_.emplace(path, path_hash, std::move(node));
  if (!inserted) return nullptr;
  return link_entry(e, parent, false, 0, /*fused_hash=*/true);
}

ZnodeEntry* ZnodeTree::link_entry(ZnodeEntry* e, ZnodeEntry* parent, bool at_saved_index,
                                  uint32_t saved_index, bool fused_hash) {
  std::string_view key = e->first;
  Znode& n = e->second;
  n.snapshot_mark = snapshot_mark_;  // not in a live snapshot under way (znode_tree.h)
  if (parent) {
    const size_t had = parent->second.num_children();
    before_child_list_change(parent, at_saved_index && saved_index < had ? saved_index : had);
    ChildVector* kids = &parent->second.child_list().entries;
    const bool in_place = at_saved_index && saved_index < kids->size();
    if (in_place) {
      // Undo of a swap-remove: the element that filled the hole goes back to the end.
      ZnodeEntry* moved = (*kids)[saved_index];
      moved->second.index_in_parent = static_cast<uint32_t>(kids->size());
      kids->push_back(moved);
      (*kids)[saved_index] = e;
      n.index_in_parent = saved_index;
    } else {
      n.index_in_parent = static_cast<uint32_t>(kids->size());
      kids->push_back(e);
    }
    ZKRAFT_INVARIANT((*kids)[n.index_in_parent] == e, "a child knows its place in the parent's list");
    if (changes_) record_link(*e, in_place ? static_cast<int32_t>(saved_index) : -1);
  }
  acls_.add_ref(n.acl);
  data_size_ += size_of(key, n);
  hash(*e, fused_hash ? node_hash(*e) : content_hash(*e) + meta_hash(*e));
  switch (n.kind()) {
    case NodeKind::kEphemeral: {
      ZKRAFT_INVARIANT(n.owner() != 0, "an ephemeral node has an owner session");
      const bool added = ephemerals_[n.owner()].insert(key).second;
      ZKRAFT_INVARIANT(added, "the ephemeral table lists each node once, under its owner");
      break;
    }
    case NodeKind::kContainer: containers_.insert(key); break;
    case NodeKind::kTtl: ttls_.insert(key); break;
    case NodeKind::kPersistent: break;
  }
  return e;
}

Znode ZnodeTree::remove_entry(ZnodeEntry* e, ZnodeEntry* parent) {
  // A live snapshot may read a kept child list in the node's own ChildList, which goes with the
  // node: only a leaf goes, and removing its children copied such a list first.
  ZKRAFT_INVARIANT(e->second.num_children() == 0, "a removed node has no children");
  keep_pre_image(e);
  if (changes_ && parent) record_unlink(*e);
  std::string_view key = e->first;
  Znode& n = e->second;
  unhash(*e, content_hash(*e) + meta_hash(*e));
  switch (n.kind()) {
    case NodeKind::kEphemeral: {
      auto it = ephemerals_.find(n.owner());
      const bool listed = it != ephemerals_.end() && it->second.erase(key) == 1;
      ZKRAFT_INVARIANT(listed, "the ephemeral table lists each node once, under its owner");
      if (it->second.empty()) ephemerals_.erase(it);
      break;
    }
    case NodeKind::kContainer: containers_.erase(key); break;
    case NodeKind::kTtl: ttls_.erase(key); break;
    case NodeKind::kPersistent: break;
  }
  data_size_ -= size_of(key, n);
  ZKRAFT_INVARIANT(data_size_ >= 1, "the data size never goes below the root's");
  acls_.release(n.acl);
  if (parent) {
    before_child_list_change(parent, n.index_in_parent);
    ZKRAFT_INVARIANT(parent->second.children() != nullptr, "a removed child is in its parent's list");
    auto& kids = parent->second.child_list().entries;
    uint32_t i = n.index_in_parent;
    ZKRAFT_INVARIANT(i < kids.size() && kids[i] == e, "a removed child is in its parent's list");
    ZnodeEntry* last = kids.back();
    kids[i] = last;
    last->second.index_in_parent = i;
    kids.pop_back();
    // The list stays (it holds the parent's pzxid and cversion), but not the buffer of a child
    // list that has emptied: a queue's parent drained of 100,000 children would keep 800 KB.
    if (kids.empty()) kids.release();
  }
  Znode out = std::move(n);
  index_.erase(e);
  return out;
}

void ZnodeTree::note_update(ZnodeEntry* e) {
  if (undo_) undo_->push_back(Undo{Undo::Kind::kUpdated, e->first.str(), copy_header(e->second), 0, {}});
}

void ZnodeTree::restore_header(ZnodeEntry* e, const Znode& saved) {
  NodeChange change(*this, e, Touches::kMetaAndData);
  Znode& n = e->second;
  data_size_ += static_cast<int64_t>(saved.data.size()) - static_cast<int64_t>(n.data.size());
  if (n.acl != saved.acl) {
    acls_.add_ref(saved.acl);
    acls_.release(n.acl);
  }
  n.czxid = saved.czxid;
  n.mzxid = saved.mzxid;
  n.set_child_stamp(saved.pzxid(), saved.cversion());
  n.ctime = saved.ctime;
  n.mtime = saved.mtime;
  n.version = saved.version;
  n.aversion = saved.aversion;
  n.acl = saved.acl;
  n.data_null = saved.data_null;
  n.data = saved.data;
}

void ZnodeTree::rollback(std::vector<Undo>& log) {
  for (auto it = log.rbegin(); it != log.rend(); ++it) {
    Undo& u = *it;
    switch (u.kind) {
      case Undo::Kind::kUpdated:
        restore_header(find(u.path), u.saved);
        break;
      case Undo::Kind::kCreated:
        remove_entry(find(u.path), find(parent_of(u.path)));
        break;
      case Undo::Kind::kQuotaPaths:
        quota_paths_ = std::move(u.quota_paths);
        break;
      case Undo::Kind::kDeleted: {
        ZnodeEntry* parent = find(parent_of(u.path));
        u.saved.index_in_parent = u.index;
        insert_entry(u.path, std::move(u.saved), parent, true);
        break;
      }
    }
  }
  log.clear();
}

void ZnodeTree::finish(const TxnContext& ctx) {
  last_zxid_ = ctx.zxid;
  acls_.purge_unused();
}

}  // namespace zkraft::tree
