#pragma once
// Ready: one batch of work the Raft core hands to its caller, and the caller's contract.
//
// The caller processes a Ready in this order, then calls RaftCore::advance(ready):
//   1. send messages_now at once (leader appends/heartbeats: may go out while it persists);
//   2. persist: snapshot_chunks in order (no fsync of their own); then durably (fsync) the
//      snapshot (if any: the chunks received for it; then discard every stored entry, the log
//      restarts after snapshot->index), then entries (if entries.front().index is <= the last
//      stored index, first delete every stored entry from that index on: a conflicting suffix is
//      being replaced), then hard_state (if any) — all in one atomic batch is best;
//   3. send messages_after_persist (votes, append acknowledgements: they promise durability);
//   4. if snapshot is set, restore the state machine from the stored snapshot; then apply
//      committed_entries in order; hand read_states to whoever waits for them;
//   5. advance(ready).
// Only one Ready is outstanding at a time: has_ready() is false until advance() is called.

#include <optional>
#include <string>
#include <vector>

#include "consensus/messages.h"
#include "consensus/types.h"

namespace zkraft::consensus {

// A ReadIndex result: reads issued with `context` may be served once applied >= index.
struct ReadState {
  uint64_t context = 0;
  Index index = 0;
  bool operator==(const ReadState&) const = default;
};

struct Ready {
  std::optional<HardState> hard_state;     // set when it changed since the last Ready
  // Chunks of a leader's snapshot as they arrived, for storage to write before anything else of
  // this Ready; their acknowledgements are among messages_after_persist, so the caller must not
  // send those before the chunks are written (synced or not), which bounds what is in memory.
  std::vector<SnapshotChunk> snapshot_chunks;
  std::optional<SnapshotMeta> snapshot;    // a snapshot received from the leader, to install
  uint64_t snapshot_size = 0;              // its bytes, all in snapshot_chunks of this or earlier Readies
  std::vector<Entry> entries;              // to append (see truncation rule above)
  std::vector<Message> messages_now;
  std::vector<Message> messages_after_persist;
  std::vector<Entry> committed_entries;    // to apply, in order, after persisting
  std::vector<ReadState> read_states;

  // Whether step 2 must fsync before step 3: entries, a snapshot, or a new term/vote. A
  // hard_state that only moved commit may be written without waiting for the disk.
  bool must_sync() const { return sync; }
  // Whether there is anything to write at all.
  bool has_writes() const {
    return hard_state.has_value() || snapshot.has_value() || !entries.empty() || !snapshot_chunks.empty();
  }

  bool sync = false;
  // Bookkeeping for advance(); not for the caller.
  Index persisted_index = 0;
  Term persisted_term = 0;
  Index applied_index = 0;
};

}  // namespace zkraft::consensus
