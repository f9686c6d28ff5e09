// ZnodeTree quota upkeep, after ZooKeeper's DataTree: a zookeeper_limits node under
// /zookeeper/quota/<path> marks <path> as quota'd (its pTrie), and every create, delete and setData
// below the deepest quota'd prefix adjusts that prefix's zookeeper_stats text in place (no version
// or mzxid change). Enforcement (zookeeper.enforceQuota, kQuotaExceeded) is not done here.
#include <vector>

#include "tree/znode_tree.h"

namespace zkraft::tree {

namespace {

// PathTrie.split: components of a path, ignoring empty and blank ones.
std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string_view c = path.substr(start, i - start);
      bool blank = true;
      for (char ch : c) blank = blank && static_cast<unsigned char>(ch) <= ' ';
      if (!blank) out.push_back(c);
      start = i + 1;
    }
  }
  return out;
}

std::string normalized(std::string_view path) {
  std::string out;
  for (std::string_view c : components(path)) {
    out += '/';
    out += c;
  }
  return out;  // "" for the root, which never carries a quota
}

std::string stat_path(std::string_view prefix) {
  return std::string(kQuotaRoot) + std::string(prefix) + "/" + std::string(kQuotaStatNode);
}

}  // namespace

void ZnodeTree::quota_on_create(std::string_view parent, std::string_view name) {
  if (parent.substr(0, kQuotaRoot.size()) != kQuotaRoot) return;
  std::string_view trimmed = parent.substr(kQuotaRoot.size());
  if (name == kQuotaLimitNode) quota_add_path(trimmed);
  if (name == kQuotaStatNode) quota_recount(trimmed);
}

void ZnodeTree::quota_on_delete(std::string_view parent, std::string_view name) {
  // ZooKeeper tests parent.startsWith("/zookeeper") and then cuts "/zookeeper/quota".length()
  // characters; mirror that, skipping the cases where Java would throw.
  if (name != kQuotaLimitNode || parent.substr(0, 10) != "/zookeeper" ||
      parent.size() <= kQuotaRoot.size()) {
    return;
  }
  quota_remove_path(parent.substr(kQuotaRoot.size()));
}

void ZnodeTree::quota_add_path(std::string_view path) {
  std::string p = normalized(path);
  if (p.empty() || quota_paths_.count(p)) return;
  if (undo_) undo_->push_back(Undo{Undo::Kind::kQuotaPaths, {}, Znode{}, 0, quota_paths_});
  quota_paths_.insert(std::move(p));
}

void ZnodeTree::quota_remove_path(std::string_view path) {
  std::string p = normalized(path);
  if (p.empty()) return;
  // PathTrie.deletePath drops the whole subtree below the path.
  std::vector<std::string> doomed;
  for (const auto& q : quota_paths_) {
    if (q == p || (q.size() > p.size() && q.compare(0, p.size(), p) == 0 && q[p.size()] == '/')) {
      doomed.push_back(q);
    }
  }
  if (doomed.empty()) return;
  if (undo_) undo_->push_back(Undo{Undo::Kind::kQuotaPaths, {}, Znode{}, 0, quota_paths_});
  for (const auto& q : doomed) quota_paths_.erase(q);
}

std::string_view ZnodeTree::quota_prefix_of(std::string_view path) const {
  if (quota_paths_.empty()) return {};
  std::string prefix;
  std::string_view best;
  for (std::string_view c : components(path)) {
    prefix += '/';
    prefix += c;
    auto it = quota_paths_.find(prefix);
    if (it != quota_paths_.end()) best = *it;
  }
  return best;
}

void ZnodeTree::replace_data(ZnodeEntry* e, std::string data) {
  note_update(e);
  data_size_ += static_cast<int64_t>(data.size()) - static_cast<int64_t>(e->second.data.size());
  e->second.data = std::move(data);
  e->second.data_null = false;
}

void ZnodeTree::quota_update_stat(std::string_view prefix, int64_t bytes_diff, int64_t count_diff) {
  ZnodeEntry* e = find(stat_path(prefix));
  if (!e) return;  // ZooKeeper logs "Missing node for stat" and goes on
  auto stats = parse_quota_stats(e->second.data);
  if (!stats) return;
  auto value = [&](const char* key) {
    auto it = stats->find(key);
    return it == stats->end() ? int64_t{-1} : it->second;  // StatsTrack's default
  };
  int64_t count = value("count") + count_diff;
  int64_t bytes = value("bytes") + bytes_diff;
  (*stats)["count"] = count;
  (*stats)["bytes"] = bytes;
  replace_data(e, format_quota_stats(*stats));
}

void ZnodeTree::quota_recount(std::string_view path) {
  int64_t count = 0, bytes = 0;
  // As DataTree.getCounts: the node itself and all below it ("" is the root, as in ZooKeeper).
  if (const ZnodeEntry* root = find(path)) {
    std::vector<const ZnodeEntry*> stack{root};
    while (!stack.empty()) {
      const ZnodeEntry* cur = stack.back();
      stack.pop_back();
      ++count;
      bytes += static_cast<int64_t>(cur->second.data.size());
      if (cur->second.children) {
        for (const ZnodeEntry* c : *cur->second.children) stack.push_back(c);
      }
    }
  }
  ZnodeEntry* e = find(stat_path(path));
  if (!e) return;
  replace_data(e, format_quota_stats({{"count", count}, {"bytes", bytes}}));
}

}  // namespace zkraft::tree
