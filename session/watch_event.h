#pragma once
// The watch vocabulary shared by the tree (which reports changes) and the watch registry (which
// turns changes into events for connections). Numbers are ZooKeeper's wire values.

#include <cstdint>

#include "jute/constants.h"
#include "tree/txn.h"

namespace zkraft::session {

// The watch vocabulary is the protocol's (jute/constants.h), re-exported so users of the registry
// need one name: EventType is Watcher.Event.EventType's change events (1 created, 2 deleted,
// 3 data changed, 4 children changed); AddWatchMode is addWatch's mode (op 106); the `type` of
// checkWatches/removeWatches (ops 17/18) is a jute::watcher_type value.
// A WatchTrigger is one change the tree reported, in order. A create of P is reported as
// {kNodeCreated, P} then {kNodeChildrenChanged, parent(P)}; a delete as {kNodeDeleted, P} then
// {kNodeChildrenChanged, parent(P)}; a setData as {kNodeDataChanged, P}.
using jute::AddWatchMode;
using jute::EventType;
using WatchTrigger = tree::WatchTrigger;

}  // namespace zkraft::session
