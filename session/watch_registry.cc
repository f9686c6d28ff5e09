#include "session/watch_registry.h"

#include <algorithm>

#include "jute/errors.h"

namespace zkraft::session {

namespace {
using jute::err::kBadArguments;
using jute::err::kNoWatcher;
using jute::err::kOk;

// "/a/b" -> "/a" -> "/" ; "/" has no parent.
bool parent_of(std::string_view path, std::string_view& parent) {
  if (path.size() <= 1) return false;
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return false;
  parent = slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
  return true;
}
}  // namespace

bool WatchRegistry::add_modes(std::string_view path, WatcherId watcher, uint8_t bits) {
  auto& paths = by_watcher_[watcher];
  if (paths.find(path) == paths.end()) {
    if (max_paths_ != 0 && paths.size() >= max_paths_) {
      if (paths.empty()) by_watcher_.erase(watcher);
      return false;
    }
    paths.emplace(path);
  }
  auto p = by_path_.find(path);
  if (p == by_path_.end()) p = by_path_.emplace(std::string(path), PathMap::mapped_type{}).first;
  uint8_t& m = p->second[watcher];
  if ((bits & kDataRecursive) && !(m & kDataRecursive)) ++recursive_count_;
  m |= bits;
  return true;
}

bool WatchRegistry::add_data_watch(std::string_view path, WatcherId watcher) {
  return add_modes(path, watcher, kDataStandard);
}

bool WatchRegistry::add_child_watch(std::string_view path, WatcherId watcher) {
  return add_modes(path, watcher, kChildStandard);
}

bool WatchRegistry::add_persistent_watch(std::string_view path, WatcherId watcher,
                                         AddWatchMode mode) {
  // DataTree.addWatch: a recursive watch lives in the data table only.
  uint8_t bits = mode == AddWatchMode::kPersistentRecursive
                     ? static_cast<uint8_t>(kDataRecursive)
                     : static_cast<uint8_t>(kDataPersistent | kChildPersistent);
  return add_modes(path, watcher, bits);
}

uint8_t WatchRegistry::clear_modes(std::string_view path, WatcherId watcher, uint8_t bits) {
  auto p = by_path_.find(path);
  if (p == by_path_.end()) return 0;
  auto w = p->second.find(watcher);
  if (w == p->second.end()) return 0;
  uint8_t before = w->second;
  w->second = static_cast<uint8_t>(before & ~bits);
  if ((before & kDataRecursive) && !(w->second & kDataRecursive)) --recursive_count_;
  if (w->second == 0) {
    p->second.erase(w);
    if (p->second.empty()) by_path_.erase(p);
    auto bw = by_watcher_.find(watcher);
    if (bw != by_watcher_.end()) {
      if (auto it = bw->second.find(path); it != bw->second.end()) bw->second.erase(it);
      if (bw->second.empty()) by_watcher_.erase(bw);
    }
  }
  return before;
}

void WatchRegistry::trigger(const WatchTrigger& trigger, std::vector<Delivery>& out) {
  const std::string& path = trigger.path;
  // Which bits at the changed path itself select a watcher, and which one-shot bits then go.
  uint8_t match = 0;
  switch (trigger.type) {
    case EventType::kNodeCreated:
    case EventType::kNodeDataChanged:
      match = kDataBits;
      break;
    case EventType::kNodeDeleted:
      match = kDataBits | kChildBits;
      break;
    case EventType::kNodeChildrenChanged:
      match = kChildBits;
      break;
  }
  const uint8_t one_shot = match & (kDataStandard | kChildStandard);

  std::vector<WatcherId> notified;
  if (auto p = by_path_.find(path); p != by_path_.end()) {
    std::vector<WatcherId> fired_one_shot;
    for (const auto& [watcher, modes] : p->second) {
      if (modes & match) {
        notified.push_back(watcher);
        if (modes & one_shot) fired_one_shot.push_back(watcher);
      }
    }
    // Clearing may erase the path's entry, so do it after the walk.
    for (WatcherId w : fired_one_shot) clear_modes(path, w, one_shot);
  }
  // Recursive watches on ancestors see creates, deletes and data changes, never child-list changes.
  if (recursive_count_ > 0 && trigger.type != EventType::kNodeChildrenChanged) {
    std::string_view cur = path;
    std::string_view parent;
    while (parent_of(cur, parent)) {
      if (auto p = by_path_.find(parent); p != by_path_.end()) {
        for (const auto& [watcher, modes] : p->second) {
          if (modes & kDataRecursive) notified.push_back(watcher);
        }
      }
      cur = parent;
    }
  }
  std::sort(notified.begin(), notified.end());
  notified.erase(std::unique(notified.begin(), notified.end()), notified.end());
  for (WatcherId w : notified) out.push_back(Delivery{w, trigger.type, path, trigger.acl});
}

int32_t WatchRegistry::remove(std::string_view path, int32_t watcher_type, WatcherId watcher) {
  uint8_t bits = 0;
  switch (watcher_type) {
    case jute::watcher_type::kChildren: bits = kChildStandard; break;
    case jute::watcher_type::kData: bits = kDataStandard; break;
    case jute::watcher_type::kAny: bits = kDataBits | kChildBits; break;
    case jute::watcher_type::kPersistent: bits = kDataPersistent | kChildPersistent; break;
    case jute::watcher_type::kPersistentRecursive: bits = kDataRecursive; break;
    default: return kBadArguments;
  }
  uint8_t before = clear_modes(path, watcher, bits);
  return (before & bits) ? kOk : kNoWatcher;
}

int32_t WatchRegistry::check(std::string_view path, int32_t watcher_type, WatcherId watcher) const {
  uint8_t bits = 0;
  switch (watcher_type) {
    case jute::watcher_type::kChildren: bits = kChildStandard; break;
    case jute::watcher_type::kData: bits = kDataStandard; break;
    case jute::watcher_type::kAny: bits = kDataBits | kChildBits; break;
    // DataTree.containsWatcher looks at the data table only for these two.
    case jute::watcher_type::kPersistent: bits = kDataPersistent; break;
    case jute::watcher_type::kPersistentRecursive: bits = kDataRecursive; break;
    default: return kBadArguments;
  }
  return (modes(path, watcher) & bits) ? kOk : kNoWatcher;
}

void WatchRegistry::remove_watcher(WatcherId watcher) {
  auto bw = by_watcher_.find(watcher);
  if (bw == by_watcher_.end()) return;
  for (const std::string& path : bw->second) {
    auto p = by_path_.find(path);
    if (p == by_path_.end()) continue;
    auto w = p->second.find(watcher);
    if (w != p->second.end()) {
      if (w->second & kDataRecursive) --recursive_count_;
      p->second.erase(w);
    }
    if (p->second.empty()) by_path_.erase(p);
  }
  by_watcher_.erase(bw);
}

uint8_t WatchRegistry::modes(std::string_view path, WatcherId watcher) const {
  auto p = by_path_.find(path);
  if (p == by_path_.end()) return 0;
  auto w = p->second.find(watcher);
  return w == p->second.end() ? 0 : w->second;
}

size_t WatchRegistry::path_count(WatcherId watcher) const {
  auto bw = by_watcher_.find(watcher);
  return bw == by_watcher_.end() ? 0 : bw->second.size();
}

WatchSummary WatchRegistry::summary() const {
  WatchSummary s;
  std::unordered_set<WatcherId> watchers;
  for (const auto& [path, ws] : by_path_) {
    bool path_counted = false;
    for (const auto& [watcher, modes] : ws) {
      if (!(modes & kDataBits)) continue;
      ++s.total;
      watchers.insert(watcher);
      if (!path_counted) {
        ++s.paths;
        path_counted = true;
      }
    }
  }
  s.connections = watchers.size();
  return s;
}

size_t WatchRegistry::watch_count() const {
  size_t n = 0;
  for (const auto& [path, ws] : by_path_) {
    for (const auto& [watcher, modes] : ws) {
      if (modes & kDataBits) ++n;
      if (modes & kChildBits) ++n;
    }
  }
  return n;
}

std::vector<std::pair<WatcherId, std::vector<std::string>>> WatchRegistry::dump_by_watcher() const {
  std::vector<std::pair<WatcherId, std::vector<std::string>>> out;
  for (const auto& [watcher, paths] : by_watcher_) {
    std::vector<std::string> data_paths;
    for (const std::string& path : paths) {
      if (modes(path, watcher) & kDataBits) data_paths.push_back(path);
    }
    if (data_paths.empty()) continue;
    std::sort(data_paths.begin(), data_paths.end());
    out.emplace_back(watcher, std::move(data_paths));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<std::string, std::vector<WatcherId>>> WatchRegistry::dump_by_path() const {
  std::vector<std::pair<std::string, std::vector<WatcherId>>> out;
  for (const auto& [path, ws] : by_path_) {
    std::vector<WatcherId> watchers;
    for (const auto& [watcher, modes] : ws) {
      if (modes & kDataBits) watchers.push_back(watcher);
    }
    if (watchers.empty()) continue;
    std::sort(watchers.begin(), watchers.end());
    out.emplace_back(path, std::move(watchers));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace zkraft::session
