#pragma once
// RaftDriver: runs a RaftCore's Ready batches (consensus/ready.h) against a storage, a transport,
// an executor (consensus/raft_driver_io.h) and the application (consensus/raft_application.h).
// It is the one Ready loop there is: RaftNode wires it to LevelDB, TCP and an io_context; the
// simulation (tests/sim) wires it to a simulated disk, network and event queue.
//
// Pure: no clock, thread, socket, randomness, Boost or spdlog. Time arrives as tick() from the
// caller's timer; the core's RandomSource is injected; whatever is worth logging is reported to
// the optional RaftDriverObserver, and the wiring decides how to log it.
//
// Threads: every method runs on the executor, and so does every callback into the application
// and the observer. Storage completions and snapshot answers may arrive on any thread; the driver
// re-posts them onto the executor. Destroy the driver on the executor (or once it stopped
// running); completions arriving later are dropped.
//
// Rules (each one is part of the contract; tests/sim checks them under faults):
//   - one Ready at a time: has_ready() is not asked again until the previous one advanced;
//   - messages_now go out at once; the writes go to storage;
//   - a Ready that must sync (entries, snapshot, new term or vote) waits for its durable write
//     before messages_after_persist, the snapshot restore, read states and the committed entries
//     it writes itself; committed entries already on this node's disk (below its first entry)
//     are applied while the write runs (right after it is handed to storage), unless the Ready
//     carries a snapshot;
//   - a Ready whose only write is a moved commit index is written without sync and finished at
//     once (etcd's MustSync rule); a failure of that write is still fatal;
//   - a snapshot from the leader is stored before the entries after it (storage keeps order);
//   - applying skips entries <= applied (covered by a restored snapshot); conf changes are applied
//     to the membership and reported through on_membership; only kNormal entries reach apply();
//   - after each input (tick, message, completion, scheduled pump) a leader or term change is
//     reported through on_leader_change;
//   - no application callback runs inside a call the application makes: propose(), read_index(),
//     change_membership(), transfer_leadership() and snapshot_now() only schedule a pump;
//   - a failed storage operation stops the driver for good and calls app.on_fatal_error();
//   - snapshots: after options.snapshot_every applied entries, or once the entries applied
//     since the last snapshot hold options.snapshot_bytes (entry_size), the driver asks the
//     application for one (request_snapshot, answered asynchronously); with the answer it calls
//     core.snapshot_taken, stores the snapshot and compacts, keeping at most options.keep_tail
//     entries and options.keep_tail_bytes behind it for slow followers. One request is
//     outstanding at a time. The core keeps applied entries in memory only up to
//     RaftConfig::max_log_memory_bytes (when set); the entries it evicted and a follower needs
//     are read back with storage.load_entries and handed to core.entries_loaded. If the
//     storage hands out a file for it (own_snapshot_file), the application may write the
//     snapshot there itself (request_snapshot_file); then the core gets only its size
//     (snapshot_taken_on_disk) and the storage publishes the file (store_own_snapshot_file), so
//     no whole copy of the bytes is ever in the driver's process unless a follower needs them.
//   - the core's in-memory log is compacted after an own snapshot in steps of at most
//     options.compact_step entries, each a task of its own on the executor, so the inputs queued
//     meanwhile run between them: freeing ~95,000 entries at once held the Raft thread ~240 ms
//     right after the snapshot's fork (each first write to a page after a fork faults), and
//     every write in flight waited for it.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "consensus/conf_change.h"
#include "consensus/raft_application.h"
#include "consensus/raft_core.h"
#include "consensus/raft_driver_io.h"
#include "consensus/types.h"

namespace zkraft::consensus {

// What a wiring may want to see (logs, metrics, the simulation's safety checker). Every hook
// runs on the executor, after the application saw the event, and must not call into the driver.
class RaftDriverObserver {
 public:
  virtual ~RaftDriverObserver() = default;
  // A Ready was taken from the core; nothing of it was acted on yet (the core still holds its
  // entries in its log, unstable).
  virtual void on_ready(const Ready& rd) { (void)rd; }
  // Committed entry `e` (any type) was applied: handed to app.apply() if kNormal, applied to the
  // membership if kConfChange. Entries skipped as covered by a snapshot are not reported.
  virtual void on_applied(const Entry& e) { (void)e; }
  // A snapshot from the leader was restored into the application.
  virtual void on_snapshot_restored(const SnapshotMeta& meta, size_t bytes) { (void)meta, (void)bytes; }
  // A committed conf change changed the applied membership.
  virtual void on_membership_applied(Index index, const Membership& m) { (void)index, (void)m; }
  // A read state was handed to the application.
  virtual void on_read_state(const ReadState& rs) { (void)rs; }
  // The application's snapshot was accepted by the core and sent to storage (compacting the
  // log through compact_through).
  virtual void on_snapshot_taken(const SnapshotMeta& meta, size_t bytes, Index compact_through) {
    (void)meta, (void)bytes, (void)compact_through;
  }
  // The stored snapshot was read back from disk to be streamed to a follower (the bytes are kept
  // in memory only while one is being sent them).
  virtual void on_snapshot_loaded(const SnapshotMeta& meta, size_t bytes) { (void)meta, (void)bytes; }
  // The leader or term changed (reported to the application just before).
  virtual void on_leader_change(NodeId leader, Term term, bool self_is_leader) {
    (void)leader, (void)term, (void)self_is_leader;
  }
  // A storage operation failed: the driver has stopped and will call app.on_fatal_error() right
  // after this returns. The wiring stops its timer, transport and storage here.
  virtual void on_fatal_error(const std::string& what) { (void)what; }
};

struct RaftDriverOptions {
  uint64_t snapshot_every = 0;  // ask for a snapshot after this many applied entries; 0 = never
  uint64_t keep_tail = 0;       // entries kept behind a snapshot for slow followers
  // Also ask for a snapshot once the entries applied since the last one hold this many bytes
  // (entry_size, counted as they are applied); 0 = no byte trigger.
  uint64_t snapshot_bytes = 0;
  // The kept tail holds at most this many bytes too (whole entries; 0 = bounded by count only).
  uint64_t keep_tail_bytes = 0;
  // Entries dropped from the core's in-memory log per step after an own snapshot (0 = all at
  // once). Right after a fork freeing took ~2.5 us per entry (240 ms for 95,000 on the
  // development machine), so a step of 256 holds the executor well under a millisecond.
  uint64_t compact_step = 256;
};

class RaftDriver {
 public:
  struct Io {
    RaftDriverStorage& storage;
    RaftDriverTransport& transport;
    RaftDriverExecutor& executor;
  };

  // Builds the core from what storage recovered. A recovered snapshot is handed to
  // app.restore_snapshot (and its membership to app.on_membership) here, inside the constructor.
  // `observer` may be null; it must outlive the driver.
  RaftDriver(const RaftConfig& config, RecoveredState recovered, RandomSource random,
             RaftDriverOptions options, Io io, RaftApplication& app, RaftDriverObserver* observer = nullptr);
  ~RaftDriver();
  RaftDriver(const RaftDriver&) = delete;
  RaftDriver& operator=(const RaftDriver&) = delete;

  // Starts processing Readies (the recovered committed entries are re-applied from a scheduled
  // pump). Before start() application calls are refused (kNotLeader); wiring inputs (tick, step)
  // reach the core, but nothing they produce is processed until start(). A sole voter
  // campaigns here (RaftCore::campaign_if_sole_voter) rather than after an election timeout.
  void start();
  // No more storage, transport or application calls from now on. Idempotent, final.
  void stop();
  bool stopped() const { return stopped_; }

  // ---- inputs from the wiring (processed at once: Ready, then leader-change report) ----
  void tick();
  void step(const Message& m);
  // The transport saw the connection to the current leader break (see RaftCore).
  void broken_leader_connection();
  // After the wiring gave the application some other input on the executor (e.g. an application
  // message): processes what it produced and reports leader changes.
  void after_input();

  // ---- application calls (only schedule a pump; callbacks follow from a later task) ----
  ProposeResult propose(std::string data);
  RaftError read_index(uint64_t context);
  ProposeResult change_membership(const ConfChange& cc);
  RaftError transfer_leadership(NodeId to);
  // Asks for a snapshot now (regardless of snapshot_every), keeping `keep_tail` entries behind
  // it (and at most options.keep_tail_bytes); nothing happens if one is outstanding or nothing
  // was applied since the last.
  void snapshot_now(uint64_t keep_tail);

  // ---- introspection ----
  const RaftCore& core() const { return *core_; }
  Index applied_index() const { return applied_; }  // last entry handed to the app (or snapshot)
  const Membership& applied_membership() const { return applied_membership_; }
  bool snapshot_requested() const { return snapshot_requested_; }
  // Bytes (entry_size) of the entries applied since the last snapshot was asked for or restored.
  uint64_t applied_bytes_since_snapshot() const { return applied_bytes_since_snapshot_; }

 private:
  struct Mailbox;  // shared with completions that may outlive the driver

  // Runs `task` on the executor if the driver is still alive (from any thread).
  void post_from_anywhere(std::function<void()> task);
  RaftDriverStorage::Done fatal_on_error(std::string what);
  void schedule_pump();
  void pump();
  void persisted(const std::shared_ptr<Ready>& rd, const Status& s);
  void finish_ready(const Ready& rd);
  void apply_durable_committed(const Ready& rd, Index first_unwritten);
  void apply_entries(std::span<const Entry> entries);
  void maybe_snapshot();
  void request_snapshot(uint64_t keep_tail);
  void snapshot_answered(Index index, SnapshotBytes data, uint64_t keep_tail);
  void snapshot_file_answered(Index index, const Status& s, const SnapshotFileWritten& file, uint64_t keep_tail);
  // The steps both answers share: whether the core took the snapshot, how far to compact, the
  // completion of its store (own_snapshot_stored marks the store under way; no snapshot is
  // asked for until it completes), and what follows handing it to storage.
  bool own_snapshot_accepted(Index index, const SnapshotMeta& meta);
  Index own_snapshot_compact_point(const SnapshotMeta& meta, uint64_t keep_tail) const;
  RaftDriverStorage::Done own_snapshot_stored(Index index);
  void own_snapshot_handed_to_storage(const SnapshotMeta& meta, size_t bytes, Index compact_to);
  // Drops one step of the core's log towards compact_goal_, and posts the next step if more remain.
  void compact_a_step();
  // Keeps the core's snapshot bytes in memory only while a follower is being sent them.
  // Reads back, from storage, the evicted entries the core asks for to send to a follower.
  void load_evicted_entries();
  void manage_snapshot_bytes();
  void snapshot_loaded(const Status& s, const SnapshotMeta& meta, SnapshotBytes data);
  // The leader's snapshot of the Ready in flight, read back after storing it (`want`).
  void received_snapshot_loaded(const SnapshotMeta& want, const Status& s, const SnapshotMeta& meta,
                                SnapshotBytes data);
  void notify_leader_change();
  void fail(const std::string& what);

  RaftDriverOptions options_;
  Io io_;
  RaftApplication& app_;
  RaftDriverObserver* observer_;
  std::unique_ptr<RaftCore> core_;
  std::shared_ptr<Mailbox> mailbox_;

  bool started_ = false;
  bool stopped_ = false;
  bool ready_in_flight_ = false;
  bool pump_posted_ = false;
  bool snapshot_requested_ = false;
  bool snapshot_storing_ = false;  // the last snapshot taken is handed to the storage, not yet stored
  // Asked while applied_ ran ahead of the core, or while the last snapshot was being stored.
  std::optional<uint64_t> deferred_snapshot_keep_tail_;
  Index applied_ = 0;
  Index last_snapshot_index_ = 0;
  uint64_t applied_bytes_since_snapshot_ = 0;
  Index stored_snapshot_index_ = 0;  // the newest snapshot known to be on disk
  bool snapshot_load_in_flight_ = false;
  Index compact_goal_ = 0;           // the core's log is compacted through here, a step at a time
  bool compact_step_posted_ = false;
  // The leader's snapshot the Ready in flight installs, as read back from storage; set before
  // that Ready's write completes (storage completes in order), reset once restored.
  SnapshotBytes received_snapshot_;
  Membership applied_membership_;
  NodeId notified_leader_ = 0;
  Term notified_term_ = 0;
  bool notified_self_leader_ = false;
};

}  // namespace zkraft::consensus
