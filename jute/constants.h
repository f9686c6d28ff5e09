#pragma once
// Small protocol enumerations: watch event types, keeper states, watcher types used by
// checkWatches/removeWatches, addWatch modes and create-mode flags. Values are fixed by the wire.
// This is the only definition of them: tree/ and session/ use these (or the typed views below,
// whose values are these constants).

#include <cstdint>

namespace zkraft::jute {

// WatcherEvent.type (Watcher.Event.EventType).
namespace event {
inline constexpr int32_t kNone = -1;
inline constexpr int32_t kNodeCreated = 1;
inline constexpr int32_t kNodeDeleted = 2;
inline constexpr int32_t kNodeDataChanged = 3;
inline constexpr int32_t kNodeChildrenChanged = 4;
inline constexpr int32_t kDataWatchRemoved = 5;
inline constexpr int32_t kChildWatchRemoved = 6;
inline constexpr int32_t kPersistentWatchRemoved = 7;
}  // namespace event

// The changes a znode can undergo, as a type: the tree reports them (tree::WatchTrigger) and the
// watch registry turns them into WatcherEvents. The removal events above are not changes.
enum class EventType : int32_t {
  kNodeCreated = event::kNodeCreated,
  kNodeDeleted = event::kNodeDeleted,
  kNodeDataChanged = event::kNodeDataChanged,
  kNodeChildrenChanged = event::kNodeChildrenChanged,
};

// WatcherEvent.state (Watcher.Event.KeeperState). Servers only ever send kSyncConnected.
namespace keeper_state {
inline constexpr int32_t kDisconnected = 0;
inline constexpr int32_t kSyncConnected = 3;
inline constexpr int32_t kAuthFailed = 4;
inline constexpr int32_t kConnectedReadOnly = 5;
inline constexpr int32_t kSaslAuthenticated = 6;
inline constexpr int32_t kClosed = 7;
inline constexpr int32_t kExpired = -112;
}  // namespace keeper_state

// CheckWatchesRequest.type / RemoveWatchesRequest.type (Watcher.WatcherType).
namespace watcher_type {
inline constexpr int32_t kChildren = 1;
inline constexpr int32_t kData = 2;
inline constexpr int32_t kAny = 3;
inline constexpr int32_t kPersistent = 4;
inline constexpr int32_t kPersistentRecursive = 5;
}  // namespace watcher_type

// AddWatchRequest.mode (AddWatchMode).
namespace add_watch_mode {
inline constexpr int32_t kPersistent = 0;
inline constexpr int32_t kPersistentRecursive = 1;
}  // namespace add_watch_mode

// add_watch_mode as a type, for interfaces that take a mode already checked to be one of them.
enum class AddWatchMode : int32_t {
  kPersistent = add_watch_mode::kPersistent,
  kPersistentRecursive = add_watch_mode::kPersistentRecursive,
};

// CreateRequest.flags (CreateMode). Any other value is rejected with kBadArguments.
namespace create_mode {
inline constexpr int32_t kPersistent = 0;
inline constexpr int32_t kEphemeral = 1;
inline constexpr int32_t kPersistentSequential = 2;
inline constexpr int32_t kEphemeralSequential = 3;
inline constexpr int32_t kContainer = 4;
inline constexpr int32_t kPersistentWithTTL = 5;
inline constexpr int32_t kPersistentSequentialWithTTL = 6;

inline constexpr bool is_valid(int32_t f) { return f >= 0 && f <= 6; }
inline constexpr bool is_ephemeral(int32_t f) {
  return f == kEphemeral || f == kEphemeralSequential;
}
inline constexpr bool is_sequential(int32_t f) {
  return f == kPersistentSequential || f == kEphemeralSequential ||
         f == kPersistentSequentialWithTTL;
}
inline constexpr bool is_container(int32_t f) { return f == kContainer; }
inline constexpr bool is_ttl(int32_t f) {
  return f == kPersistentWithTTL || f == kPersistentSequentialWithTTL;
}
}  // namespace create_mode

// Largest TTL ZooKeeper accepts for the TTL create modes (EphemeralType.TTL.maxValue(): about 34
// years in ms).
inline constexpr int64_t kMaxTtlMs = 0xFFFFFFFFFFLL;

}  // namespace zkraft::jute
