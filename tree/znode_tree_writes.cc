// ZnodeTree writes: applied transactions, with PrepRequestProcessor's checks in its order and
// DataTree's effects (multi = apply with an undo log, roll back on the first failure).
#include <cstdio>
#include <variant>

#include "jute/errors.h"
#include "tree/invariant.h"
#include "tree/tree_internal.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {

namespace err = jute::err;
using internal::auth_of;
using internal::wrap_add;

namespace {

std::string sequence_suffix(int32_t counter) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%010d", counter);  // same as Java's String.format("%010d")
  return buf;
}

// PrepRequestProcessor.getParentPathAndValidate (delete, deleteContainer).
bool delete_path_ok(std::string_view path) {
  return path.find('/') != std::string_view::npos && path.find('\0') == std::string_view::npos &&
         !is_special_path(path);
}

}  // namespace

int32_t ZnodeTree::do_create(const TxnContext& ctx, std::string_view path,
                             const jute::Buffer& data, const std::vector<jute::ACL>& acl,
                             int32_t mode, int64_t ttl, std::string& created_path,
                             jute::Stat* stat, std::vector<WatchTrigger>& out) {
  if (!jute::create_mode::is_valid(mode)) return err::kBadArguments;
  if (jute::create_mode::is_ttl(mode)) {
    if (ttl <= 0 || ttl > kMaxTtlMs) return err::kBadArguments;
  } else if (ttl >= 0) {
    return err::kBadArguments;
  }
  if (path.find('/') == std::string_view::npos || path.find('\0') != std::string_view::npos) {
    return err::kBadArguments;
  }
  std::vector<jute::ACL> fixed;
  if (int32_t rc = fixup_acl(acl, auth_of(ctx), options_.schemes, fixed); rc != err::kOk) return rc;
  ZnodeEntry* parent = find(parent_of(path));
  if (!parent) return err::kNoNode;
  Znode& p = parent->second;
  if (!allowed(p, jute::perms::kCreate, auth_of(ctx))) return err::kNoAuth;
  std::string full(path);
  if (jute::create_mode::is_sequential(mode)) full += sequence_suffix(p.cversion());
  if (!validate_path(full)) return err::kBadArguments;
  if (find(full)) return err::kNodeExists;
  if (p.kind() == NodeKind::kEphemeral) return err::kNoChildrenForEphemerals;
  {
    auto bytes = static_cast<int64_t>(data.is_null ? 0 : data.bytes.size());
    if (int32_t rc = quota_check(full, bytes, 1); rc != err::kOk) return rc;
  }

  const size_t children_before = p.num_children();
  const int64_t pzxid_before = p.pzxid();
  note_update(parent);
  {
    NodeChange change(*this, parent, Touches::kMeta);
    p.set_child_stamp(ctx.zxid, wrap_add(p.cversion(), 1));
  }
  // Transactions arrive in zxid order; an older one applied again would move pzxid back.
  ZKRAFT_INVARIANT(p.pzxid() >= pzxid_before, "a parent's pzxid never goes back");

  Znode n;
  n.czxid = n.mzxid = ctx.zxid;  // and so pzxid: a new node is a leaf
  n.ctime = n.mtime = ctx.time_ms;
  if (jute::create_mode::is_container(mode)) {
    n.set_kind(NodeKind::kContainer, 0);
  } else if (jute::create_mode::is_ttl(mode)) {
    n.set_kind(NodeKind::kTtl, ttl);
  } else if (jute::create_mode::is_ephemeral(mode) && ctx.session_id != 0) {
    // ZooKeeper stores owner 0 as a plain persistent node, so an ephemeral without a session is one.
    n.set_kind(NodeKind::kEphemeral, ctx.session_id);
  }
  n.acl = acls_.intern(fixed);
  n.data_null = data.is_null;
  if (!data.is_null) n.data.assign(data.bytes);
  ZnodeEntry* e = insert_entry(full, std::move(n), parent, false);
  ZKRAFT_INVARIANT(p.num_children() == children_before + 1, "a create adds one child to its parent");
  if (undo_) undo_->push_back(Undo{Undo::Kind::kCreated, full, Znode{}, 0, {}});
  quota_on_create(parent->first, name_of(full));
  if (std::string_view q = quota_prefix_of(full); !q.empty()) {
    quota_update_stat(q, static_cast<int64_t>(e->second.data.size()), 1);
  }

  if (stat) fill_stat(e->second, *stat);
  out.push_back({EventType::kNodeCreated, full, acls_.share(e->second.acl)});
  out.push_back({EventType::kNodeChildrenChanged, parent->first.str(), acls_.share(p.acl)});
  created_path = std::move(full);
  return err::kOk;
}

void ZnodeTree::erase_node(const TxnContext& ctx, ZnodeEntry* node, ZnodeEntry* parent,
                           std::vector<WatchTrigger>& out) {
  const size_t children_before = parent->second.num_children();
  const int32_t cversion_before = parent->second.cversion();
  note_update(parent);
  {
    NodeChange change(*this, parent, Touches::kMeta);
    // Only forward, as DataTree.deleteNode: never let pzxid go back.
    Znode& p = parent->second;
    if (ctx.zxid > p.pzxid()) p.set_child_stamp(ctx.zxid, p.cversion());
  }
  std::string path = node->first.str();
  auto acl = acls_.share(node->second.acl);
  Znode removed = remove_entry(node, parent);
  ZKRAFT_INVARIANT(parent->second.num_children() + 1 == children_before,
                   "a delete removes one child from its parent");
  // cversion counts creates only (clients see cversion*2 - numChildren).
  ZKRAFT_INVARIANT(parent->second.cversion() == cversion_before, "a delete leaves the parent's cversion");
  auto bytes = static_cast<int64_t>(removed.data.size());
  out.push_back({EventType::kNodeDeleted, path, std::move(acl)});
  out.push_back({EventType::kNodeChildrenChanged, parent->first.str(), acls_.share(parent->second.acl)});
  if (undo_) {
    uint32_t index = removed.index_in_parent;
    undo_->push_back(Undo{Undo::Kind::kDeleted, path, std::move(removed), index, {}});
  }
  quota_on_delete(parent->first, name_of(path));
  if (std::string_view q = quota_prefix_of(path); !q.empty()) quota_update_stat(q, -bytes, -1);
}

int32_t ZnodeTree::do_remove(const TxnContext& ctx, std::string_view path, int32_t version,
                             std::vector<WatchTrigger>& out) {
  if (!delete_path_ok(path)) return err::kBadArguments;
  ZnodeEntry* parent = find(parent_of(path));
  if (!parent) return err::kNoNode;
  if (!allowed(parent->second, jute::perms::kDelete, auth_of(ctx))) return err::kNoAuth;
  ZnodeEntry* node = find(path);
  if (!node) return err::kNoNode;
  if (version != -1 && version != node->second.version) return err::kBadVersion;
  if (node->second.num_children() != 0) return err::kNotEmpty;
  erase_node(ctx, node, parent, out);
  return err::kOk;
}

int32_t ZnodeTree::do_set_data(const TxnContext& ctx, std::string_view path,
                               const jute::Buffer& data, int32_t version, jute::Stat& stat,
                               std::vector<WatchTrigger>& out) {
  if (!validate_path(path)) return err::kBadArguments;
  ZnodeEntry* e = find(path);
  if (!e) return err::kNoNode;
  Znode& n = e->second;
  if (!allowed(n, jute::perms::kWrite, auth_of(ctx))) return err::kNoAuth;
  {
    auto diff = static_cast<int64_t>(data.is_null ? 0 : data.bytes.size()) -
                static_cast<int64_t>(n.data.size());
    if (int32_t rc = quota_check(e->first, diff, 0); rc != err::kOk) return rc;
  }
  if (version != -1 && version != n.version) return err::kBadVersion;
  note_update(e);
  const auto old_bytes = static_cast<int64_t>(n.data.size());
  {
    NodeChange change(*this, e, Touches::kMetaAndData);  // ends before the quota upkeep, which may touch other nodes
    data_size_ += static_cast<int64_t>(data.is_null ? 0 : data.bytes.size()) - old_bytes;
    n.data_null = data.is_null;
    if (data.is_null) {
      n.data.clear();
    } else {
      n.data.assign(data.bytes);
    }
    n.mtime = ctx.time_ms;
    n.mzxid = ctx.zxid;
    n.version = wrap_add(n.version, 1);
  }
  fill_stat(n, stat);
  out.push_back({EventType::kNodeDataChanged, e->first.str(), acls_.share(n.acl)});
  if (std::string_view q = quota_prefix_of(e->first); !q.empty()) {
    quota_update_stat(q, static_cast<int64_t>(n.data.size()) - old_bytes, 0);
  }
  return err::kOk;
}

int32_t ZnodeTree::create(const TxnContext& ctx, std::string_view path, const jute::Buffer& data,
                          const std::vector<jute::ACL>& acl, int32_t mode, int64_t ttl,
                          std::string& created_path, jute::Stat* stat,
                          std::vector<WatchTrigger>& out) {
  int32_t rc = do_create(ctx, path, data, acl, mode, ttl, created_path, stat, out);
  finish(ctx);
  return rc;
}

int32_t ZnodeTree::remove(const TxnContext& ctx, std::string_view path, int32_t version,
                          std::vector<WatchTrigger>& out) {
  int32_t rc = do_remove(ctx, path, version, out);
  finish(ctx);
  return rc;
}

int32_t ZnodeTree::set_data(const TxnContext& ctx, std::string_view path,
                            const jute::Buffer& data, int32_t version, jute::Stat& stat,
                            std::vector<WatchTrigger>& out) {
  int32_t rc = do_set_data(ctx, path, data, version, stat, out);
  finish(ctx);
  return rc;
}

int32_t ZnodeTree::set_acl(const TxnContext& ctx, std::string_view path,
                           const std::vector<jute::ACL>& acl, int32_t version, jute::Stat& stat) {
  int32_t rc = [&]() -> int32_t {
    if (!validate_path(path)) return err::kBadArguments;
    std::vector<jute::ACL> fixed;
    if (int32_t r = fixup_acl(acl, auth_of(ctx), options_.schemes, fixed); r != err::kOk) return r;
    ZnodeEntry* e = find(path);
    if (!e) return err::kNoNode;
    Znode& n = e->second;
    if (!allowed(n, jute::perms::kAdmin, auth_of(ctx))) return err::kNoAuth;
    if (version != -1 && version != n.aversion) return err::kBadVersion;
    uint32_t id = acls_.intern(fixed);
    {
      NodeChange change(*this, e, Touches::kMeta);
      acls_.add_ref(id);
      acls_.release(n.acl);
      n.acl = id;
      n.aversion = wrap_add(n.aversion, 1);
    }
    fill_stat(n, stat);
    return err::kOk;
  }();
  finish(ctx);
  return rc;
}

std::vector<MultiOpResult> ZnodeTree::multi(const TxnContext& ctx, const std::vector<MultiOp>& ops,
                                            std::vector<WatchTrigger>& out, bool& ok) {
  std::vector<MultiOpResult> results(ops.size());
  std::vector<WatchTrigger> triggers;
  std::vector<Undo> log;
  const uint32_t acl_next_id = acls_.next_id();
  undo_ = &log;
  size_t failed_at = ops.size();
  int32_t failure = err::kOk;
  for (size_t i = 0; i < ops.size(); ++i) {
    MultiOpResult& r = results[i];
    int32_t rc = std::visit(
        [&](const auto& op) -> int32_t {
          using T = std::decay_t<decltype(op)>;
          if constexpr (std::is_same_v<T, CreateOp>) {
            return do_create(ctx, op.path, op.data, op.acl, op.mode, op.ttl, r.path, &r.stat,
                             triggers);
          } else if constexpr (std::is_same_v<T, DeleteOp>) {
            return do_remove(ctx, op.path, op.version, triggers);
          } else if constexpr (std::is_same_v<T, SetDataOp>) {
            return do_set_data(ctx, op.path, op.data, op.version, r.stat, triggers);
          } else {
            return do_check(ctx, op.path, op.version);
          }
        },
        ops[i]);
    if (rc != err::kOk) {
      failed_at = i;
      failure = rc;
      break;
    }
  }
  undo_ = nullptr;
  ok = failed_at == ops.size();
  if (ok) {
    out.insert(out.end(), std::make_move_iterator(triggers.begin()),
               std::make_move_iterator(triggers.end()));
  } else {
    rollback(log);
    // Nothing may remain of the aborted ops, not even ACL ids they interned.
    acls_.purge_unused();
    acls_.rewind_next_id(acl_next_id);
    for (size_t i = 0; i < ops.size(); ++i) {
      results[i] = MultiOpResult{};
      results[i].err = i < failed_at ? err::kOk : i == failed_at ? failure : err::kRuntimeInconsistency;
    }
  }
  finish(ctx);
  return results;
}

void ZnodeTree::close_session(const TxnContext& ctx, int64_t session_id,
                              std::vector<WatchTrigger>& out) {
  auto it = ephemerals_.find(session_id);
  if (it != ephemerals_.end()) {
    std::vector<std::string> paths(it->second.begin(), it->second.end());
    for (const auto& p : paths) {
      ZnodeEntry* node = find(p);
      ZnodeEntry* parent = find(parent_of(p));
      ZKRAFT_INVARIANT(node && parent && node->second.kind() == NodeKind::kEphemeral &&
                           node->second.owner() == session_id,
                       "the ephemeral table agrees with each node's owner");
      erase_node(ctx, node, parent, out);
    }
  }
  finish(ctx);
}

int32_t ZnodeTree::delete_container(const TxnContext& ctx, std::string_view path,
                                    std::vector<WatchTrigger>& out) {
  int32_t rc = [&]() -> int32_t {
    if (!delete_path_ok(path)) return err::kBadArguments;
    ZnodeEntry* node = find(path);
    if (!node) return err::kNoNode;
    if (node->second.num_children() != 0) return err::kNotEmpty;
    if (node->second.kind() == NodeKind::kEphemeral) return err::kBadVersion;
    ZnodeEntry* parent = find(parent_of(path));
    if (!parent) return err::kNoNode;
    erase_node(ctx, node, parent, out);
    return err::kOk;
  }();
  finish(ctx);
  return rc;
}

}  // namespace zkraft::tree
