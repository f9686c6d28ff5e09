#pragma once
// One znode as the tree stores it. Kept small on purpose (the tree must use less memory per node
// than ZooKeeper): the full path lives only once, as the key of the tree's path index (inline
// up to 22 bytes, tree/path_key.h); children are pointers to those index entries; ACLs are ids
// into the AclCache; what only a node that has had children needs (the child list, pzxid and
// cversion) lives in a ChildList block of its own, which a leaf does not have; an ephemeral,
// which cannot have children, keeps its owning session where the pointer to that block would be.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tree/invariant.h"
#include "tree/mapped_vector.h"
#include "tree/node_data.h"
#include "tree/path_key.h"

namespace zkraft::tree {

enum class NodeKind : uint8_t { kPersistent = 0, kEphemeral = 1, kContainer = 2, kTtl = 3 };

struct Znode;
// An entry of the path index: the full path and its node. Its address never changes while the
// node exists (the index is node-based), so children can point at it.
using ZnodeEntry = std::pair<const PathKey, Znode>;
using ChildVector = MappedVector<ZnodeEntry*>;

// A node's children and the two Stat fields only child changes move. Most nodes of a tree are
// leaves that never had a child: their pzxid is their czxid and their cversion 0, so they carry
// neither field (12 bytes per node), only a null pointer.
struct ChildList {
  // Child entries in a stable, history-determined order (a remove moves the last child into the
  // hole: Znode::index_in_parent). A MappedVector: a long list grows without being copied.
  ChildVector entries;
  int64_t pzxid = 0;
  // Counts child creates only (ZooKeeper's internal cversion). It names sequential children and
  // clients see cversion*2 - numChildren, i.e. creates + deletes.
  int32_t cversion = 0;
  // A TTL node's TTL in ms (0 for every other kind): kept here, with the node's children, because
  // the slot a TTL would take in the Znode holds the child list (Znode::owner()).
  int64_t ttl_ms = 0;
};

// A znode: its Stat fields, data, kind and children. Move-only.
//
// Invariants:
//  - the node's kind decides what its last 8 bytes hold: an ephemeral's owning session (an
//    ephemeral never has children: ZooKeeper's NoChildrenForEphemerals, checked by create and by
//    the snapshot reader), every other kind's ChildList or null;
//  - no ChildList only while pzxid == czxid and cversion == 0; once a node has had a child its
//    cversion is above 0, so the list stays (possibly empty) for the node's lifetime;
//  - a TTL node always has a ChildList: its TTL lives there.
struct Znode {
  int64_t czxid = 0;
  int64_t mzxid = 0;
  int64_t ctime = 0;
  int64_t mtime = 0;
  int32_t version = 0;
  int32_t aversion = 0;
  uint32_t acl = 0;              // AclCache id
  uint32_t index_in_parent = 0;  // position in the parent's child list, for O(1) removal
  NodeData data;                 // 14 bytes, byte-aligned: the two below follow it unpadded
  bool data_null : 1 = false;    // null data (-1 length) is distinct from empty data
  // ZnodeTree's live snapshot: equal to the tree's current mark once this node's record was
  // written or kept for the snapshot under way (tree/znode_tree.h, begin_live_snapshot).
  bool snapshot_mark : 1 = false;

  Znode() = default;
  Znode(Znode&& o) noexcept { *this = std::move(o); }
  Znode& operator=(Znode&& o) noexcept;
  Znode(const Znode&) = delete;
  Znode& operator=(const Znode&) = delete;
  ~Znode() { drop_child_list(); }

  NodeKind kind() const { return kind_; }
  // Session id for ephemerals, TTL in ms for TTL nodes, 0 otherwise (ZooKeeper's
  // ephemeralOwner before it encodes a TTL). Clients see client_owner().
  int64_t owner() const;
  int64_t client_owner() const { return kind_ == NodeKind::kEphemeral ? slot_.session : 0; }
  // Makes this node of kind k with that owner (a session for an ephemeral, a TTL for a TTL node,
  // 0 for the rest), once, on a new node still persistent and without children; czxid first.
  void set_kind(NodeKind k, int64_t owner);

  size_t num_children() const { return children() ? children()->entries.size() : 0; }
  int64_t pzxid() const { return children() ? children()->pzxid : czxid; }
  int32_t cversion() const { return children() ? children()->cversion : 0; }
  // The node's ChildList, or null.
  const ChildList* children() const { return kind_ == NodeKind::kEphemeral ? nullptr : slot_.list; }
  // Sets pzxid and cversion; a leaf gets a ChildList only when they differ from a leaf's (czxid
  // must be set first). Not on an ephemeral with values other than a leaf's.
  void set_child_stamp(int64_t pzxid, int32_t cversion);
  // The node's ChildList, made (with a leaf's pzxid and cversion) if it has none. Not on an
  // ephemeral.
  ChildList& child_list();

 private:
  void drop_child_list() noexcept;

  NodeKind kind_ = NodeKind::kPersistent;
  union Slot {
    ChildList* list;  // owned; every kind but ephemeral
    int64_t session;  // an ephemeral's owner
  } slot_{nullptr};
};

inline int64_t Znode::owner() const {
  switch (kind_) {
    case NodeKind::kEphemeral:
      return slot_.session;
    case NodeKind::kTtl:
      return slot_.list->ttl_ms;
    default:
      return 0;
  }
}

inline void Znode::set_kind(NodeKind k, int64_t owner) {
  ZKRAFT_INVARIANT(kind_ == NodeKind::kPersistent, "a node's kind is set once");
  switch (k) {
    case NodeKind::kEphemeral:
      ZKRAFT_INVARIANT(slot_.list == nullptr, "an ephemeral node has no child list");
      kind_ = k;
      slot_.session = owner;
      return;
    case NodeKind::kTtl:
      child_list().ttl_ms = owner;
      kind_ = k;
      return;
    default:
      ZKRAFT_INVARIANT(owner == 0, "only ephemeral and TTL nodes have an owner");
      kind_ = k;
  }
}

inline void Znode::set_child_stamp(int64_t pzxid, int32_t cversion) {
  if (!children()) {
    if (pzxid == czxid && cversion == 0) return;
    child_list();
  }
  slot_.list->pzxid = pzxid;
  slot_.list->cversion = cversion;
}

inline ChildList& Znode::child_list() {
  ZKRAFT_INVARIANT(kind_ != NodeKind::kEphemeral, "an ephemeral node has no children");
  if (!slot_.list) {
    slot_.list = new ChildList();
    slot_.list->pzxid = czxid;
  }
  return *slot_.list;
}

inline void Znode::drop_child_list() noexcept {
  if (kind_ != NodeKind::kEphemeral) delete slot_.list;
  slot_.list = nullptr;
}

inline Znode& Znode::operator=(Znode&& o) noexcept {
  if (this == &o) return *this;
  drop_child_list();
  czxid = o.czxid;
  mzxid = o.mzxid;
  ctime = o.ctime;
  mtime = o.mtime;
  version = o.version;
  aversion = o.aversion;
  acl = o.acl;
  index_in_parent = o.index_in_parent;
  data = std::move(o.data);
  data_null = o.data_null;
  snapshot_mark = o.snapshot_mark;
  kind_ = o.kind_;
  slot_ = o.slot_;
  if (kind_ != NodeKind::kEphemeral) o.slot_.list = nullptr;  // the list moved with it
  return *this;
}

// The path index entry (tree/path_index.h) is PathKey 24 + Znode 72 = 96 bytes, one 96-byte block
// of the tree's BlockPool (tree/block_pool.h), plus its slot in the index's table. Znode's 72: four 64-bit fields 32, four 32-bit 16, data 14,
// data_null and snapshot_mark 1, kind 1, the child list or owner 8.
static_assert(sizeof(Znode) <= 72, "Znode grew: check tree_memory_bench");
static_assert(sizeof(ZnodeEntry) == 96, "the path key grew: check tree_memory_bench");

}  // namespace zkraft::tree
