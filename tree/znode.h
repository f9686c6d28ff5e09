#pragma once
// One znode as the tree stores it. Kept small on purpose (the tree must use less memory per node
// than ZooKeeper): the full path lives only once, as the key of the tree's path index (inline
// up to 30 bytes, tree/path_key.h); children are pointers to those index entries; ACLs are ids
// into the AclCache.

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

struct Znode {
  int64_t czxid = 0;
  int64_t mzxid = 0;
  int64_t pzxid = 0;
  int64_t ctime = 0;
  int64_t mtime = 0;
  // Session id for ephemerals, TTL in ms for TTL nodes, 0 otherwise. Clients see the session id
  // for ephemerals and 0 for everything else.
  int64_t owner = 0;
  int32_t version = 0;
  // Counts child creates only (ZooKeeper's internal cversion). It names sequential children and
  // clients see cversion*2 - numChildren, i.e. creates + deletes.
  int32_t cversion = 0;
  int32_t aversion = 0;
  uint32_t acl = 0;              // AclCache id
  uint32_t index_in_parent = 0;  // position in the parent's child list, for O(1) removal
  NodeData data;                 // 17 bytes, byte-aligned: the two below follow it unpadded
  NodeKind kind = NodeKind::kPersistent;
  bool data_null = false;        // null data (-1 length) is distinct from empty data
  // Child entries in a stable, history-determined order; null for a leaf.
  std::unique_ptr<std::vector<ZnodeEntry*>> children;

  size_t num_children() const { return children ? children->size() : 0; }
  int64_t client_owner() const { return kind == NodeKind::kEphemeral ? owner : 0; }
};

// The path index entry is one std::unordered_map node: next pointer 8, PathKey 32, Znode 96 = 136
// bytes (the hash is not cached: ZnodeTree::TransparentHash is noexcept), a 136-byte block of the
// tree's BlockPool (tree/block_pool.h); glibc would serve it from a 144-byte chunk. Znode's 96:
// six 64-bit fields 48, four 32-bit 16, index_in_parent 4, data 17, kind 1, data_null 1, 1 byte of padding, children 8.
static_assert(sizeof(Znode) <= 96, "Znode grew: check tree_memory_bench");
static_assert(sizeof(ZnodeEntry) <= 128, "the path key grew: check tree_memory_bench");

}  // namespace zkraft::tree
