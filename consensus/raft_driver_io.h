#pragma once
// The three things the Raft driver (consensus/raft_driver.h) needs from the world, as small
// interfaces, so that the same driver runs over LevelDB + TCP + an io_context (RaftNode) and
// over a simulated disk, network and event queue (tests/sim). Pure: no Boost, spdlog or I/O here.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "consensus/messages.h"
#include "consensus/status.h"
#include "consensus/types.h"

namespace zkraft::consensus {

// The driver's own serial context: the io thread (RaftNode), the event queue (simulation).
// Tasks run one at a time, in the order posted, never inside post(). post() is thread-safe.
class RaftDriverExecutor {
 public:
  virtual ~RaftDriverExecutor() = default;
  virtual void post(std::function<void()> task) = 0;
};

// The durable log. Operations take effect in the order issued; each completion runs once, in
// that same order, after its operation is durable (or failed), on ANY thread and possibly inside
// the call (e.g. on a stopped storage): the driver always hops back to its executor itself.
// A storage may drop queued operations, completions and all, once it is stopped.
class RaftDriverStorage {
 public:
  using Done = std::function<void(Status)>;
  virtual ~RaftDriverStorage() = default;

  // Appends `entries` (if the first is at or below the last stored index, the stored suffix from
  // there is replaced) and then `hard_state` (if set). need_sync=false: may skip the fsync
  // (a hard state whose only change is the commit index).
  virtual void write(std::vector<Entry> entries, std::optional<HardState> hard_state, bool need_sync,
                     Done done) = 0;

  // Writes one chunk of a leader's snapshot (Ready::snapshot_chunks, types.h's SnapshotChunk
  // for the order they come in), in order with the other operations; no fsync needed. A chunk
  // that does not continue the chunks written before is kInvalidArgument.
  virtual void store_snapshot_chunk(SnapshotChunk chunk, Done done) = 0;
  // Stores durably, in order with the other operations, the leader's snapshot whose chunks (its
  // last one included) were written: it becomes the stored snapshot, as load_snapshot reads it.
  // If the log holds meta.index with meta.term it is kept, otherwise it is discarded.
  // kSnapshotOutOfDate: a newer snapshot is stored already; nothing was changed.
  virtual void store_snapshot(const SnapshotMeta& meta, Done done) = 0;

  // Stores the application's own snapshot of entries already in the log, as store_snapshot
  // does, and then, if compact_through > 0, drops stored entries <= min(compact_through,
  // meta.index) (best effort, unsynced). The one exception to the order above: it may take
  // effect, and complete, after operations issued later (its data is written beside the log
  // while they go on), but it takes effect before any operation issued after its completion.
  // A crash before it took effect leaves the older snapshot and the whole log, which recover
  // the same state.
  virtual void store_own_snapshot(const SnapshotMeta& meta, SnapshotBytes data, Index compact_through,
                                  Done done) = 0;

  // Where the application may write its own next snapshot itself (RaftApplication::
  // request_snapshot_file); nullopt: it answers with the bytes (store_own_snapshot). Each call
  // hands out a new target. Any thread.
  virtual std::optional<SnapshotFileTarget> own_snapshot_file() { return std::nullopt; }
  // As store_own_snapshot, for a snapshot the application wrote at a target of
  // own_snapshot_file(): its file is published (or, if out of date by then, removed) in order
  // with the operations issued before, so later ones take effect after it.
  virtual void store_own_snapshot_file(const SnapshotMeta& meta, const SnapshotFileWritten& file,
                                       Index compact_through, Done done) {
    (void)meta, (void)file, (void)compact_through;
    done(Status::error(Status::Code::kInvalidArgument, "this storage hands out no snapshot files"));
  }
  // A file written at such a target that will not be stored (the core declined the snapshot):
  // removed, best effort. Any thread.
  virtual void discard_own_snapshot_file(const SnapshotFileWritten& file) { (void)file; }

  // Reads the stored snapshot back, in order with the other operations (the driver drops its
  // bytes from memory once stored and asks for them to stream them to a follower, or to restore
  // from a leader's snapshot it stored). kUnavailable: none stored.
  using Loaded = std::function<void(Status, SnapshotMeta, SnapshotBytes)>;
  virtual void load_snapshot(Loaded done) = 0;

  // Reads stored entries lo..hi back (inclusive; the first always, then as many as fit in
  // max_bytes), in order with the other operations: the core's log evicted them from memory and
  // a follower needs them (RaftCore::take_entry_loads). An error or no entries: not stored (any
  // more). This default has no entries to read back, so the core falls back to its snapshot.
  using EntriesLoaded = std::function<void(Status, std::vector<Entry>)>;
  virtual void load_entries(Index lo, Index hi, size_t max_bytes, EntriesLoaded done) {
    (void)lo, (void)hi, (void)max_bytes;
    done(Status::error(Status::Code::kUnavailable, "this storage reads no entries back"), {});
  }
};

// The peer network: at most once, unordered, maybe never. Called on the executor.
class RaftDriverTransport {
 public:
  virtual ~RaftDriverTransport() = default;
  virtual void send(const Message& m) = 0;
};

}  // namespace zkraft::consensus
