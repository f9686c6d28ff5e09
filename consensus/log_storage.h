#pragma once
// LogStorage: the durable Raft log, hard state and latest snapshot of one server, in LevelDB.
//
// Layout: see storage_codec.h. A snapshot's data is a file beside the LevelDB files, written and
// synced before the LevelDB record that points at it is written (synced): until then it is not
// the stored snapshot, and open() removes it. So a large snapshot never passes through LevelDB's
// memtables and compactions, and its data can be written on another thread while the storage
// thread goes on writing the log (write_snapshot_data, then publish_snapshot).
//
// Invariants (hold after open() and after every call that returned ok):
//   - entries first_index()..last_index() are all present, contiguous and checksummed;
//     an empty log has last_index() == first_index() - 1;
//   - term(first_index() - 1) is known (0 for a fresh log, else from the compaction marker or the
//     snapshot), so Raft's prev-log check works right after compaction;
//   - a snapshot, if stored, covers index >= first_index() - 1;
//   - the stored hard state is the record at the highest index among the hard-state records
//     (storage_codec.h), all of which lie within first_index() - 1..last_index().
//
// Threads: writes (append, save_snapshot, publish_snapshot, compact) must come from one thread at
// a time (the storage thread); write_snapshot_data may run on any thread meanwhile. Reads (first_index, last_index, term, entries, hard_state, snapshot_meta, load_snapshot)
// may run on any thread concurrently with that writer: each read sees either the state before or
// after a concurrent write; entries() reads from one LevelDB snapshot and so never mixes the two.
//
// Recovery on open(): all stored entries are scanned and checksummed. A damaged tail (bad entries
// after the last good one, nothing good after them) is truncated with a warning; a damaged or
// missing entry followed by a good one is corruption and open() fails naming the index.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "consensus/file_remover.h"
#include "consensus/storage_prealloc_env.h"
#include "consensus/storage_pread_env.h"
#include "consensus/status.h"
#include "consensus/storage_codec.h"
#include "consensus/storage_options.h"
#include "consensus/types.h"

namespace leveldb {
class Cache;
class DB;
class Env;
class WriteBatch;
}  // namespace leveldb

namespace zkraft::consensus {

class LogStorage {
 public:
  // Opens (creating if allowed) the log in directory `dir` and recovers it. On failure returns
  // nullptr and sets *error to a message naming the directory (and index, for corruption).
  static std::unique_ptr<LogStorage> open(const std::string& dir, const StorageOptions& options,
                                          std::string* error);
  ~LogStorage();
  LogStorage(const LogStorage&) = delete;
  LogStorage& operator=(const LogStorage&) = delete;

  // Writes `entries` (contiguous, ascending indexes) and, if given, the hard state in ONE LevelDB
  // WriteBatch; with sync=true it is on disk when this returns ok. If entries[0].index <=
  // last_index(), the existing suffix from entries[0].index on is replaced (Raft's conflict
  // truncation). Entries at or below first_index() - 1 are already covered by a snapshot and are
  // skipped. entries[0].index > last_index() + 1 (a gap) is kInvalidArgument.
  Status append(const std::vector<Entry>& entries, const HardState* hs, bool sync);

  Index first_index() const { return first_index_.load(std::memory_order_acquire); }
  Index last_index() const { return last_index_.load(std::memory_order_acquire); }

  // Term of entry `index`, for first_index()-1 <= index <= last_index().
  // kCompacted below that range, kUnavailable above it, kCorruption on a bad stored value.
  Status term(Index index, Term* out) const;

  // Entries [lo, hi) appended to *out, stopping once their data exceeds max_bytes (at least one
  // entry is always returned when lo < hi). kCompacted if lo < first_index(), kUnavailable if
  // hi > last_index() + 1.
  Status entries(Index lo, Index hi, uint64_t max_bytes, std::vector<Entry>* out) const;

  HardState hard_state() const;

  // The stored snapshot's metadata, or nullopt if none has been saved.
  std::optional<SnapshotMeta> snapshot_meta() const;

  // Stores a snapshot durably (sync). If the log holds entry meta.index with term meta.term, the
  // log is kept (compact() it later); otherwise the whole log is discarded and the log restarts at
  // meta.index + 1 (a follower installing the leader's snapshot). kSnapshotOutOfDate if
  // meta.index is below the stored snapshot's index. write_snapshot_data, then publish_snapshot.
  Status save_snapshot(const SnapshotMeta& meta, std::string_view data);

  // A snapshot whose data is in its file, synced, but which is not (yet) the stored snapshot.
  struct PreparedSnapshot {
    storage::SnapshotRecord record;
  };
  // The first half of save_snapshot, on any thread, concurrently with the storage thread's
  // writes: writes `data` to a new file, syncing it every options.snapshot_sync_bytes (so that
  // the dirty pages never pile up behind the log's fsyncs) and at the end, and then the directory.
  // kSnapshotOutOfDate as save_snapshot (checked again on publishing). kClosed if *abandon became
  // true between two pieces. On failure no file is left behind.
  Status write_snapshot_data(const SnapshotMeta& meta, std::string_view data, PreparedSnapshot* out,
                             const std::atomic<bool>* abandon = nullptr);
  // The second half, on the storage thread: the log rules of save_snapshot, applied as of now,
  // and the record in one synced write; then the older snapshot's data is removed. If `prepared`
  // is out of date by now (a newer snapshot was stored meanwhile, e.g. the leader's), its file is
  // removed and nothing else changes.
  Status publish_snapshot(const PreparedSnapshot& prepared);

  // A snapshot file written elsewhere (SnapshotFileWriter, e.g. by a forked child of the server):
  // the path of a new generation, and the sync interval of this storage's own snapshot files.
  // Any thread.
  SnapshotFileTarget snapshot_file_target();
  // Publishes a snapshot whose data a writer finished at a target of snapshot_file_target(), as
  // publish_snapshot does (storage thread), after checking that the file has the size written.
  // Refused (and the file removed): kCorruption if it has not, kSnapshotOutOfDate as there.
  Status publish_snapshot_file(const SnapshotMeta& meta, const SnapshotFileWritten& file);
  // Removes such a file that will not be published. Any thread; never the stored snapshot's.
  void discard_snapshot_file(const SnapshotFileWritten& file);

  // Loads the stored snapshot; kUnavailable if there is none; kCorruption if its data checksum
  // fails.
  Status load_snapshot(SnapshotMeta* meta, std::string* data) const;

  // The stored snapshot's file mapped read-only: to restore from at start-up without copying
  // 170 MB into the heap (the copy, the zeroed pages and their faults were ~0.3 s of a 2.5 s
  // restart), and to stream it to a follower or restore from a leader's snapshot without ever
  // holding it in the heap. Unmapped when it goes away; a newer snapshot's publish removes the
  // file's name, not the mapped bytes.
  class MappedSnapshot final : public SnapshotData {
   public:
    MappedSnapshot() = default;
    ~MappedSnapshot() override;
    MappedSnapshot(const MappedSnapshot&) = delete;
    MappedSnapshot& operator=(const MappedSnapshot&) = delete;
    std::string_view bytes() const override { return {static_cast<const char*>(addr_), size_}; }

   private:
    friend class LogStorage;
    void* addr_ = nullptr;
    size_t size_ = 0;
  };
  // As load_snapshot, checksum included, into a mapping. kUnavailable also when the stored data
  // is not a file (the chunk layout: use load_snapshot). Any thread. kResident maps every page at
  // once (a restore that reads it all now); kOnDemand lets the pages go again after the
  // checksum pass, to be faulted back in from the page cache as they are read (a follower sent
  // it a chunk at a time), so the process holds only what it is reading.
  enum class Mapping : uint8_t { kResident, kOnDemand };
  Status map_snapshot(SnapshotMeta* meta, MappedSnapshot* out, Mapping how = Mapping::kResident) const;

  // Drops entries <= through. Precondition: a stored snapshot covers `through`
  // (through <= snapshot index) and through <= last_index(). Not synced (losing a compaction in a
  // crash only leaves extra entries).
  Status compact(Index through);

  const std::string& dir() const { return dir_; }

  // Old snapshot files are removed on a thread of their own (FileRemover): returns once every
  // removal asked for so far is done. For tests, and for anyone about to count the files.
  void wait_for_file_removals();

  // After a kNoSpace write: closes and reopens the LevelDB (storage thread only). LevelDB keeps
  // writing the same log file after a failed append, behind a possibly torn record that would
  // hide later records from recovery; a reopen recovers that file (dropping the torn, never
  // acknowledged tail) and starts a new one. It needs space itself: kNoSpace again until there
  // is. Readers on other threads wait for it (db_mu_). Writes call it themselves after a
  // kNoSpace, so a caller only retries its write.
  Status reopen();

 private:
  LogStorage(std::string dir, const StorageOptions& options);
  Status recover();
  Status write(leveldb::WriteBatch* batch, bool sync);
  Status check_snapshot_is_newer(const SnapshotMeta& meta) const;
  std::string snapshot_path(uint64_t generation) const;
  leveldb::Env* env() const;
  leveldb::Env* db_env() const { return db_env_ ? static_cast<leveldb::Env*>(db_env_.get()) : table_env_.get(); }
  // Removes snapshot files other than the stored snapshot's; checks the stored one is whole.
  Status sweep_snapshot_files(uint64_t* max_generation);
  // Every writer starts here: reopens after a kNoSpace (see reopen()).
  Status reopen_if_needed();

  std::string dir_;
  StorageOptions options_;
  // Declared before db_, which uses them. table_env_ wraps options_.env (or LevelDB's default);
  // db_env_, when options_.env is unset, wraps table_env_. LevelDB is given db_env().
  std::unique_ptr<PreadEnv> table_env_;
  std::unique_ptr<PreallocEnv> db_env_;
  std::unique_ptr<leveldb::Cache> block_cache_;
  std::unique_ptr<leveldb::DB> db_;
  // Readers hold it shared; reopen() holds it exclusively while db_ is replaced. Taken before
  // meta_mu_ where both are held.
  mutable std::shared_mutex db_mu_;
  bool needs_reopen_ = false;  // storage thread only: the last write failed for lack of space
  // Storage thread only: the index of every stored hard-state record (storage_codec.h),
  // ascending; the last one holds hard_state_. All are within first_index_ - 1..last_index_.
  std::deque<Index> hard_state_at_;

  std::atomic<Index> first_index_{1};
  std::atomic<Index> last_index_{0};
  // Guards the small cached records below (not the entries, which LevelDB itself guards).
  mutable std::shared_mutex meta_mu_;
  Term prev_term_ = 0;  // term of entry first_index_ - 1
  HardState hard_state_;
  // The stored snapshot record (metadata + where its data chunks are), if any.
  std::optional<storage::SnapshotRecord> snapshot_;
  // Names the next snapshot's data; write_snapshot_data takes one from any thread.
  std::atomic<uint64_t> next_snapshot_generation_{1};
  // Last, so it goes first: its destructor finishes the removals queued while env() still works.
  std::unique_ptr<FileRemover> remover_;
};

}  // namespace zkraft::consensus
