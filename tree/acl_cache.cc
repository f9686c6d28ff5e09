#include "tree/acl_cache.h"

#include "tree/invariant.h"

namespace zkraft::tree {

std::string AclCache::key_of(const std::vector<jute::ACL>& acl) {
  jute::Writer w;
  jute::encode(w, acl);
  return w.take();
}

uint32_t AclCache::intern(const std::vector<jute::ACL>& acl) {
  std::string key = key_of(acl);
  auto it = by_key_.find(key);
  if (it != by_key_.end()) return it->second;
  uint32_t id = next_id_++;
  by_key_.emplace(key, id);
  by_id_.emplace(id, Entry{std::make_shared<const std::vector<jute::ACL>>(acl), std::move(key), 0});
  maybe_unused_.push_back(id);
  return id;
}

void AclCache::add_ref(uint32_t id) { ++by_id_.at(id).refs; }

void AclCache::release(uint32_t id) {
  auto& e = by_id_.at(id);
  ZKRAFT_INVARIANT(e.refs > 0, "an ACL's reference count never goes below zero");
  if (--e.refs == 0) maybe_unused_.push_back(id);
}

void AclCache::purge_unused() {
  for (uint32_t id : maybe_unused_) {
    auto it = by_id_.find(id);
    if (it != by_id_.end() && it->second.refs == 0) {
      by_key_.erase(it->second.key);
      by_id_.erase(it);
    }
  }
  maybe_unused_.clear();
}

bool AclCache::restore_entry(uint32_t id, std::vector<jute::ACL> acl) {
  if (by_id_.count(id) != 0 || id >= next_id_) return false;
  std::string key = key_of(acl);
  if (!by_key_.emplace(key, id).second) return false;
  by_id_.emplace(id, Entry{std::make_shared<const std::vector<jute::ACL>>(std::move(acl)), std::move(key), 0});
  maybe_unused_.push_back(id);
  return true;
}

bool AclCache::rewind_next_id(uint32_t id) {
  if (!by_id_.empty() && by_id_.rbegin()->first >= id) return false;
  next_id_ = id;
  return true;
}

void AclCache::clear() {
  by_id_.clear();
  by_key_.clear();
  maybe_unused_.clear();
  next_id_ = 1;
}

}  // namespace zkraft::tree
