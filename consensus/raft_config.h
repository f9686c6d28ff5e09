#pragma once
// Configuration of one Raft core and the state it restarts from.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "consensus/types.h"

namespace zkraft::consensus {

// The core's only source of randomness (election jitter). Inject a seeded PRNG so runs replay.
using RandomSource = std::function<uint64_t()>;

struct RaftConfig {
  NodeId id = 0;
  // Membership used when neither the snapshot nor the log carries one (first start of a
  // bootstrapped cluster). A node joining later may start with an empty membership: it learns
  // the real one from the leader's log or snapshot, and never campaigns until it is a voter.
  Membership initial_membership;
  int election_ticks = 10;   // T: election timeout is drawn from [T, 2T)
  int heartbeat_ticks = 1;   // leader sends heartbeats every this many ticks (< election_ticks)
  bool pre_vote = true;
  bool check_quorum = true;  // leader steps down without a quorum; followers honour a lease
  size_t max_inflight_msgs = 256;         // pipelined appends per follower
  size_t max_msg_bytes = 1024 * 1024;     // entries payload per append message
  size_t max_snapshot_chunk_bytes = 1024 * 1024;
  size_t max_snapshot_inflight_chunks = 4;  // snapshot chunks sent ahead of the follower's answers
  // The log keeps applied, durable entries in memory only up to this many bytes (entry_size of
  // every entry held, applied or not); older ones are evicted (RaftLog::evict_to_fit) and read
  // back from storage when a follower needs them (RaftCore::take_entry_loads). 0: every entry
  // stays in memory until compaction.
  size_t max_log_memory_bytes = 0;
};

// What storage recovered at start-up.
struct RecoveredState {
  HardState hard_state;
  SnapshotMeta snapshot;       // index 0: no snapshot
  // The snapshot's bytes (RaftNode maps its file), which the application restores from.
  SnapshotBytes snapshot_bytes;
  // Whether the core keeps them to send to followers that need them. If not (a mapping), it
  // starts without them, as after drop_snapshot_bytes, and has them read back from storage
  // when a follower needs them.
  bool keep_snapshot_bytes = false;
  std::vector<Entry> entries;  // every stored entry after snapshot.index, in order
  Index applied = 0;           // state machine's applied index (at least snapshot.index)
};

}  // namespace zkraft::consensus
