#pragma once
// The watch vocabulary shared by the tree (which reports changes) and the watch registry (which
// turns changes into events for connections). Numbers are ZooKeeper's wire values.

#include <cstdint>
#include <string>

namespace zkraft::session {

// Watcher.Event.EventType values the server sends (protocol ref §3.1).
enum class EventType : int32_t {
  kNodeCreated = 1,
  kNodeDeleted = 2,
  kNodeDataChanged = 3,
  kNodeChildrenChanged = 4,
};

// One change reported by the tree, in the order changes happened. A create of P is reported as
// {kNodeCreated, P} then {kNodeChildrenChanged, parent(P)}; a delete as {kNodeDeleted, P} then
// {kNodeChildrenChanged, parent(P)}; a setData as {kNodeDataChanged, P}.
struct WatchTrigger {
  EventType type;
  std::string path;
  bool operator==(const WatchTrigger&) const = default;
};

// The `type` argument of checkWatches (op 17) / removeWatches (op 18).
enum class WatcherType : int32_t {
  kChildren = 1,
  kData = 2,
  kAny = 3,
  kPersistent = 4,           // 3.9+
  kPersistentRecursive = 5,  // 3.9+
};

// The `mode` argument of addWatch (op 106).
enum class AddWatchMode : int32_t {
  kPersistent = 0,
  kPersistentRecursive = 1,
};

}  // namespace zkraft::session
