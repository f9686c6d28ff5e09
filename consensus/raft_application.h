#pragma once
// RaftApplication: what the replicated state machine (the ZooKeeper server, a test's recorder,
// the simulation's hashing machine) supplies to the Raft driver (consensus/raft_driver.h).
//
// Every callback runs on the driver's executor (RaftNode: the io thread), one at a time, and never
// inside a driver call the application itself makes (propose, read_index, ... only schedule
// work). Entries arrive in log order. Pure: no Boost, spdlog or I/O here.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "consensus/status.h"
#include "consensus/types.h"

namespace zkraft::consensus {

// The application's answer to a snapshot request: the state as of `index` (an index the driver
// handed to apply() or on_conf_change_applied() already; normally the requested one).
// Thread-safe, may be called from any thread, exactly once; the driver picks it up on its own
// executor. Calling it after the driver is gone is harmless (the answer is dropped).
using SnapshotReply = std::function<void(Index index, std::string data)>;
// The answer of an application that wrote the snapshot file itself (request_snapshot_file): ok
// and the file, or why it could not (kNoSpace: the disk is full, try again later; any other
// error ends the node, as a failed log write does). Same threading rules as SnapshotReply.
using SnapshotFileReply = std::function<void(Index index, Status status, SnapshotFileWritten file)>;

class RaftApplication {
 public:
  virtual ~RaftApplication() = default;
  // Committed kNormal entries, in index order, each exactly once per process lifetime (after a
  // restart from the entry after the snapshot on). Empty data is the leader's no-op: still
  // called, so the application can advance its zxid.
  virtual void apply(const Entry& e) = 0;
  // A committed kConfChange entry at `index`, applied by consensus itself (the membership it
  // makes follows through on_membership), in index order with apply(). An application that
  // tracks its applied index moves it here too: a snapshot may be asked for at this index.
  virtual void on_conf_change_applied(Index index) { (void)index; }
  // The application's state as of the last entry applied (applied_index()). Used by the default
  // request_snapshot() only; an application that overrides request_snapshot() never sees it.
  virtual std::string take_snapshot() = 0;
  // The driver wants a snapshot of the state as of applied index `index` (every entry up to it
  // was handed to apply() or on_conf_change_applied(), none after it yet). Answer through
  // `reply`, now or later, on any thread (e.g. from the thread that owns the state machine): the
  // Raft thread does not wait.
  // Until it is answered the driver asks for no other snapshot. Default: answers at once with
  // take_snapshot(), which serializes on the calling (Raft) thread.
  virtual void request_snapshot(Index index, SnapshotReply reply);
  // As request_snapshot, when the storage lets the application write the file itself (`target`):
  // answer once, either through `reply` with the bytes (the target then goes unused) or through
  // `file_reply` once the file at target.path is written and synced (SnapshotFileWriter), so the
  // bytes are never held whole in memory. Default: request_snapshot(index, reply).
  virtual void request_snapshot_file(Index index, const SnapshotFileTarget& target, SnapshotReply reply,
                                     SnapshotFileReply file_reply);
  // Replace the whole state with a snapshot (at start-up, or when the leader sends one). Entries
  // after meta.index follow through apply(). The bytes are shared, usually a mapping of the
  // stored file (types.h): the application may keep them for as long as its restore takes, on
  // another thread too, and should not copy them (they can be the size of the whole state).
  virtual void restore_snapshot(const SnapshotMeta& meta, SnapshotBytes data) = 0;
  // Membership as of the last applied entry: after a committed conf change was applied, and
  // after a snapshot was restored.
  virtual void on_membership(const Membership& m) { (void)m; }
  // Leader or term changed (leader 0: none known right now, e.g. during an election).
  // self_is_leader: this node now leads; it can propose (its no-op is applied first).
  virtual void on_leader_change(NodeId leader, Term term, bool self_is_leader) {
    (void)leader, (void)term, (void)self_is_leader;
  }
  // The answer to read_index(context): reads may be served once applied_index() >= index.
  // A request that got lost (leader change, dropped message) never answers: time out and retry.
  virtual void on_read_state(uint64_t context, Index index) { (void)context, (void)index; }
  // A payload another server sent with RaftNode::send_app_message (from == self for a message
  // to self). Only RaftNode delivers these; the driver knows nothing of them.
  virtual void on_app_message(NodeId from, std::string payload) { (void)from, (void)payload; }
  // Storage failed after start; the node has stopped. Default: print to stderr and std::abort()
  // (as ZooKeeper and etcd do on a failed fsync).
  virtual void on_fatal_error(const std::string& what);
};

}  // namespace zkraft::consensus
