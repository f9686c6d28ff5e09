#pragma once
// One simulated node's disk, as the RaftDriver's storage: what is durable (survives a crash) and
// the operations on their way to the disk.
//
// Operations complete strictly in the order issued, like GroupCommitLog, except the application's
// own snapshots (store_own_snapshot), which GroupCommitLog writes beside the log: one is queued for
// publishing only once 0 to 3 more operations (drawn from this storage's own seeded stream) have
// been issued or completed, behind the operations queued by then, so later writes may be durable
// before it; a crash first loses it. On a disk with nothing else to do it waits for the next
// operation (the real writer finishes on its own; meanwhile the driver only keeps the bytes).
//
// A synced write or a snapshot takes disk time: when it reaches the head of the queue the owner
// is asked to start the I/O (start_io) and calls disk_done() once the simulated latency passed.
// An unsynced write
// completes as soon as it reaches the head but is only in the page cache: the next synced write
// or snapshot makes it durable (an fsync of the log covers everything written before it), and a
// crash before that keeps only a prefix of the unsynced writes (the log is flushed in order). A
// crash loses every queued operation; if every unsynced write survived, the one under way may be
// torn: a prefix of its entries lands, never its hard state. Completions run inline (from
// disk_done() or write()); the driver re-posts them.
//
// Snapshot files: half the time (this storage's own stream again) own_snapshot_file() hands the
// application a file to write its snapshot into itself, as LogStorage does for the server's
// forked child. The application writes it whole at once (write_file); it is published in order
// with the operations issued before store_own_snapshot_file, and a crash before that loses it,
// as open() removes a real file nothing names.

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "consensus/raft_config.h"
#include "consensus/raft_driver_io.h"
#include "consensus/types.h"
#include "tests/sim/sim_rng.h"

namespace zkraft::sim {

class SimStorage : public consensus::RaftDriverStorage {
 public:
  void set_start_io(std::function<void()> start_io) { start_io_ = std::move(start_io); }
  // The stream that decides how long own snapshots wait (its own, so that the cluster's stream,
  // and so every other decision of a seed, is the same as without it).
  void set_seed(uint64_t seed) { rng_ = SimRng(seed); }

  void write(std::vector<consensus::Entry> entries, std::optional<consensus::HardState> hs, bool need_sync,
             Done done) override {
    Op op;
    op.entries = std::move(entries);
    op.hard_state = hs;
    op.need_sync = need_sync;
    op.done = std::move(done);
    issue(std::move(op));
  }

  // A leader's snapshot arrives in chunks that are only in the page cache (no disk time) until
  // store_snapshot publishes them; a crash before that loses them (open() removes the file).
  void store_snapshot_chunk(consensus::SnapshotChunk chunk, Done done) override {
    Op op;
    op.chunk = std::move(chunk);
    op.need_sync = false;
    op.done = std::move(done);
    issue(std::move(op));
  }

  void store_snapshot(const consensus::SnapshotMeta& meta, Done done) override {
    Op op;
    op.snapshot = meta;
    op.from_chunks = true;
    op.done = std::move(done);
    issue(std::move(op));
  }

  void store_own_snapshot(const consensus::SnapshotMeta& meta, consensus::SnapshotBytes data,
                          consensus::Index compact_through, Done done) override {
    Op op;
    op.snapshot = meta;
    op.snapshot_data = std::string(data->bytes());
    op.compact_through = compact_through;
    op.done = std::move(done);
    op.seq = ++next_seq_;
    beside_.push_back(Beside{rng_.below(4), std::move(op)});
    ++own_snapshots_;
    kick();
  }

  std::optional<consensus::SnapshotFileTarget> own_snapshot_file() override {
    if (rng_.below(2) == 0) return std::nullopt;
    consensus::SnapshotFileTarget t;
    t.token = ++next_file_token_;
    t.path = "sim-snapshot-" + std::to_string(t.token);
    t.sync_bytes = 1 << 22;
    return t;
  }
  // The application wrote (and synced) the file of target `token`.
  void write_file(uint64_t token, std::string data) { files_[token] = std::move(data); }

  void store_own_snapshot_file(const consensus::SnapshotMeta& meta, const consensus::SnapshotFileWritten& file,
                               consensus::Index compact_through, Done done) override {
    auto it = files_.find(file.token);
    if (it == files_.end() || it->second.size() != file.size) {
      // LogStorage refuses a missing file or one of another size in the same way.
      done(consensus::Status::corruption("no snapshot file " + std::to_string(file.token) + " of that size"));
      return;
    }
    Op op;
    op.snapshot = meta;
    op.snapshot_data = std::move(it->second);
    files_.erase(it);
    op.compact_through = compact_through;
    op.done = std::move(done);
    ++own_snapshot_files_;
    issue(std::move(op));
  }

  void discard_own_snapshot_file(const consensus::SnapshotFileWritten& file) override {
    if (files_.erase(file.token) > 0) ++snapshot_files_discarded_;
  }

  // How many own snapshots the application wrote to a file itself and were published from it, and
  // how many such files were discarded (the core declined the snapshot).
  uint64_t own_snapshot_files() const { return own_snapshot_files_; }
  uint64_t snapshot_files_discarded() const { return snapshot_files_discarded_; }

  // How many own snapshots were stored beside the log, and how many of them were published after
  // an operation issued later had completed (so the simulation really reorders).
  uint64_t own_snapshots() const { return own_snapshots_; }
  // How many leader's snapshots were stored from their chunks, and how many transfers a crash
  // cut off (chunks written, the snapshot not stored).
  uint64_t received_stored() const { return received_stored_; }
  uint64_t received_lost() const { return received_lost_; }
  uint64_t own_snapshots_overtaken() const { return own_snapshots_overtaken_; }

  // The I/O started by start_io finished: the head operation is durable.
  void disk_done() {
    if (!io_busy_) return;
    io_busy_ = false;
    complete_front();
    kick();
  }

  // Whether anything is on its way to the disk (a crash now loses or tears it).
  bool busy() const { return !queue_.empty() || !beside_.empty(); }
  // Whether the head operation is a write with entries under way (a crash may tear it).
  bool tearable() const { return io_busy_ && !queue_.front().snapshot && !queue_.front().entries.empty(); }

  // The machine crashed: a prefix of the unsynced writes lands; then, if all of them did and
  // `may_tear`, a prefix of the entries of the write under way; nothing else queued lands and no
  // completion runs.
  void crash(SimRng& rng, bool may_tear) {
    const size_t keep = unsynced_.empty() ? 0 : rng.below(unsynced_.size() + 1);
    for (size_t i = 0; i < keep; ++i) apply_write(unsynced_[i]);
    if (keep == unsynced_.size() && may_tear && tearable()) {
      const Op& op = queue_.front();
      append(op.entries, rng.below(op.entries.size() + 1));
    }
    unsynced_.clear();
    queue_.clear();
    beside_.clear();
    files_.clear();
    if (received_) ++received_lost_;
    received_.reset();
    io_busy_ = false;
  }

  consensus::RecoveredState recover() const {
    consensus::RecoveredState r;
    r.hard_state = hard_state_;
    r.snapshot = snapshot_;
    // Like RaftNode, which maps the stored file and whose core keeps no bytes (it reads them back
    // when a follower needs them), for snapshots at odd indexes; for the others the core keeps
    // them, as RaftNode's does for a snapshot stored in chunks.
    r.snapshot_bytes = consensus::snapshot_in_memory(snapshot_data_);
    r.keep_snapshot_bytes = snapshot_.index % 2 == 0;
    // Entries must continue right after the snapshot; anything after a gap is unusable.
    consensus::Index expect = snapshot_.index + 1;
    for (const auto& e : entries_) {
      if (e.index <= snapshot_.index) continue;
      if (e.index != expect) break;
      r.entries.push_back(e);
      ++expect;
    }
    r.applied = snapshot_.index;
    return r;
  }

  // The last index the durable state covers (log or snapshot): what survives a crash now.
  consensus::Index durable_last_index() const {
    return std::max(snapshot_.index, entries_.empty() ? 0 : entries_.back().index);
  }
  const consensus::HardState& hard_state() const { return hard_state_; }
  // A read of the stored snapshot takes a disk operation's time, in order with the writes.
  void load_snapshot(Loaded done) override {
    Op op;
    op.loaded = std::move(done);
    issue(std::move(op));
  }

  // A read of stored entries too (RaftDriverStorage::load_entries).
  void load_entries(consensus::Index lo, consensus::Index hi, size_t max_bytes, EntriesLoaded done) override {
    Op op;
    op.entries_loaded = std::move(done);
    op.load_lo = lo;
    op.load_hi = hi;
    op.load_max_bytes = max_bytes;
    ++entry_loads_;
    issue(std::move(op));
  }
  // How many load_entries reads were asked for (the core evicted entries a follower needed).
  uint64_t entry_loads() const { return entry_loads_; }

  const consensus::SnapshotMeta& snapshot() const { return snapshot_; }
  const std::string& snapshot_data() const { return snapshot_data_; }

 private:
  struct Op {
    std::vector<consensus::Entry> entries;
    std::optional<consensus::HardState> hard_state;
    bool need_sync = true;
    std::optional<consensus::SnapshotMeta> snapshot;  // set: a store_snapshot
    std::string snapshot_data;
    bool from_chunks = false;                      // the leader's: its data are the chunks written
    std::optional<consensus::SnapshotChunk> chunk;  // set: a store_snapshot_chunk
    consensus::Index compact_through = 0;
    Done done;
    Loaded loaded;  // set: a load_snapshot
    EntriesLoaded entries_loaded;  // set: a load_entries of load_lo..load_hi
    consensus::Index load_lo = 0;
    consensus::Index load_hi = 0;
    size_t load_max_bytes = 0;
    uint64_t seq = 0;        // issue order
    bool overtaken = false;  // an own snapshot that an operation issued after it completed before
  };
  // An own snapshot whose data is still being written: queued for publishing once `ops_left`
  // more operations have been issued or completed.
  struct Beside {
    uint64_t ops_left;
    Op op;
  };

  // Queues an operation; it counts towards publishing the own snapshots waiting beside the log,
  // which are then queued behind it when due.
  void issue(Op op) {
    op.seq = ++next_seq_;
    queue_.push_back(std::move(op));
    for (Beside& b : beside_) {
      if (b.ops_left > 0) --b.ops_left;
    }
    kick();
  }

  // Queues the own snapshots that are due, in the order they were stored (one writer thread).
  void release_beside() {
    while (!beside_.empty() && beside_.front().ops_left == 0) {
      queue_.push_back(std::move(beside_.front().op));
      beside_.pop_front();
    }
  }

  void kick() {
    release_beside();
    while (!io_busy_ && !queue_.empty()) {
      const Op& head = queue_.front();
      if (!head.snapshot && !head.need_sync) {
        complete_front();
        continue;
      }
      io_busy_ = true;
      start_io_();
    }
  }

  void complete_front() {
    Op op = std::move(queue_.front());
    queue_.pop_front();
    for (Beside& b : beside_) {
      b.op.overtaken = b.op.overtaken || op.seq > b.op.seq;
      if (b.ops_left > 0) --b.ops_left;
    }
    if (op.overtaken) ++own_snapshots_overtaken_;
    if (op.chunk) {
      if (op.done) op.done(write_chunk(*op.chunk));
      return;
    }
    if (!op.snapshot && !op.loaded && !op.entries_loaded && !op.need_sync) {
      Done done = std::move(op.done);
      unsynced_.push_back(std::move(op));
      if (done) done(consensus::Status::ok());
      return;
    }
    if (op.loaded) {
      if (snapshot_.index == 0) {
        op.loaded(consensus::Status::error(consensus::Status::Code::kUnavailable, "no snapshot"), {}, nullptr);
      } else {
        op.loaded(consensus::Status::ok(), snapshot_, consensus::snapshot_in_memory(snapshot_data_));
      }
      return;
    }
    if (op.entries_loaded) {
      // LogStorage::entries' rules: the first entry always, then while the data fit.
      std::vector<consensus::Entry> out;
      size_t bytes = 0;
      for (const auto& e : entries_) {
        if (e.index < op.load_lo || e.index > op.load_hi) continue;
        if (out.empty() ? e.index != op.load_lo : e.index != out.back().index + 1) break;
        bytes += e.data.size();
        if (!out.empty() && bytes > op.load_max_bytes) break;
        out.push_back(e);
      }
      if (out.empty()) {
        op.entries_loaded(consensus::Status::error(consensus::Status::Code::kCompacted, "not stored"), {});
      } else {
        op.entries_loaded(consensus::Status::ok(), std::move(out));
      }
      return;
    }
    // This operation's fsync makes every write before it durable too.
    for (const Op& u : unsynced_) apply_write(u);
    unsynced_.clear();
    consensus::Status s = op.snapshot ? apply_snapshot(op) : apply_write(op);
    if (op.done) op.done(std::move(s));
  }

  consensus::Status apply_write(const Op& op) {
    append(op.entries, op.entries.size());
    if (op.hard_state) hard_state_ = *op.hard_state;
    return consensus::Status::ok();
  }

  // LogStorage's rules: refuse an older snapshot; keep the log if it holds the snapshot's last
  // entry, else drop it; then compact (never beyond the snapshot).
  consensus::Status apply_snapshot(const Op& op) {
    const consensus::SnapshotMeta& meta = *op.snapshot;
    // The leader's: ReceivedSnapshot::publish's checks.
    std::string received;
    if (op.from_chunks) {
      const bool whole = received_ && received_->done && received_->meta == meta;
      if (whole) received = std::move(received_->data);
      received_.reset();
      if (!whole) return consensus::Status::invalid_argument("the snapshot to store was not received whole");
      ++received_stored_;
    }
    if (meta.index < snapshot_.index) {
      return consensus::Status::error(consensus::Status::Code::kSnapshotOutOfDate, "older than stored");
    }
    bool keep = false;
    for (const auto& e : entries_) {
      if (e.index == meta.index) keep = e.term == meta.term;
    }
    snapshot_ = meta;
    snapshot_data_ = op.from_chunks ? std::move(received) : op.snapshot_data;
    if (!keep) entries_.clear();
    const consensus::Index through = std::min(op.compact_through, meta.index);
    while (!entries_.empty() && entries_.front().index <= through) entries_.pop_front();
    return consensus::Status::ok();
  }

  // ReceivedSnapshot::write's rules.
  consensus::Status write_chunk(const consensus::SnapshotChunk& c) {
    if (c.offset == 0) {
      received_ = Received{c.meta, {}, false};
    } else if (!received_ || received_->done || !(received_->meta == c.meta) || c.offset != received_->data.size()) {
      return consensus::Status::invalid_argument("a snapshot chunk that does not continue the ones before");
    }
    received_->data += c.bytes;
    received_->done = c.last;
    return consensus::Status::ok();
  }

  void append(const std::vector<consensus::Entry>& entries, size_t count) {
    if (count == 0) return;
    const consensus::Index first = entries.front().index;
    while (!entries_.empty() && entries_.back().index >= first) entries_.pop_back();
    for (size_t i = 0; i < count; ++i) entries_.push_back(entries[i]);
  }

  std::function<void()> start_io_;
  std::deque<Op> queue_;
  std::deque<Beside> beside_;
  uint64_t next_seq_ = 0;
  SimRng rng_{0};
  uint64_t own_snapshots_ = 0;
  uint64_t received_stored_ = 0;
  uint64_t received_lost_ = 0;
  uint64_t own_snapshots_overtaken_ = 0;
  uint64_t entry_loads_ = 0;
  uint64_t next_file_token_ = 0;
  std::map<uint64_t, std::string> files_;  // written by the application, not yet published
  uint64_t own_snapshot_files_ = 0;
  uint64_t snapshot_files_discarded_ = 0;
  bool io_busy_ = false;
  std::vector<Op> unsynced_;  // completed, not yet covered by an fsync: lost in a crash

  // The leader's snapshot being received: its file, in the page cache only.
  struct Received {
    consensus::SnapshotMeta meta;
    std::string data;
    bool done = false;
  };
  std::optional<Received> received_;

  consensus::HardState hard_state_;
  consensus::SnapshotMeta snapshot_;
  std::string snapshot_data_;
  std::deque<consensus::Entry> entries_;
};

}  // namespace zkraft::sim
