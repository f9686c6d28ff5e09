#pragma once
// One znode as the tree stores it. Kept small on purpose (the tree must use less memory per node
// than ZooKeeper): the full path lives only once, as the key of the tree's path index (inline
// up to 22 bytes, tree/path_key.h); children are pointers to those index entries; ACLs are ids
// into the AclCache; what only a node that has had children needs (the child list, pzxid and
// cversion) lives in a ChildList block of its own, which a leaf does not have.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tree/node_data.h"
#include "tree/path_key.h"

namespace zkraft::tree {

enum class NodeKind : uint8_t { kPersistent = 0, kEphemeral = 1, kContainer = 2, kTtl = 3 };

struct Znode;
// An entry of the path index: the full path and its node. Its address never changes while the
// node exists (the index is node-based), so children can point at it.
using ZnodeEntry = std::pair<const PathKey, Znode>;

// A node's children and the two Stat fields only child changes move. Most nodes of a tree are
// leaves that never had a child: their pzxid is their czxid and their cversion 0, so they carry
// neither field (12 bytes per node), only a null pointer.
struct ChildList {
  // Child entries in a stable, history-determined order (a remove moves the last child into the
  // hole: Znode::index_in_parent).
  std::vector<ZnodeEntry*> entries;
  int64_t pzxid = 0;
  // Counts child creates only (ZooKeeper's internal cversion). It names sequential children and
  // clients see cversion*2 - numChildren, i.e. creates + deletes.
  int32_t cversion = 0;
};

struct Znode {
  int64_t czxid = 0;
  int64_t mzxid = 0;
  int64_t ctime = 0;
  int64_t mtime = 0;
  // Session id for ephemerals, TTL in ms for TTL nodes, 0 otherwise. Clients see the session id
  // for ephemerals and 0 for everything else.
  int64_t owner = 0;
  int32_t version = 0;
  int32_t aversion = 0;
  uint32_t acl = 0;              // AclCache id
  uint32_t index_in_parent = 0;  // position in the parent's child list, for O(1) removal
  NodeData data;                 // 14 bytes, byte-aligned: the two below follow it unpadded
  NodeKind kind = NodeKind::kPersistent;
  bool data_null = false;        // null data (-1 length) is distinct from empty data
  // Invariant: null only while pzxid == czxid and cversion == 0. Once a node has had a child its
  // cversion is above 0, so the list stays (possibly empty) for the node's lifetime.
  std::unique_ptr<ChildList> children;

  size_t num_children() const { return children ? children->entries.size() : 0; }
  int64_t client_owner() const { return kind == NodeKind::kEphemeral ? owner : 0; }
  int64_t pzxid() const { return children ? children->pzxid : czxid; }
  int32_t cversion() const { return children ? children->cversion : 0; }
  // Sets pzxid and cversion; a leaf gets a ChildList only when they differ from a leaf's (czxid
  // must be set first).
  void set_child_stamp(int64_t pzxid, int32_t cversion) {
    if (!children) {
      if (pzxid == czxid && cversion == 0) return;
      child_list();
    }
    children->pzxid = pzxid;
    children->cversion = cversion;
  }
  // The node's ChildList, made (with a leaf's pzxid and cversion) if it has none.
  ChildList& child_list() {
    if (!children) {
      children = std::make_unique<ChildList>();
      children->pzxid = czxid;
    }
    return *children;
  }
};

// The path index entry is one std::unordered_map node: next pointer 8, PathKey 24, Znode 80 = 112
// bytes (the hash is not cached: ZnodeTree::TransparentHash is noexcept), a 112-byte block of the
// tree's BlockPool (tree/block_pool.h). Znode's 80: five 64-bit fields 40, four 32-bit 16, data 14,
// kind 1, data_null 1, children 8.
static_assert(sizeof(Znode) <= 80, "Znode grew: check tree_memory_bench");
static_assert(sizeof(ZnodeEntry) <= 104, "the path key grew: check tree_memory_bench");

}  // namespace zkraft::tree
