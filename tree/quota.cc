// ZnodeTree quota upkeep, after ZooKeeper's DataTree: a zookeeper_limits node under
// /zookeeper/quota/<path> marks <path> as quota'd (its pTrie), and every create, delete and setData
// below the deepest quota'd prefix adjusts that prefix's zookeeper_stats text in place (no version
// or mzxid change). With Options::enforce_quota, hard limits refuse changes (ZooKeeperServer.checkQuota);
// a limit passed without a refusal leaves a warning line (take_quota_warning).
#include <vector>

#include "jute/errors.h"
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

std::string limit_path(std::string_view prefix) {
  return std::string(kQuotaRoot) + std::string(prefix) + "/" + std::string(kQuotaLimitNode);
}

int64_t stat_value(const std::map<std::string, int64_t>& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? -1 : it->second;
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

int32_t ZnodeTree::quota_check(std::string_view path, int64_t bytes_diff, int64_t count_diff) {
  std::string_view prefix = quota_prefix_of(path);
  if (prefix.empty()) return jute::err::kOk;
  const ZnodeEntry* limit_node = find(limit_path(prefix));
  if (!limit_node) return jute::err::kOk;
  auto limits = parse_quota_stats(limit_node->second.data.view());
  if (!limits) return jute::err::kOk;
  const int64_t count_soft = stat_value(*limits, "count"), count_hard = stat_value(*limits, "countHardLimit");
  const int64_t bytes_soft = stat_value(*limits, "bytes"), bytes_hard = stat_value(*limits, "byteHardLimit");
  bool check_count = count_diff != 0 && (count_soft > -1 || count_hard > -1);
  bool check_bytes = bytes_diff != 0 && (bytes_soft > -1 || bytes_hard > -1);
  if (!check_count && !check_bytes) return jute::err::kOk;
  const ZnodeEntry* stat_node = find(stat_path(prefix));
  if (!stat_node) return jute::err::kOk;
  auto current = parse_quota_stats(stat_node->second.data.view());
  if (!current) return jute::err::kOk;
  // The hard limit if set, else the soft one; only a hard one refuses, and only when enforcing.
  // Count first, as ZooKeeper checks it (a create passing both is refused for its count).
  auto over = [&](bool check, const char* what, int64_t now, int64_t soft, int64_t hard,
                  const char* limit_name) {
    if (!check) return false;
    const bool is_hard = hard > -1;
    const int64_t limit = is_hard ? hard : soft;
    if (now <= limit) return false;
    quota_warning_ = "Quota exceeded: " + std::string(prefix) + " [current " + what + "=" +
                     std::to_string(now) + ", " + (is_hard ? "hard" : "soft") + limit_name +
                     "=" + std::to_string(limit) + "]";
    return is_hard && options_.enforce_quota;
  };
  if (over(check_count, "count", stat_value(*current, "count") + count_diff, count_soft, count_hard,
           "CountLimit") ||
      over(check_bytes, "bytes", stat_value(*current, "bytes") + bytes_diff, bytes_soft, bytes_hard,
           "ByteLimit")) {
    return jute::err::kQuotaExceeded;
  }
  return jute::err::kOk;
}

void ZnodeTree::replace_data(ZnodeEntry* e, std::string data) {
  note_update(e);
  NodeChange change(*this, e, Touches::kMetaAndData);
  data_size_ += static_cast<int64_t>(data.size()) - static_cast<int64_t>(e->second.data.size());
  e->second.data.assign(data);
  e->second.data_null = false;
}

void ZnodeTree::quota_update_stat(std::string_view prefix, int64_t bytes_diff, int64_t count_diff) {
  ZnodeEntry* e = find(stat_path(prefix));
  if (!e) return;  // ZooKeeper logs "Missing node for stat" and goes on
  auto stats = parse_quota_stats(e->second.data.view());
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
      if (const ChildList* list = cur->second.children()) {
        for (const ZnodeEntry* c : list->entries) stack.push_back(c);
      }
    }
  }
  ZnodeEntry* e = find(stat_path(path));
  if (!e) return;
  replace_data(e, format_quota_stats({{"count", count}, {"bytes", bytes}}));
}

}  // namespace zkraft::tree
