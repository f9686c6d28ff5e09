#include "tree/znode_tree.h"

#include <algorithm>
#include <cstdio>
#include <variant>

#include "jute/errors.h"

namespace zkraft::tree {

namespace err = jute::err;

namespace {

const std::vector<jute::Id> kNoIds;

const std::vector<jute::Id>& auth_of(const TxnContext& ctx) { return ctx.auth ? *ctx.auth : kNoIds; }

// Java int arithmetic: wraps instead of overflowing.
int32_t wrap_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

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

// ---------------------------------------------------------------- helpers

ZnodeEntry* ZnodeTree::find(std::string_view path) {
  auto it = index_.find(path.empty() ? std::string_view("/") : path);
  return it == index_.end() ? nullptr : &*it;
}

const ZnodeEntry* ZnodeTree::find(std::string_view path) const {
  auto it = index_.find(path.empty() ? std::string_view("/") : path);
  return it == index_.end() ? nullptr : &*it;
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
  s.cversion = wrap_add(wrap_add(n.cversion, n.cversion), -children);
  s.aversion = n.aversion;
  s.ephemeral_owner = n.client_owner();
  s.data_length = static_cast<int32_t>(n.data.size());
  s.num_children = children;
  s.pzxid = n.pzxid;
}

int64_t ZnodeTree::size_of(std::string_view path, const Znode& n) {
  // ZooKeeper indexes the root as "" (the "/" alias is counted once, in data_size_'s start).
  return static_cast<int64_t>(path == "/" ? 0 : path.size()) + static_cast<int64_t>(n.data.size());
}

Znode ZnodeTree::copy_header(const Znode& n) {
  Znode c;
  c.czxid = n.czxid;
  c.mzxid = n.mzxid;
  c.pzxid = n.pzxid;
  c.ctime = n.ctime;
  c.mtime = n.mtime;
  c.owner = n.owner;
  c.version = n.version;
  c.cversion = n.cversion;
  c.aversion = n.aversion;
  c.acl = n.acl;
  c.index_in_parent = n.index_in_parent;
  c.kind = n.kind;
  c.data_null = n.data_null;
  c.data = n.data;
  return c;
}

// ---------------------------------------------------------------- primitive mutations

ZnodeEntry* ZnodeTree::insert_entry(std::string path, Znode node, ZnodeEntry* parent,
                                    bool at_saved_index) {
  uint32_t saved_index = node.index_in_parent;
  auto [it, inserted] = index_.emplace(std::move(path), std::move(node));
  ZnodeEntry* e = &*it;
  std::string_view key = e->first;
  Znode& n = e->second;
  if (parent) {
    auto& kids = parent->second.children;
    if (!kids) kids = std::make_unique<std::vector<ZnodeEntry*>>();
    if (at_saved_index && saved_index < kids->size()) {
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
  }
  acls_.add_ref(n.acl);
  data_size_ += size_of(key, n);
  switch (n.kind) {
    case NodeKind::kEphemeral: ephemerals_[n.owner].insert(key); break;
    case NodeKind::kContainer: containers_.insert(key); break;
    case NodeKind::kTtl: ttls_.insert(key); break;
    case NodeKind::kPersistent: break;
  }
  return e;
}

Znode ZnodeTree::remove_entry(ZnodeEntry* e, ZnodeEntry* parent) {
  std::string_view key = e->first;
  Znode& n = e->second;
  switch (n.kind) {
    case NodeKind::kEphemeral: {
      auto it = ephemerals_.find(n.owner);
      if (it != ephemerals_.end()) {
        it->second.erase(key);
        if (it->second.empty()) ephemerals_.erase(it);
      }
      break;
    }
    case NodeKind::kContainer: containers_.erase(key); break;
    case NodeKind::kTtl: ttls_.erase(key); break;
    case NodeKind::kPersistent: break;
  }
  data_size_ -= size_of(key, n);
  acls_.release(n.acl);
  if (parent) {
    auto& kids = *parent->second.children;
    uint32_t i = n.index_in_parent;
    ZnodeEntry* last = kids.back();
    kids[i] = last;
    last->second.index_in_parent = i;
    kids.pop_back();
    if (kids.empty()) parent->second.children.reset();
  }
  Znode out = std::move(n);
  index_.erase(index_.find(key));
  return out;
}

void ZnodeTree::note_update(ZnodeEntry* e) {
  if (undo_) undo_->push_back(Undo{Undo::Kind::kUpdated, e->first, copy_header(e->second), 0, {}});
}

void ZnodeTree::restore_header(Znode& n, const Znode& saved) {
  data_size_ += static_cast<int64_t>(saved.data.size()) - static_cast<int64_t>(n.data.size());
  if (n.acl != saved.acl) {
    acls_.add_ref(saved.acl);
    acls_.release(n.acl);
  }
  n.czxid = saved.czxid;
  n.mzxid = saved.mzxid;
  n.pzxid = saved.pzxid;
  n.ctime = saved.ctime;
  n.mtime = saved.mtime;
  n.version = saved.version;
  n.cversion = saved.cversion;
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
        restore_header(find(u.path)->second, u.saved);
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
        insert_entry(std::move(u.path), std::move(u.saved), parent, true);
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

// ---------------------------------------------------------------- reads

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
  if (e->second.children) {
    children.reserve(e->second.children->size());
    for (const ZnodeEntry* c : *e->second.children) children.emplace_back(name_of(c->first));
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
    if (!cur->second.children) continue;
    count += static_cast<int64_t>(cur->second.children->size());
    for (const ZnodeEntry* c : *cur->second.children) stack.push_back(c);
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
    if (n.cversion > 0 || (max_never_used_ms != 0 && now_ms - n.mtime > max_never_used_ms)) {
      out.emplace_back(p);
    }
  }
  for (std::string_view p : ttls_) {
    if (out.size() >= max) return out;
    const Znode& n = find(p)->second;
    if (n.num_children() == 0 && n.owner != 0 && now_ms - n.mtime > n.owner) out.emplace_back(p);
  }
  return out;
}

// ---------------------------------------------------------------- writes

int32_t ZnodeTree::do_create(const TxnContext& ctx, std::string_view path,
                             const jute::Buffer& data, const std::vector<jute::ACL>& acl,
                             int32_t mode, int64_t ttl, std::string& created_path,
                             jute::Stat* stat, std::vector<WatchTrigger>& out) {
  if (!create_mode::valid(mode)) return err::kBadArguments;
  if (create_mode::ttl(mode)) {
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
  if (create_mode::sequential(mode)) full += sequence_suffix(p.cversion);
  if (!validate_path(full)) return err::kBadArguments;
  if (find(full)) return err::kNodeExists;
  if (p.kind == NodeKind::kEphemeral) return err::kNoChildrenForEphemerals;
  if (options_.enforce_quota) {
    auto bytes = static_cast<int64_t>(data.is_null ? 0 : data.bytes.size());
    if (int32_t rc = quota_check(full, bytes, 1); rc != err::kOk) return rc;
  }

  note_update(parent);
  p.cversion = wrap_add(p.cversion, 1);
  p.pzxid = ctx.zxid;

  Znode n;
  n.czxid = n.mzxid = n.pzxid = ctx.zxid;
  n.ctime = n.mtime = ctx.time_ms;
  if (create_mode::container(mode)) {
    n.kind = NodeKind::kContainer;
  } else if (create_mode::ttl(mode)) {
    n.kind = NodeKind::kTtl;
    n.owner = ttl;
  } else if (create_mode::ephemeral(mode) && ctx.session_id != 0) {
    // ZooKeeper stores owner 0 as a plain persistent node, so an ephemeral without a session is one.
    n.kind = NodeKind::kEphemeral;
    n.owner = ctx.session_id;
  }
  n.acl = acls_.intern(fixed);
  n.data_null = data.is_null;
  if (!data.is_null) n.data.assign(data.bytes);
  ZnodeEntry* e = insert_entry(full, std::move(n), parent, false);
  if (undo_) undo_->push_back(Undo{Undo::Kind::kCreated, full, Znode{}, 0, {}});
  quota_on_create(parent->first, name_of(full));
  if (std::string_view q = quota_prefix_of(full); !q.empty()) {
    quota_update_stat(q, static_cast<int64_t>(e->second.data.size()), 1);
  }

  if (stat) fill_stat(e->second, *stat);
  out.push_back({EventType::kNodeCreated, full, acls_.share(e->second.acl)});
  out.push_back({EventType::kNodeChildrenChanged, parent->first, acls_.share(p.acl)});
  created_path = std::move(full);
  return err::kOk;
}

void ZnodeTree::erase_node(const TxnContext& ctx, ZnodeEntry* node, ZnodeEntry* parent,
                           std::vector<WatchTrigger>& out) {
  note_update(parent);
  // Only forward, as DataTree.deleteNode: never let pzxid go back.
  if (ctx.zxid > parent->second.pzxid) parent->second.pzxid = ctx.zxid;
  std::string path = node->first;
  auto acl = acls_.share(node->second.acl);
  Znode removed = remove_entry(node, parent);
  auto bytes = static_cast<int64_t>(removed.data.size());
  out.push_back({EventType::kNodeDeleted, path, std::move(acl)});
  out.push_back({EventType::kNodeChildrenChanged, parent->first, acls_.share(parent->second.acl)});
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
  if (options_.enforce_quota) {
    auto diff = static_cast<int64_t>(data.is_null ? 0 : data.bytes.size()) -
                static_cast<int64_t>(n.data.size());
    if (int32_t rc = quota_check(e->first, diff, 0); rc != err::kOk) return rc;
  }
  if (version != -1 && version != n.version) return err::kBadVersion;
  note_update(e);
  const auto old_bytes = static_cast<int64_t>(n.data.size());
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
  fill_stat(n, stat);
  out.push_back({EventType::kNodeDataChanged, e->first, acls_.share(n.acl)});
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
    acls_.add_ref(id);
    acls_.release(n.acl);
    n.acl = id;
    n.aversion = wrap_add(n.aversion, 1);
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
      if (node && parent) erase_node(ctx, node, parent, out);
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
    if (node->second.kind == NodeKind::kEphemeral) return err::kBadVersion;
    ZnodeEntry* parent = find(parent_of(path));
    if (!parent) return err::kNoNode;
    erase_node(ctx, node, parent, out);
    return err::kOk;
  }();
  finish(ctx);
  return rc;
}

}  // namespace zkraft::tree
