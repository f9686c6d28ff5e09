#pragma once
// GroupCommitLog: owns a LogStorage and the one storage thread that writes it, batching fsyncs.
//
// Callers on any thread submit() entries and/or a hard state with a completion callback. The
// storage thread takes everything queued while its previous write+fsync ran, writes it as ONE
// LevelDB WriteBatch with sync=true, then runs the callbacks of that group in submission order.
// So under load one fsync serves many submissions, and with a single submitter nothing waits for
// a timer.
//
// Threads and callbacks:
//   - on_durable callbacks run ON THE STORAGE THREAD, in submission order, after the write holding
//     their data returned. They must be quick and must not block on the storage thread (e.g. call
//     submit() and wait); post to your own executor instead.
//   - run() tasks also execute on the storage thread, ordered with submissions (everything
//     submitted before a task is durable before it runs): use them for save_snapshot / compact.
//   - store_snapshot_beside() writes snapshot files on a second thread of this log ("zk-snapshot"),
//     concurrently with the storage thread; only the publishing runs on the storage thread.
//   - storage() may be used directly before start() and after stop(); while running, only its
//     read methods and the snapshot-file methods marked "any thread" (which are thread-safe) may
//     be called from other threads.
//
// A submission whose entries do not fit the log (a gap, non-contiguous) fails alone with
// kInvalidArgument; later submissions in the same group still commit. An I/O error fails every
// submission of its group. A full disk (kNoSpace) fails nothing: the storage thread retries the
// group every retry_interval until it is written (or stop() is called), with disk_full() true
// meanwhile so that callers can refuse new work; nothing is acknowledged before it is on disk.

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "consensus/log_buckets.h"
#include "consensus/log_storage.h"
#include "consensus/status.h"
#include "consensus/types.h"

namespace zkraft::consensus {

struct GroupCommitOptions {
  // fsync every group (false only for benchmarks/tests, like ZooKeeper's forceSync=no).
  bool sync = true;
  // An fsync slower than this is logged with its duration and counted (ZooKeeper's
  // fsync.warningthresholdms); 0 = never.
  uint64_t fsync_warning_ms = 1000;
  // How often a write that found the disk full is tried again.
  std::chrono::milliseconds no_space_retry{250};
  // How long the storage thread must have had nothing to do before it runs run_once_idle's task.
  std::chrono::milliseconds idle_delay{1000};
};

// Monotonic counters, readable from any thread (metrics: zk_fsynctime etc.).
struct GroupCommitStats {
  uint64_t submissions = 0;    // submit() calls completed
  uint64_t groups = 0;         // write batches issued
  uint64_t fsyncs = 0;         // synced writes (groups that needed a sync, when options.sync)
  uint64_t entries = 0;        // entries written
  uint64_t bytes = 0;          // entry data bytes written
  uint64_t fsync_micros_total = 0;
  uint64_t fsync_micros_max = 0;
  uint64_t fsync_micros_last = 0;
  uint64_t fsync_threshold_exceeded = 0;  // fsyncs slower than fsync_warning_ms
  // How many fsyncs took each bucket's microseconds (consensus/log_buckets.h); sums to fsyncs
  // when options.sync (a synced write is counted here as it is in fsync_micros_total).
  std::vector<uint64_t> fsync_micros_buckets;
};

class GroupCommitLog {
 public:
  using Callback = std::function<void(Status)>;

  explicit GroupCommitLog(std::unique_ptr<LogStorage> storage, GroupCommitOptions options = {});
  // Stops the thread after finishing everything already submitted.
  ~GroupCommitLog();
  GroupCommitLog(const GroupCommitLog&) = delete;
  GroupCommitLog& operator=(const GroupCommitLog&) = delete;

  // Starts the storage thread. Submissions made before start() wait until then.
  void start();
  // Finishes all queued work, then joins the thread. Idempotent. Submissions after stop() get
  // kClosed, their callback running on the calling thread.
  void stop();

  // Queues entries (contiguous; may start at or below the last queued index to replace a suffix)
  // and an optional hard state. on_durable(ok) runs once they are on disk.
  // need_sync=false marks a write that may skip the fsync (e.g. a hard state whose only change is
  // the commit index, which Raft can recover: etcd's MustSync rule). Such a submission's callback
  // means "written" (survives a process crash, not a power loss) unless it shares a group with a
  // submission that needs the sync; a group is fsynced if any member needs it.
  void submit(std::vector<Entry> entries, std::optional<HardState> hs, Callback on_durable,
              bool need_sync = true);

  // Runs task(storage) on the storage thread after everything submitted before it is durable.
  void run(std::function<void(LogStorage&)> task);

  // Runs task(storage) on the storage thread once it has had nothing to do for
  // options.idle_delay: for housekeeping that would otherwise hold up writes, and that can wait
  // for a pause in them (RaftNode gives freed memory back this way). One such task waits at a
  // time: a call before the previous task ran replaces it. Dropped by stop().
  void run_once_idle(std::function<void(LogStorage&)> task);

  // Compacts the log through `through` (LogStorage::compact, which a stored snapshot must cover)
  // in steps of at most `step` entries, each step a task queued behind whatever was submitted
  // while the previous one ran. One LevelDB batch deleting every entry behind a snapshot (about
  // 100,000 at snapCount's default) held the storage thread, and so every write, for ~100 ms.
  // A step that fails is logged and ends the compaction (the log is longer than it could be, no
  // more: the next snapshot compacts again); a step that finds the log already compacted past it
  // (a leader's snapshot replaced the log) does nothing. Callable from a run() task.
  void compact_in_steps(Index through, Index step = kCompactStep);
  static constexpr Index kCompactStep = 4096;

  // Stores the application's own snapshot without holding up the log: this log's snapshot
  // thread writes its data to a file (LogStorage::write_snapshot_data) while the storage thread
  // goes on writing submissions, and then a task queued behind whatever was submitted by then
  // publishes it (LogStorage::publish_snapshot). Unlike run(), its completion may come after
  // those of submissions made after this call: only for a snapshot that later writes do not
  // depend on (the application's own, of entries already in the log; a leader's snapshot must
  // be stored before the entries after it, with run()). Writing the 194 MB of a 1,000,000-znode
  // snapshot in order on the storage thread held every write for ~2 s.
  // done(storage, status) runs on the storage thread after the publish, or on the snapshot
  // thread if writing the data failed. Dropped, done and all, once stop() began (a file left
  // unpublished is removed by the next open()).
  using SnapshotDone = std::function<void(LogStorage&, Status)>;
  void store_snapshot_beside(SnapshotMeta meta, SnapshotBytes data, SnapshotDone done);

  LogStorage& storage() { return *storage_; }
  const LogStorage& storage() const { return *storage_; }

  GroupCommitStats stats() const;

  // True from a write that found the disk full until a write succeeds again. Any thread.
  bool disk_full() const { return disk_full_.load(std::memory_order_acquire); }

 private:
  struct Item {
    std::vector<Entry> entries;
    std::optional<HardState> hs;
    Callback on_durable;
    std::function<void(LogStorage&)> task;  // set for run() items
    bool need_sync = true;
  };

  void loop();
  // Writes one group of submissions (no tasks) with a single write, then runs their callbacks.
  void commit_group(std::vector<Item>& group);
  // Retries a write that failed with kNoSpace until it succeeds, fails otherwise, or stop().
  Status wait_for_space(const std::vector<Entry>& entries, const HardState* hs, bool sync, Status first);

  void snapshot_loop();

  std::unique_ptr<LogStorage> storage_;
  GroupCommitOptions options_;

  // The snapshot thread's queue (under mu_); it starts with the first snapshot.
  struct SnapshotJob {
    SnapshotMeta meta;
    SnapshotBytes data;
    SnapshotDone done;
  };
  std::deque<SnapshotJob> snapshot_jobs_;
  std::condition_variable snapshot_cv_;
  std::thread snapshot_thread_;
  std::atomic<bool> abandon_snapshots_{false};  // set by stop(): a file being written is dropped

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::function<void(LogStorage&)> idle_task_;  // run_once_idle's
  bool started_ = false;
  bool stopping_ = false;
  bool stopped_ = false;
  std::thread thread_;
  std::atomic<bool> disk_full_{false};

  std::atomic<uint64_t> submissions_{0}, groups_{0}, fsyncs_{0}, entries_{0}, bytes_{0};
  std::atomic<uint64_t> fsync_total_{0}, fsync_max_{0}, fsync_last_{0}, fsync_slow_{0};
  std::array<std::atomic<uint64_t>, kLogBucketCount> fsync_buckets_{};
};

}  // namespace zkraft::consensus
