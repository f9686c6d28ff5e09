#pragma once
// The watch vocabulary shared by the tree (which reports changes) and the watch registry (which
// turns changes into events for connections). Numbers are ZooKeeper's wire values.

#include <cstdint>

#include "tree/txn.h"

namespace zkraft::session {

// The tree's event vocabulary (tree/txn.h), re-exported so users of the registry need one name:
// EventType is Watcher.Event.EventType (1 created, 2 deleted, 3 data changed, 4 children changed);
// a WatchTrigger is one change the tree reported, in order. A create of P is reported as
// {kNodeCreated, P} then {kNodeChildrenChanged, parent(P)}; a delete as {kNodeDeleted, P} then
// {kNodeChildrenChanged, parent(P)}; a setData as {kNodeDataChanged, P}.
using EventType = tree::EventType;
using WatchTrigger = tree::WatchTrigger;

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
