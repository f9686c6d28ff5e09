// ZnodeTree reads: answered from the local tree with ZooKeeper's ACL checks (FinalRequestProcessor).
#include "jute/errors.h"
#include "tree/tree_internal.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {

namespace err = jute::err;
using internal::auth_of;

int32_t ZnodeTree::get_data(std::string_view path, const std::vector<jute::Id>& auth,
                            jute::Buffer& data, jute::Stat& stat) const {
  const ZnodeEntry* e = find(path);
  if (!e) return err::kNoNode;
  if (!allowed(e->second, jute::perms::kRead, auth)) return err::kNoAuth;
  data.bytes = e->second.data.str();
  data.is_null = e->second.data_null;
  fill_stat(e->second, stat);
  return err::kOk;
}

int32_t ZnodeTree::exists(std::string_view path, const std::vector<jute::Id>& auth,
                          jute::Stat& stat) const {
  if (path.find('\0') != std::string_view::npos) return err::kBadArguments;
  const ZnodeEntry* e = find(path);
  if (!e) return err::kNoNode;
  if (!allowed(e->second, jute::perms::kRead, auth)) return err::kNoAuth;
  fill_stat(e->second, stat);
  return err::kOk;
}

int32_t ZnodeTree::get_children(std::string_view path, const std::vector<jute::Id>& auth,
                                std::vector<std::string>& children, jute::Stat* stat) const {
  const ZnodeEntry* e = find(path);
  if (!e) return err::kNoNode;
  if (!allowed(e->second, jute::perms::kRead, auth)) return err::kNoAuth;
  children.clear();
  if (const ChildList* list = e->second.children()) {
    children.reserve(list->entries.size());
    for (const ZnodeEntry* c : list->entries) children.emplace_back(name_of(c->first));
  }
  if (stat) fill_stat(e->second, *stat);
  return err::kOk;
}

int32_t ZnodeTree::get_acl(std::string_view path, const std::vector<jute::Id>& auth,
                           std::vector<jute::ACL>& acl, jute::Stat& stat) const {
  const ZnodeEntry* e = find(path);
  if (!e) return err::kNoNode;
  if (!allowed(e->second, jute::perms::kRead | jute::perms::kAdmin, auth)) return err::kNoAuth;
  acl = acls_.get(e->second.acl);
  if (!allowed(e->second, jute::perms::kAdmin, auth)) {
    // Readers without ADMIN must not learn password hashes (ZOOKEEPER-1392).
    for (auto& a : acl) {
      if (a.id.scheme != "digest") continue;
      size_t colon = a.id.id.find(':');
      if (colon != std::string::npos) a.id.id = a.id.id.substr(0, colon) + ":x";
    }
  }
  fill_stat(e->second, stat);
  return err::kOk;
}

int32_t ZnodeTree::get_all_children_number(std::string_view path,
                                           const std::vector<jute::Id>& auth, int32_t& n) const {
  const ZnodeEntry* e = find(path);
  if (!e) return err::kNoNode;
  if (!allowed(e->second, jute::perms::kRead, auth)) return err::kNoAuth;
  if (e->first == "/") {
    // ZooKeeper counts index keys: "/" -> all but "" and "/"; "" -> every key starting with "/",
    // which includes the root's "/" alias itself.
    n = static_cast<int32_t>(path.empty() ? index_.size() : index_.size() - 1);
    return err::kOk;
  }
  int64_t count = 0;
  std::vector<const ZnodeEntry*> stack{e};
  while (!stack.empty()) {
    const ZnodeEntry* cur = stack.back();
    stack.pop_back();
    const ChildList* list = cur->second.children();
    if (!list) continue;
    count += static_cast<int64_t>(list->entries.size());
    for (const ZnodeEntry* c : list->entries) stack.push_back(c);
  }
  n = static_cast<int32_t>(count);
  return err::kOk;
}

int32_t ZnodeTree::check_version(std::string_view path, const std::vector<jute::Id>& auth,
                                 int32_t version) const {
  TxnContext ctx;
  ctx.auth = &auth;
  return do_check(ctx, path, version);
}

int32_t ZnodeTree::do_check(const TxnContext& ctx, std::string_view path, int32_t version) const {
  if (!validate_path(path)) return err::kBadArguments;
  const ZnodeEntry* e = find(path);
  if (!e) return err::kNoNode;
  if (!allowed(e->second, jute::perms::kRead, auth_of(ctx))) return err::kNoAuth;
  if (version != -1 && version != e->second.version) return err::kBadVersion;
  return err::kOk;
}

std::vector<std::string> ZnodeTree::ephemerals_of(int64_t session_id,
                                                  std::string_view prefix) const {
  std::vector<std::string> out;
  auto it = ephemerals_.find(session_id);
  if (it == ephemerals_.end()) return out;
  // Java's String.trim(): strips characters <= ' ' at both ends.
  std::string_view trimmed = prefix;
  while (!trimmed.empty() && static_cast<unsigned char>(trimmed.front()) <= ' ') trimmed.remove_prefix(1);
  while (!trimmed.empty() && static_cast<unsigned char>(trimmed.back()) <= ' ') trimmed.remove_suffix(1);
  bool all = trimmed.empty() || trimmed == "/";
  for (std::string_view p : it->second) {
    if (all || p.substr(0, prefix.size()) == prefix) out.emplace_back(p);
  }
  return out;
}

bool ZnodeTree::stat_of(std::string_view path, jute::Stat& stat) const {
  const ZnodeEntry* e = find(path);
  if (!e) return false;
  fill_stat(e->second, stat);
  return true;
}

std::map<int64_t, std::vector<std::string>> ZnodeTree::ephemerals_by_session() const {
  std::map<int64_t, std::vector<std::string>> out;
  for (const auto& [session, paths] : ephemerals_) out[session].assign(paths.begin(), paths.end());
  return out;
}

size_t ZnodeTree::ephemeral_count() const {
  size_t n = 0;
  for (const auto& [session, paths] : ephemerals_) n += paths.size();
  return n;
}

std::vector<std::string> ZnodeTree::reap_candidates(int64_t now_ms, size_t max,
                                                    int64_t max_never_used_ms) const {
  std::vector<std::string> out;
  for (std::string_view p : containers_) {
    if (out.size() >= max) return out;
    const Znode& n = find(p)->second;
    if (n.num_children() != 0) continue;
    if (n.cversion() > 0 || (max_never_used_ms != 0 && now_ms - n.mtime > max_never_used_ms)) {
      out.emplace_back(p);
    }
  }
  for (std::string_view p : ttls_) {
    if (out.size() >= max) return out;
    const Znode& n = find(p)->second;
    if (n.num_children() == 0 && n.owner() != 0 && now_ms - n.mtime > n.owner()) out.emplace_back(p);
  }
  return out;
}

}  // namespace zkraft::tree
