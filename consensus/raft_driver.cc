#include "consensus/raft_driver.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>

#include "consensus/messages.h"

namespace zkraft::consensus {

// Completions arrive on other threads (the storage thread, the state machine's thread) and may
// arrive after the driver is gone. They reach the driver only through the mailbox: under its
// lock, so that the executor is not used after the driver (and the wiring that owns the
// executor) went away, and re-checked on the executor before the task touches the driver.
struct RaftDriver::Mailbox {
  std::mutex mu;
  bool alive = true;
  RaftDriverExecutor* executor = nullptr;

  static void post(const std::shared_ptr<Mailbox>& mb, std::function<void()> task) {
    std::lock_guard lock(mb->mu);
    if (!mb->alive) return;
    mb->executor->post([mb, task = std::move(task)] {
      {
        std::lock_guard lock(mb->mu);
        if (!mb->alive) return;
      }
      task();
    });
  }
};

RaftDriver::RaftDriver(const RaftConfig& config, RecoveredState rec, RandomSource random,
                       RaftDriverOptions options, Io io, RaftApplication& app, RaftDriverObserver* observer)
    : options_(options), io_(io), app_(app), observer_(observer), mailbox_(std::make_shared<Mailbox>()) {
  mailbox_->executor = &io_.executor;
  applied_ = rec.snapshot.index;
  last_snapshot_index_ = rec.snapshot.index;
  stored_snapshot_index_ = rec.snapshot.index;
  // The application's state is exactly the stored snapshot; the log after it is re-applied.
  rec.applied = rec.snapshot.index;
  if (rec.snapshot.index > 0) {
    applied_membership_ = rec.snapshot.membership;
    if (!rec.snapshot_bytes) rec.snapshot_bytes = snapshot_in_memory({});
    app_.restore_snapshot(rec.snapshot, rec.snapshot_bytes);
    app_.on_membership(applied_membership_);
  } else {
    applied_membership_ = config.initial_membership;
  }
  core_ = std::make_unique<RaftCore>(config, std::move(rec), std::move(random));
}

RaftDriver::~RaftDriver() {
  stopped_ = true;
  std::lock_guard lock(mailbox_->mu);
  mailbox_->alive = false;
}

void RaftDriver::start() {
  if (started_ || stopped_) return;
  started_ = true;
  core_->campaign_if_sole_voter();  // a sole voter leads from its first Ready,
  schedule_pump();                  // which also re-applies the recovered committed entries
}

void RaftDriver::stop() { stopped_ = true; }

void RaftDriver::fail(const std::string& what) {
  if (stopped_) return;
  stopped_ = true;
  if (observer_) observer_->on_fatal_error(what);
  app_.on_fatal_error(what);
}

// ---------------------------------------------------------------- inputs

void RaftDriver::tick() {
  if (stopped_) return;
  core_->tick();
  after_input();
}

void RaftDriver::step(const Message& m) {
  if (stopped_) return;
  core_->step(m);
  after_input();
}

void RaftDriver::broken_leader_connection() {
  if (stopped_) return;
  core_->broken_leader_connection();
  after_input();
}

void RaftDriver::after_input() {
  if (stopped_) return;
  pump();
  load_evicted_entries();
  manage_snapshot_bytes();
  notify_leader_change();
}

void RaftDriver::load_evicted_entries() {
  for (const RaftCore::EntryLoad& load : core_->take_entry_loads()) {
    io_.storage.load_entries(load.lo, load.hi, load.max_bytes,
                             [mb = mailbox_, this, to = load.to, lo = load.lo](Status s, std::vector<Entry> entries) {
                               if (!s.is_ok()) entries.clear();
                               Mailbox::post(mb, [this, to, lo, entries = std::move(entries)]() mutable {
                                 if (stopped_) return;
                                 core_->entries_loaded(to, lo, std::move(entries));
                                 after_input();
                               });
                             });
  }
}

ProposeResult RaftDriver::propose(std::string data) {
  if (!started_ || stopped_) return ProposeResult{RaftError::kNotLeader, 0, 0, 0};
  ProposeResult r = core_->propose(std::move(data));
  schedule_pump();
  return r;
}

RaftError RaftDriver::read_index(uint64_t context) {
  if (!started_ || stopped_) return RaftError::kNotLeader;
  RaftError e = core_->read_index(context);
  schedule_pump();
  return e;
}

ProposeResult RaftDriver::change_membership(const ConfChange& cc) {
  if (!started_ || stopped_) return ProposeResult{RaftError::kNotLeader, 0, 0, 0};
  ProposeResult r = core_->propose_conf_change(cc);
  schedule_pump();
  return r;
}

RaftError RaftDriver::transfer_leadership(NodeId to) {
  if (!started_ || stopped_) return RaftError::kNotLeader;
  RaftError e = core_->transfer_leadership(to);
  schedule_pump();
  return e;
}

void RaftDriver::snapshot_now(uint64_t keep_tail) {
  if (!started_ || stopped_) return;
  // Not inline: the request calls into the application, which may be the caller.
  Mailbox::post(mailbox_, [this, keep_tail] { request_snapshot(keep_tail); });
}

// ---------------------------------------------------------------- Ready processing

// Calls the application makes (propose, read_index, ...) do not process the Ready inline: the
// application would otherwise see its own callbacks (apply, on_leader_change) re-enter from inside
// its call. One posted pump serves every call made in the same task (more batching, too).
void RaftDriver::schedule_pump() {
  if (pump_posted_ || stopped_) return;
  pump_posted_ = true;
  Mailbox::post(mailbox_, [this] {
    pump_posted_ = false;
    after_input();
  });
}

RaftDriverStorage::Done RaftDriver::fatal_on_error(std::string what) {
  return [mb = mailbox_, this, what = std::move(what)](Status s) {
    if (s.is_ok()) return;
    Mailbox::post(mb, [this, what, s] { fail(what + ": " + s.to_string()); });
  };
}

// One Ready at a time (ready_in_flight_ covers the disk write and the application callbacks, so
// a proposal made from inside app.apply() simply waits for the next Ready). A loop, not
// recursion, handles consecutive Readies that need no disk wait.
void RaftDriver::pump() {
  while (!stopped_ && started_ && !ready_in_flight_ && core_->has_ready()) {
    auto rd = std::make_shared<Ready>(core_->ready());
    ready_in_flight_ = true;
    if (observer_) observer_->on_ready(*rd);
    for (const Message& m : rd->messages_now) io_.transport.send(m);

    // Chunks of a leader's snapshot need no fsync, but their acknowledgements wait for them
    // (messages_after_persist), so the leader sends the next chunk only once this one is written.
    if (rd->must_sync() || !rd->snapshot_chunks.empty()) {
      for (SnapshotChunk& chunk : rd->snapshot_chunks) {
        io_.storage.store_snapshot_chunk(std::move(chunk),
                                         fatal_on_error("writing a chunk of the leader's snapshot failed"));
      }
      if (rd->snapshot) {
        // A snapshot from the leader: stored first (the storage discards a log it does not
        // match), then read back to restore from (mapped: its bytes never fill the heap), then
        // the entries and hard state after it. Storage completes in order, so a failure here,
        // and the bytes, are seen before the write's completion.
        io_.storage.store_snapshot(*rd->snapshot, fatal_on_error("storing the leader's snapshot failed"));
        io_.storage.load_snapshot([mb = mailbox_, this, want = *rd->snapshot](Status s, SnapshotMeta meta,
                                                                              SnapshotBytes data) {
          Mailbox::post(mb, [this, want, s, meta, data] { received_snapshot_loaded(want, s, meta, data); });
        });
      }
      const Index first_unwritten =
          rd->entries.empty() ? std::numeric_limits<Index>::max() : rd->entries.front().index;
      io_.storage.write(std::move(rd->entries), rd->hard_state, /*need_sync=*/rd->must_sync(),
                        [mb = mailbox_, this, rd](Status s) {
                          Mailbox::post(mb, [this, rd, s = std::move(s)] { persisted(rd, s); });
                        });
      // After the write is handed over, so the fsync runs while these are applied.
      if (!rd->snapshot) apply_durable_committed(*rd, first_unwritten);
      return;
    }
    if (rd->has_writes()) {
      // Only the commit index moved: write it without waiting (losing it in a crash is safe; the
      // leader tells us again), but still surface a write error.
      io_.storage.write(std::move(rd->entries), rd->hard_state, /*need_sync=*/false,
                        fatal_on_error("persisting Raft hard state failed"));
    }
    finish_ready(*rd);
  }
}

void RaftDriver::persisted(const std::shared_ptr<Ready>& rd, const Status& s) {
  if (stopped_) return;
  if (!s.is_ok()) {
    fail("persisting Raft state failed: " + s.to_string());
    return;
  }
  finish_ready(*rd);
  after_input();
}

void RaftDriver::finish_ready(const Ready& rd) {
  for (const Message& m : rd.messages_after_persist) io_.transport.send(m);
  if (rd.snapshot) {
    const SnapshotMeta& meta = *rd.snapshot;
    if (!received_snapshot_) {  // its load failed (and stopped the driver) or never ran
      fail("the leader's snapshot at index " + std::to_string(meta.index) + " was not read back after storing it");
      return;
    }
    // The application may keep the mapping while it restores; from then on the bytes are on
    // disk only.
    app_.restore_snapshot(meta, std::move(received_snapshot_));
    received_snapshot_.reset();
    if (stopped_) return;
    applied_ = std::max(applied_, meta.index);
    last_snapshot_index_ = std::max(last_snapshot_index_, meta.index);
    applied_bytes_since_snapshot_ = 0;
    stored_snapshot_index_ = std::max(stored_snapshot_index_, meta.index);  // stored before this write
    applied_membership_ = meta.membership;
    app_.on_membership(applied_membership_);
    if (stopped_) return;
    if (observer_) observer_->on_snapshot_restored(meta, rd.snapshot_size);
  }
  apply_entries(rd.committed_entries);
  if (stopped_) return;
  for (const ReadState& rs : rd.read_states) {
    app_.on_read_state(rs.context, rs.index);
    if (stopped_) return;
    if (observer_) observer_->on_read_state(rs);
  }
  core_->advance(rd);
  ready_in_flight_ = false;
  if (deferred_snapshot_keep_tail_) {
    const uint64_t keep_tail = *deferred_snapshot_keep_tail_;
    deferred_snapshot_keep_tail_.reset();
    request_snapshot(keep_tail);
  }
  maybe_snapshot();
}

// Committed entries already on this node's disk need not wait for this Ready's fsync: they are
// durable on a majority (a leader counts its own match only once it is durable), so applying them
// now takes one fsync off a write's latency whenever proposals keep the disk busy (etcd's server
// applies in parallel with its WAL write too). They are applied after this Ready's write was
// handed to storage, so the storage thread's fsync and the application's work overlap. Entries
// this Ready itself writes (index >= first_unwritten) still wait: the simulation checks that no
// node applies what is not on its own disk.
void RaftDriver::apply_durable_committed(const Ready& rd, Index first_unwritten) {
  size_t n = 0;
  while (n < rd.committed_entries.size() && rd.committed_entries[n].index < first_unwritten) ++n;
  apply_entries(std::span<const Entry>(rd.committed_entries.data(), n));
}

void RaftDriver::apply_entries(std::span<const Entry> entries) {
  for (const Entry& e : entries) {
    if (e.index <= applied_) continue;  // already covered by a restored snapshot
    applied_ = e.index;
    applied_bytes_since_snapshot_ += entry_size(e);
    if (e.type == EntryType::kNormal) {
      app_.apply(e);
    } else if (e.type == EntryType::kConfChange) {
      app_.on_conf_change_applied(e.index);
      if (stopped_) return;
      auto cc = decode_conf_change(e.data);
      if (cc && apply_conf_change(applied_membership_, *cc)) {
        app_.on_membership(applied_membership_);
        if (!stopped_ && observer_) observer_->on_membership_applied(e.index, applied_membership_);
      }
    }
    if (stopped_) return;
    if (observer_) observer_->on_applied(e);
  }
}

// ---------------------------------------------------------------- snapshots

void RaftDriver::maybe_snapshot() {
  if (stopped_) return;
  const bool by_count =
      options_.snapshot_every > 0 && applied_ >= last_snapshot_index_ + options_.snapshot_every;
  const bool by_bytes =
      options_.snapshot_bytes > 0 && applied_bytes_since_snapshot_ >= options_.snapshot_bytes;
  if (!by_count && !by_bytes) return;
  request_snapshot(options_.keep_tail);
}

void RaftDriver::request_snapshot(uint64_t keep_tail) {
  if (stopped_ || snapshot_requested_) return;
  // The last one is not yet stored: asked now, the application would be offered the older
  // stored snapshot's file (own_snapshot_file), so it could not append to the newer one, and a
  // snapshot that came due during a long one was written whole again (docs/benchmarks.md).
  if (snapshot_storing_) {
    deferred_snapshot_keep_tail_ = keep_tail;
    return;
  }
  // The application's state is at applied_, and a snapshot must be labelled with exactly that
  // index. While committed entries applied early (apply_durable_committed) wait for their Ready
  // to finish, the core's applied index is behind and could not take a snapshot there: ask once
  // the Ready finished. (Labelling such a state with the core's lower index made a restore
  // replay entries already in it: sim seed 5410.)
  if (applied_ > core_->applied_index()) {
    deferred_snapshot_keep_tail_ = keep_tail;
    return;
  }
  const Index index = applied_;
  if (index <= last_snapshot_index_) return;
  snapshot_requested_ = true;
  // What is applied from now on counts towards the next one.
  applied_bytes_since_snapshot_ = 0;
  SnapshotReply reply = [mb = mailbox_, this, keep_tail](Index at, std::string data) {
    // Shared, not copied: the bytes can be the whole state machine.
    SnapshotBytes bytes = snapshot_in_memory(std::move(data));
    Mailbox::post(mb, [this, at, bytes, keep_tail] { snapshot_answered(at, bytes, keep_tail); });
  };
  std::optional<SnapshotFileTarget> target = io_.storage.own_snapshot_file();
  if (!target) {
    app_.request_snapshot(index, std::move(reply));
    return;
  }
  app_.request_snapshot_file(
      index, *target, std::move(reply),
      [mb = mailbox_, this, keep_tail](Index at, Status s, SnapshotFileWritten file) {
        // Answered after the driver went: the file stays until the storage's next open removes it.
        Mailbox::post(mb, [this, at, s, file, keep_tail] { snapshot_file_answered(at, s, file, keep_tail); });
      });
}

void RaftDriver::snapshot_answered(Index index, SnapshotBytes data, uint64_t keep_tail) {
  snapshot_requested_ = false;
  if (stopped_) return;
  const size_t bytes = data->size();
  SnapshotMeta meta = core_->snapshot_taken(index, data);
  if (!own_snapshot_accepted(index, meta)) return;
  const Index compact_to = own_snapshot_compact_point(meta, keep_tail);
  io_.storage.store_own_snapshot(meta, std::move(data), compact_to, own_snapshot_stored(index));
  own_snapshot_handed_to_storage(meta, bytes, compact_to);
}

void RaftDriver::snapshot_file_answered(Index index, const Status& s, const SnapshotFileWritten& file,
                                        uint64_t keep_tail) {
  snapshot_requested_ = false;
  if (stopped_) {
    if (s.is_ok()) io_.storage.discard_own_snapshot_file(file);
    return;
  }
  if (!s.is_ok()) {
    // A full disk: as when storing fails for it (below), the older snapshot and the whole log
    // stay; the next snapshot is tried after the usual number of entries.
    if (s.code() == Status::Code::kNoSpace) {
      last_snapshot_index_ = std::max(last_snapshot_index_, index);
      return;
    }
    // An append to the stored snapshot's file found it replaced (a leader's snapshot stored
    // meanwhile) and wrote nothing: that newer snapshot stands, and the next is tried as usual.
    if (s.code() == Status::Code::kSnapshotOutOfDate) {
      last_snapshot_index_ = std::max(last_snapshot_index_, index);
      return;
    }
    fail("writing the snapshot's file failed: " + s.to_string());
    return;
  }
  SnapshotMeta meta = core_->snapshot_taken_on_disk(index, file.size);
  if (!own_snapshot_accepted(index, meta)) {
    io_.storage.discard_own_snapshot_file(file);
    return;
  }
  const Index compact_to = own_snapshot_compact_point(meta, keep_tail);
  io_.storage.store_own_snapshot_file(meta, file, compact_to, own_snapshot_stored(index));
  own_snapshot_handed_to_storage(meta, file.size, compact_to);
}

bool RaftDriver::own_snapshot_accepted(Index index, const SnapshotMeta& meta) {
  // Counted as taken even if the core declined it, so a refusal cannot cause a snapshot per Ready.
  last_snapshot_index_ = std::max({last_snapshot_index_, meta.index, index});
  if (meta.index == index) return true;
  maybe_snapshot();  // the core holds a newer snapshot already (from the leader)
  return false;
}

Index RaftDriver::own_snapshot_compact_point(const SnapshotMeta& meta, uint64_t keep_tail) const {
  // The kept tail ends at the snapshot (the core keeps the entries up to it: snapshot_taken
  // refuses a snapshot behind the log's start).
  const RaftLog& log = core_->log();
  return meta.index <= log.last_index() && meta.index >= log.offset()
             ? log.tail_start(meta.index, keep_tail, options_.keep_tail_bytes)
             : (meta.index > keep_tail ? meta.index - keep_tail : 0);
}

RaftDriverStorage::Done RaftDriver::own_snapshot_stored(Index index) {
  snapshot_storing_ = true;
  return [mb = mailbox_, this, index](Status s) {
    Mailbox::post(mb, [this, index, s] {
      snapshot_storing_ = false;
      if (s.is_ok()) {
        stored_snapshot_index_ = std::max(stored_snapshot_index_, index);
        manage_snapshot_bytes();
      } else if (s.code() != Status::Code::kSnapshotOutOfDate && s.code() != Status::Code::kNoSpace) {
        // kSnapshotOutOfDate: a newer snapshot (the leader's) was stored meanwhile, so this one
        // is simply not needed. kNoSpace: the stored state stays the older snapshot and the
        // whole log after it (the compaction rides with the snapshot's write), which recovers
        // the same state; a later snapshot is tried as usual. (Of a snapshot taken on disk the
        // core has no bytes, so until that later one is stored, a follower that needs a
        // snapshot waits.)
        fail("storing snapshot failed: " + s.to_string());
        return;
      }
      // One asked for while this was being stored, or entries applied meanwhile.
      if (deferred_snapshot_keep_tail_) {
        const uint64_t keep_tail = *deferred_snapshot_keep_tail_;
        deferred_snapshot_keep_tail_.reset();
        request_snapshot(keep_tail);
      } else {
        maybe_snapshot();
      }
    });
  };
}

void RaftDriver::own_snapshot_handed_to_storage(const SnapshotMeta& meta, size_t bytes, Index compact_to) {
  compact_goal_ = std::max(compact_goal_, compact_to);
  compact_a_step();
  if (observer_) observer_->on_snapshot_taken(meta, bytes, compact_to);
  // Entries applied while the application worked on this one may already call for the next:
  // asked once this one is stored (own_snapshot_stored).
}

void RaftDriver::compact_a_step() {
  if (stopped_) return;
  const Index offset = core_->log().offset();
  if (compact_goal_ <= offset) return;
  const uint64_t step = options_.compact_step;
  core_->compact(step == 0 || compact_goal_ - offset <= step ? compact_goal_ : offset + step);
  // The core may stop short of the goal (it never compacts past its snapshot or applied index,
  // and a leader's snapshot may have replaced the log): go on only while a step made progress.
  if (compact_step_posted_ || core_->log().offset() == offset || compact_goal_ <= core_->log().offset()) return;
  compact_step_posted_ = true;
  Mailbox::post(mailbox_, [this] {
    compact_step_posted_ = false;
    compact_a_step();
  });
}

void RaftDriver::manage_snapshot_bytes() {
  if (stopped_) return;
  const Index index = core_->snapshot_meta().index;
  if (index == 0 || index > stored_snapshot_index_) return;  // not on disk yet: keep the bytes
  if (!core_->wants_snapshot_bytes()) {
    core_->drop_snapshot_bytes();
    return;
  }
  if (snapshot_load_in_flight_) return;
  snapshot_load_in_flight_ = true;
  io_.storage.load_snapshot([mb = mailbox_, this](Status s, SnapshotMeta meta, SnapshotBytes data) {
    Mailbox::post(mb, [this, s, meta, data] { snapshot_loaded(s, meta, data); });
  });
}

void RaftDriver::received_snapshot_loaded(const SnapshotMeta& want, const Status& s, const SnapshotMeta& meta,
                                          SnapshotBytes data) {
  if (stopped_) return;
  if (!s.is_ok()) {
    fail("reading the leader's snapshot back after storing it failed: " + s.to_string());
    return;
  }
  if (!(meta == want) || !data) {
    fail("the snapshot stored is not the leader's at index " + std::to_string(want.index));
    return;
  }
  received_snapshot_ = std::move(data);
}

void RaftDriver::snapshot_loaded(const Status& s, const SnapshotMeta& meta, SnapshotBytes data) {
  snapshot_load_in_flight_ = false;
  if (stopped_) return;
  if (!s.is_ok()) {
    fail("reading the stored snapshot back failed: " + s.to_string());
    return;
  }
  // Bytes of an older snapshot (a newer one was stored meanwhile) are ignored by the core,
  // which keeps asking: the next input loads again.
  if (observer_ && data) observer_->on_snapshot_loaded(meta, data->size());
  core_->snapshot_bytes_loaded(meta, std::move(data));
  after_input();
}

void RaftDriver::notify_leader_change() {
  if (stopped_) return;
  const NodeId lead = core_->leader();
  const Term term = core_->term();
  const bool self = core_->role() == Role::kLeader;
  if (lead == notified_leader_ && term == notified_term_ && self == notified_self_leader_) return;
  notified_leader_ = lead;
  notified_term_ = term;
  notified_self_leader_ = self;
  app_.on_leader_change(lead, term, self);
  if (!stopped_ && observer_) observer_->on_leader_change(lead, term, self);
}

}  // namespace zkraft::consensus
