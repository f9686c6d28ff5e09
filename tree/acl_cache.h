#pragma once
// Interned ACL lists, as ZooKeeper's ReferenceCountedACLCache: each distinct list is stored once and
// nodes refer to it by a small id. Ids are handed out in increasing order and never reused, so two
// trees fed the same operations assign the same ids.
//
// Invariant: refs(id) == number of nodes holding id. Entries whose count drops to zero stay until
// purge_unused(), so an aborted multi can restore a node that held them.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jute/data.h"

namespace zkraft::tree {

class AclCache {
 public:
  // Returns the id of `acl`, adding it (with no references yet) if new. The caller then counts
  // the node that will hold it with add_ref().
  uint32_t intern(const std::vector<jute::ACL>& acl);
  void add_ref(uint32_t id);
  void release(uint32_t id);
  // Drops entries without references (call between top-level operations).
  void purge_unused();

  const std::vector<jute::ACL>& get(uint32_t id) const { return *by_id_.at(id).acl; }
  // Shared handle to the list, valid after the entry is purged (watch triggers carry it).
  std::shared_ptr<const std::vector<jute::ACL>> share(uint32_t id) const { return by_id_.at(id).acl; }
  bool contains(uint32_t id) const { return by_id_.count(id) != 0; }
  size_t size() const { return by_id_.size(); }
  uint32_t next_id() const { return next_id_; }

  // Snapshot support: entries in id order, and exact restoration (reference counts start at 0
  // and are rebuilt by the nodes that refer to them).
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [id, e] : by_id_) f(id, *e.acl);
  }
  bool restore_entry(uint32_t id, std::vector<jute::ACL> acl);
  void set_next_id(uint32_t id) { next_id_ = id; }
  // After an aborted multi: forget ids handed out since `id` (all of them must be purged).
  bool rewind_next_id(uint32_t id);
  void clear();

 private:
  struct Entry {
    std::shared_ptr<const std::vector<jute::ACL>> acl;
    std::string key;
    uint64_t refs = 0;
  };
  static std::string key_of(const std::vector<jute::ACL>& acl);

  std::map<uint32_t, Entry> by_id_;
  std::unordered_map<std::string, uint32_t> by_key_;
  std::vector<uint32_t> maybe_unused_;
  uint32_t next_id_ = 1;
};

}  // namespace zkraft::tree
