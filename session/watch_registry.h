#pragma once
// WatchRegistry: which watcher (a connection id) watches which path, and which of them a change
// notifies. Local to each server: every server fires the watches of its own connections.
//
// It reproduces ZooKeeper 3.9's two watch tables (DataTree.dataWatches / childWatches) in one map:
// per (path, watcher) a set of mode bits
//   data table:  kDataStandard (getData/exists; exists on a missing node too), kDataPersistent,
//                kDataRecursive
//   child table: kChildStandard (getChildren), kChildPersistent
// addWatch PERSISTENT sets both persistent bits, PERSISTENT_RECURSIVE only kDataRecursive. Modes
// coexist per watcher and path (ZOOKEEPER-4466, 3.9).
//
// Firing rules (protocol ref §3.2/§3.3), one trigger at a time:
//   NodeCreated / NodeDataChanged on P: data table at P (any data bit), plus kDataRecursive at
//     every proper ancestor of P.
//   NodeDeleted on P: as above, and the child table at P; a watcher matched by both gets one event.
//   NodeChildrenChanged on P: child table at P only (never recursive watches).
// Every matched watcher gets exactly one Delivery per trigger; standard (one-shot) bits that
// matched at P are cleared. Deliveries of one trigger come out in ascending watcher order.
//
// Not thread-safe: owned by the thread that applies committed entries and registers read watches.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "session/watch_event.h"

namespace zkraft::session {

using WatcherId = uint64_t;

// One notification to send: WatcherEvent{type, state=SyncConnected(3), path} to `watcher`.
// `acl` is the trigger's ACL of the changed node: since ZooKeeper 3.8.4/3.9.2 the server drops
// the event (after the one-shot watch is consumed) if the watcher's connection lacks READ on it.
struct Delivery {
  WatcherId watcher;
  EventType type;
  std::string path;
  std::shared_ptr<const std::vector<jute::ACL>> acl = nullptr;
  // Compares the notification (watcher, type, path), not the ACL handle.
  bool operator==(const Delivery& o) const {
    return watcher == o.watcher && type == o.type && path == o.path;
  }
};

// wchs figures: ZooKeeper reports the data table only (DataTree.dumpWatchesSummary).
struct WatchSummary {
  size_t connections = 0;  // watchers with at least one data-table watch
  size_t paths = 0;        // paths with at least one data-table watch
  size_t total = 0;        // (watcher, path) pairs in the data table
  bool operator==(const WatchSummary&) const = default;
};

class WatchRegistry {
 public:
  // Mode bits of one (path, watcher) pair.
  enum Mode : uint8_t {
    kDataStandard = 1,
    kDataPersistent = 2,
    kDataRecursive = 4,
    kChildStandard = 8,
    kChildPersistent = 16,
  };

  // max_paths_per_watcher: most distinct paths one watcher may watch (0 = unlimited).
  explicit WatchRegistry(size_t max_paths_per_watcher = 0) : max_paths_(max_paths_per_watcher) {}

  // Registration. Each returns false only when the watcher is at its path limit and `path` is a
  // new path for it (nothing is registered then); re-adding an existing watch is a no-op (true).
  bool add_data_watch(std::string_view path, WatcherId watcher);   // getData, exists
  bool add_child_watch(std::string_view path, WatcherId watcher);  // getChildren, getChildren2
  bool add_persistent_watch(std::string_view path, WatcherId watcher, AddWatchMode mode);  // addWatch

  // Fires the watches `trigger` matches, appending one Delivery per notified watcher to `out`.
  void trigger(const WatchTrigger& trigger, std::vector<Delivery>& out);

  // removeWatches (op 18) with watcher type 1..5: 0 if something was removed, -121 (NoWatcher) if
  // not, -8 (BadArguments) for an unknown type. Semantics of DataTree.removeWatch in 3.9:
  // Children/Data remove the standard bit of that table, Persistent removes both persistent bits,
  // PersistentRecursive the recursive bit, Any everything on the path.
  int32_t remove(std::string_view path, int32_t watcher_type, WatcherId watcher);
  // checkWatches (op 17): 0 if present, -121 if not, -8 for an unknown type. Data/Children check
  // the standard bit, Persistent kDataPersistent, PersistentRecursive kDataRecursive, Any any bit.
  int32_t check(std::string_view path, int32_t watcher_type, WatcherId watcher) const;

  // Drops every watch of a watcher (connection closed).
  void remove_watcher(WatcherId watcher);

  // The mode bits of (path, watcher); 0 if none.
  uint8_t modes(std::string_view path, WatcherId watcher) const;
  // Number of distinct paths a watcher watches (what the per-watcher limit counts).
  size_t path_count(WatcherId watcher) const;
  bool empty() const { return by_path_.empty(); }

  // wchs: the data table's figures, as ZooKeeper prints them.
  WatchSummary summary() const;
  // mntr zk_watch_count: data-table pairs + child-table pairs (DataTree.getWatchCount).
  size_t watch_count() const;
  // wchc: watcher -> paths it watches in the data table; both levels sorted.
  std::vector<std::pair<WatcherId, std::vector<std::string>>> dump_by_watcher() const;
  // wchp: path -> watchers with a data-table watch on it; both levels sorted.
  std::vector<std::pair<std::string, std::vector<WatcherId>>> dump_by_path() const;

 private:
  static constexpr uint8_t kDataBits = kDataStandard | kDataPersistent | kDataRecursive;
  static constexpr uint8_t kChildBits = kChildStandard | kChildPersistent;

  bool add_modes(std::string_view path, WatcherId watcher, uint8_t bits);
  // Clears `bits` of (path, watcher); returns the bits that were set before.
  uint8_t clear_modes(std::string_view path, WatcherId watcher, uint8_t bits);

  // Lets lookups by string_view avoid building a std::string (heterogeneous lookup).
  struct PathHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using PathMap = std::unordered_map<std::string, std::unordered_map<WatcherId, uint8_t>, PathHash,
                                     std::equal_to<>>;
  using PathSet = std::unordered_set<std::string, PathHash, std::equal_to<>>;

  size_t max_paths_;
  size_t recursive_count_ = 0;  // pairs with kDataRecursive: skip the ancestor walk when 0
  PathMap by_path_;
  std::unordered_map<WatcherId, PathSet> by_watcher_;
};

}  // namespace zkraft::session
