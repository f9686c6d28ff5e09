#include "consensus/log_storage.h"

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/write_batch.h>
#include <spdlog/spdlog.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "consensus/invariant.h"
#include "consensus/log_append_rule.h"
#include "consensus/storage_crc32c.h"

namespace zkraft::consensus {

using namespace storage;  // NOLINT: the codec is this file's vocabulary

namespace {

// A snapshot file is written and read in pieces of this size.
constexpr size_t kSnapshotWriteBytes = 1 << 20;

std::string describe(const leveldb::Status& s) { return s.ToString(); }

// LevelDB's PosixEnv reports errno as strerror text; ENOSPC is the one failure worth waiting out.
bool is_no_space(const leveldb::Status& s) {
  return s.IsIOError() && s.ToString().find("No space left on device") != std::string::npos;
}

Status file_error(const std::string& what, const leveldb::Status& s) {
  const std::string m = what + ": " + describe(s);
  return is_no_space(s) ? Status::error(Status::Code::kNoSpace, m) : Status::io_error(m);
}

Status sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::io_error("opening directory " + dir + ": " + std::strerror(errno));
  const int r = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (r != 0) {
    const std::string m = "syncing directory " + dir + ": " + std::strerror(err);
    return err == ENOSPC ? Status::error(Status::Code::kNoSpace, m) : Status::io_error(m);
  }
  return Status::ok();
}

leveldb::Options db_options(const StorageOptions& options, leveldb::Cache* cache) {
  leveldb::Options lo;
  lo.create_if_missing = options.create_if_missing;
  // A torn LevelDB log tail must not stop start-up: LevelDB drops the damaged record and our own
  // per-entry checksums and contiguity scan decide what is really corrupt.
  lo.paranoid_checks = false;
  lo.write_buffer_size = options.write_buffer_size;
  if (options.env != nullptr) lo.env = options.env;
  lo.block_cache = cache;
  return lo;
}

}  // namespace

LogStorage::LogStorage(std::string dir, const StorageOptions& options)
    : dir_(std::move(dir)), options_(options) {}

LogStorage::~LogStorage() = default;

std::unique_ptr<LogStorage> LogStorage::open(const std::string& dir, const StorageOptions& options,
                                             std::string* error) {
  std::unique_ptr<LogStorage> st(new LogStorage(dir, options));
  if (options.block_cache_bytes > 0) st->block_cache_.reset(leveldb::NewLRUCache(options.block_cache_bytes));
  leveldb::Options lo = db_options(options, st->block_cache_.get());
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(lo, dir, &db);
  if (!s.ok()) {
    if (error) *error = "cannot open log storage in " + dir + ": " + describe(s);
    return nullptr;
  }
  st->db_.reset(db);
  Status r = st->recover();
  if (!r.is_ok()) {
    if (error) *error = "log storage in " + dir + ": " + r.message();
    return nullptr;
  }
  return st;
}

Status LogStorage::write(leveldb::WriteBatch* batch, bool sync) {
  if (Status r = reopen_if_needed(); !r.is_ok()) return r;
  leveldb::WriteOptions wo;
  wo.sync = sync;
  leveldb::Status s = db_->Write(wo, batch);
  if (is_no_space(s)) {
    needs_reopen_ = true;
    return Status::error(Status::Code::kNoSpace, "write to " + dir_ + " failed: " + describe(s));
  }
  if (!s.ok()) return Status::io_error("write to " + dir_ + " failed: " + describe(s));
  return Status::ok();
}

Status LogStorage::reopen_if_needed() {
  if (!needs_reopen_) return Status::ok();
  // The last write ran out of space: nothing is written to that LevelDB instance again.
  if (Status r = reopen(); !r.is_ok()) return r;
  needs_reopen_ = false;
  return Status::ok();
}

Status LogStorage::reopen() {
  std::unique_lock lock(db_mu_);
  db_.reset();  // closes: LevelDB waits for its background work
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(db_options(options_, block_cache_.get()), dir_, &db);
  if (!s.ok()) {
    // Readers must not find db_ null: they are told to wait (they hold db_mu_ shared) until a
    // later reopen succeeds. Until then reads fail as unavailable.
    const std::string m = "reopening " + dir_ + ": " + describe(s);
    return is_no_space(s) ? Status::error(Status::Code::kNoSpace, m) : Status::io_error(m);
  }
  db_.reset(db);
  return Status::ok();
}

Status LogStorage::recover() {
  leveldb::ReadOptions ro;
  std::string value;

  // Format marker: a fresh database gets one; anything else must already carry ours.
  leveldb::Status s = db_->Get(ro, leveldb::Slice(kFormatKey.data(), kFormatKey.size()), &value);
  if (s.IsNotFound()) {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
    it->SeekToFirst();
    if (it->Valid()) return Status::corruption("database has data but no zkraft format marker");
    leveldb::WriteBatch b;
    b.Put(leveldb::Slice(kFormatKey.data(), kFormatKey.size()),
          leveldb::Slice(kFormatV1.data(), kFormatV1.size()));
    Status w = write(&b, true);
    if (!w.is_ok()) return w;
  } else if (!s.ok()) {
    return Status::io_error("reading format marker: " + describe(s));
  } else if (value != kFormatV1) {
    return Status::corruption("unknown log format '" + value + "'");
  }

  auto read_record = [&](std::string_view key, std::string* out) -> Status {
    leveldb::Status rs = db_->Get(ro, leveldb::Slice(key.data(), key.size()), out);
    if (rs.IsNotFound()) return Status::unavailable("");
    if (!rs.ok()) return Status::io_error(describe(rs));
    return Status::ok();
  };

  Status r = read_record(kHardStateKey, &value);
  if (r.is_ok()) {
    if (!decode_hard_state(value, &hard_state_)) return Status::corruption("hard state record is corrupt");
  } else if (r.code() != Status::Code::kUnavailable) {
    return r;
  }

  FirstIndexMarker marker;
  r = read_record(kFirstIndexKey, &value);
  if (r.is_ok()) {
    if (!decode_first_index(value, &marker)) return Status::corruption("first-index marker is corrupt");
  } else if (r.code() != Status::Code::kUnavailable) {
    return r;
  }

  r = read_record(kSnapshotMetaKey, &value);
  if (r.is_ok()) {
    SnapshotRecord rec;
    if (!decode_snapshot_record(value, &rec)) return Status::corruption("snapshot metadata is corrupt");
    snapshot_ = rec;
  } else if (r.code() != Status::Code::kUnavailable) {
    return r;
  }

  leveldb::WriteBatch cleanup;
  bool need_cleanup = false;

  // Snapshot chunks of any generation but the published one are leftovers of a save that crashed
  // before publishing, or of an old snapshot whose deletion was lost.
  {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
    uint64_t max_gen = snapshot_ ? snapshot_->generation : 0;
    for (it->Seek(std::string(1, kSnapshotChunkPrefix)); it->Valid(); it->Next()) {
      leveldb::Slice k = it->key();
      if (k.empty() || k[0] != kSnapshotChunkPrefix) break;
      auto gen = parse_snapshot_chunk_generation(std::string_view(k.data(), k.size()));
      if (gen) max_gen = std::max(max_gen, *gen);
      if (gen && snapshot_ && *gen == snapshot_->generation) {
        // The published chunks stay: seek past them rather than step through them, which would
        // read and decompress the whole snapshot (~170 MB for 1,000,000 znodes) only to skip
        // it; load_snapshot reads it once, when it is wanted.
        if (*gen == UINT64_MAX) break;
        it->Seek(snapshot_generation_prefix(*gen + 1));
        if (!it->Valid()) break;
        k = it->key();
        if (k.empty() || k[0] != kSnapshotChunkPrefix) break;
        gen = parse_snapshot_chunk_generation(std::string_view(k.data(), k.size()));
        if (gen) max_gen = std::max(max_gen, *gen);
      }
      if (!gen || !snapshot_ || *gen != snapshot_->generation) {
        cleanup.Delete(k);
        need_cleanup = true;
      }
    }
    if (Status f = sweep_snapshot_files(&max_gen); !f.is_ok()) return f;
    next_snapshot_generation_.store(max_gen + 1);
  }

  // Scan every entry from the first kept index: contiguous, checksummed, terms never decreasing.
  Index expected = marker.first_index;
  Term last_term = marker.prev_term;
  std::optional<Index> damaged_from;  // first index of a damaged run after the last good entry
  std::string damage;
  size_t damaged_records = 0;
  {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
    for (it->Seek(entry_key(marker.first_index)); it->Valid(); it->Next()) {
      leveldb::Slice k = it->key();
      if (k.empty() || k[0] != kEntryPrefix) break;
      std::string_view key(k.data(), k.size());
      std::string_view val(it->value().data(), it->value().size());
      auto idx = parse_entry_key(key);
      Term t = 0;
      bool good = idx && decode_entry_term(*idx, val, &t);
      if (good && !damaged_from && *idx == expected) {
        if (t < last_term) {
          return Status::corruption("log entry " + std::to_string(*idx) + " has term " +
                                    std::to_string(t) + " below the previous entry's term " +
                                    std::to_string(last_term));
        }
        last_term = t;
        ++expected;
        continue;
      }
      if (good) {
        // A good entry after a damaged or missing one: this is not a torn write but lost data.
        Index bad = damaged_from ? *damaged_from : expected;
        std::string why = damaged_from ? damage : "missing";
        return Status::corruption("log entry at index " + std::to_string(bad) + " is " + why +
                                  " but entry " + std::to_string(*idx) +
                                  " after it is intact; refusing to start");
      }
      if (!damaged_from) {
        damaged_from = expected;
        damage = idx ? (*idx == expected ? "damaged (checksum mismatch or unparseable)"
                                         : "missing")
                     : "damaged (malformed key)";
      }
      cleanup.Delete(k);
      need_cleanup = true;
      ++damaged_records;
    }
  }
  if (damaged_from) {
    spdlog::warn("log storage {}: truncating damaged log tail from index {} ({} record(s), first "
                 "one {}); keeping entries {}..{}",
                 dir_, *damaged_from, damaged_records, damage, marker.first_index, expected - 1);
  }
  if (need_cleanup) {
    Status w = write(&cleanup, true);
    if (!w.is_ok()) return w;
  }

  first_index_.store(marker.first_index, std::memory_order_release);
  last_index_.store(expected - 1, std::memory_order_release);
  prev_term_ = marker.prev_term;

  Index known = std::max<Index>(expected - 1, snapshot_ ? snapshot_->meta.index : 0);
  if (hard_state_.commit > known) {
    spdlog::error("log storage {}: hard state commit index {} is beyond the last stored entry {}",
                  dir_, hard_state_.commit, known);
  }
  return Status::ok();
}

Status LogStorage::sweep_snapshot_files(uint64_t* max_generation) {
  std::vector<std::string> names;
  if (leveldb::Status s = env()->GetChildren(dir_, &names); !s.ok()) {
    return Status::io_error("listing " + dir_ + ": " + describe(s));
  }
  const std::optional<uint64_t> stored =
      snapshot_ && snapshot_->in_file ? std::optional<uint64_t>(snapshot_->generation) : std::nullopt;
  for (const std::string& name : names) {
    const std::optional<uint64_t> gen = parse_snapshot_file_name(name);
    if (!gen) continue;
    *max_generation = std::max(*max_generation, *gen);
    if (gen == stored) continue;
    // Written by a snapshot that was never published (a crash, or a newer one won), or the data
    // of an older one whose removal was lost.
    if (leveldb::Status d = env()->RemoveFile(dir_ + "/" + name); !d.ok()) {
      spdlog::warn("log storage {}: removing the unused snapshot file {}: {}", dir_, name, d.ToString());
    }
  }
  if (stored) {
    uint64_t size = 0;
    const std::string path = snapshot_path(*stored);
    if (leveldb::Status s = env()->GetFileSize(path, &size); !s.ok()) {
      return Status::corruption("the stored snapshot's data " + path + " is missing: " + describe(s));
    }
    if (size != snapshot_->data_size) {
      return Status::corruption("the stored snapshot's data " + path + " has " + std::to_string(size) +
                                " bytes, its record says " + std::to_string(snapshot_->data_size));
    }
  }
  return Status::ok();
}

Status LogStorage::append(const std::vector<Entry>& entries, const HardState* hs, bool sync) {
  if (Status r = reopen_if_needed(); !r.is_ok()) return r;
  const Index first = first_index();
  const Index last = last_index();
  if (Status bad = check_append_run(entries, first, last); !bad.is_ok()) return bad;
  size_t skip = 0;
  if (!entries.empty() && entries[0].index < first) {
    // Already covered by the snapshot (Raft can resend committed entries).
    skip = std::min<size_t>(entries.size(), first - entries[0].index);
  }
  leveldb::WriteBatch batch;
  Index new_last = last;
  if (skip < entries.size()) {
    const Index start = entries[skip].index;
    // Before the write, the same rules recover() checks after reading the log back: the run
    // continues the log after the snapshot, without a gap, and terms never decrease. A write that
    // broke them would make the log refuse to open (or silently lose its tail) after a restart.
    ZKRAFT_INVARIANT(start >= first, "a log write never touches entries the snapshot covers");
    ZKRAFT_INVARIANT(start <= last + 1, "a log write never leaves a gap");
    Term prev = 0;
    if (Status t = term(start - 1, &prev); !t.is_ok()) return t;
    for (size_t i = skip; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      ZKRAFT_INVARIANT(e.index == start + (i - skip), "log entries are written contiguously");
      ZKRAFT_INVARIANT(e.term >= prev, "log terms never decrease");
      prev = e.term;
      batch.Put(entry_key(e.index), encode_entry_value(e));
    }
    new_last = entries.back().index;
    // Conflict truncation: the old suffix beyond the new last entry goes in the same batch.
    for (Index i = new_last + 1; i <= last; ++i) batch.Delete(entry_key(i));
  }
  if (hs != nullptr) batch.Put(leveldb::Slice(kHardStateKey.data(), kHardStateKey.size()), encode_hard_state(*hs));
  if (batch.ApproximateSize() <= leveldb::WriteBatch().ApproximateSize()) return Status::ok();
  Status s = write(&batch, sync);
  if (!s.is_ok()) return s;
  std::unique_lock lock(meta_mu_);
  last_index_.store(new_last, std::memory_order_release);
  if (hs != nullptr) hard_state_ = *hs;
  return Status::ok();
}

Status LogStorage::term(Index index, Term* out) const {
  std::shared_lock db_lock(db_mu_);
  if (!db_) return Status::unavailable("log storage in " + dir_ + " is closed until the disk has space");
  Index first, last;
  {
    std::shared_lock lock(meta_mu_);
    first = first_index();
    last = last_index();
    if (index + 1 == first) {
      *out = prev_term_;
      return Status::ok();
    }
  }
  if (index < first) return Status::compacted("index " + std::to_string(index) + " is compacted");
  if (index > last) return Status::unavailable("index " + std::to_string(index) + " is beyond the log");
  std::string value;
  leveldb::Status s = db_->Get(leveldb::ReadOptions(), entry_key(index), &value);
  if (s.IsNotFound()) {
    // Raced with a compaction or truncation on the storage thread.
    if (index < first_index()) return Status::compacted("index " + std::to_string(index) + " is compacted");
    return Status::unavailable("index " + std::to_string(index) + " is beyond the log");
  }
  if (!s.ok()) return Status::io_error(describe(s));
  if (!decode_entry_term(index, value, out)) {
    return Status::corruption("log entry " + std::to_string(index) + " in " + dir_ + " is corrupt");
  }
  return Status::ok();
}

Status LogStorage::entries(Index lo, Index hi, uint64_t max_bytes, std::vector<Entry>* out) const {
  std::shared_lock db_lock(db_mu_);
  if (!db_) return Status::unavailable("log storage in " + dir_ + " is closed until the disk has space");
  if (lo > hi) return Status::invalid_argument("entries: lo > hi");
  if (lo == hi) return Status::ok();
  if (lo < first_index()) return Status::compacted("index " + std::to_string(lo) + " is compacted");
  if (hi > last_index() + 1) {
    return Status::unavailable("index " + std::to_string(hi - 1) + " is beyond the log");
  }
  leveldb::ReadOptions ro;
  const leveldb::Snapshot* snap = db_->GetSnapshot();
  ro.snapshot = snap;
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
  Status result = Status::ok();
  uint64_t bytes = 0;
  size_t added = 0;
  it->Seek(entry_key(lo));
  for (Index i = lo; i < hi; ++i, it->Next()) {
    if (!it->Valid() || parse_entry_key(std::string_view(it->key().data(), it->key().size())) != i) {
      result = i < first_index() ? Status::compacted("index " + std::to_string(i) + " is compacted")
                                 : Status::unavailable("index " + std::to_string(i) + " is gone");
      break;
    }
    Entry e;
    if (!decode_entry_value(i, std::string_view(it->value().data(), it->value().size()), &e)) {
      result = Status::corruption("log entry " + std::to_string(i) + " in " + dir_ + " is corrupt");
      break;
    }
    // After the read (the CRC, which covers the index, is checked by the decoder).
    ZKRAFT_INVARIANT(e.index == i, "the entry read is the one asked for");
    ZKRAFT_INVARIANT(added == 0 || e.term >= out->back().term, "log terms never decrease");
    if (added > 0 && bytes + e.data.size() > max_bytes) break;
    bytes += e.data.size();
    out->push_back(std::move(e));
    ++added;
  }
  it.reset();
  db_->ReleaseSnapshot(snap);
  return result;
}

HardState LogStorage::hard_state() const {
  std::shared_lock lock(meta_mu_);
  return hard_state_;
}

std::optional<SnapshotMeta> LogStorage::snapshot_meta() const {
  std::shared_lock lock(meta_mu_);
  if (!snapshot_) return std::nullopt;
  return snapshot_->meta;
}

Status LogStorage::check_snapshot_is_newer(const SnapshotMeta& meta) const {
  std::optional<Index> stored;
  {
    std::shared_lock lock(meta_mu_);
    if (snapshot_) stored = snapshot_->meta.index;
  }
  if (stored && meta.index < *stored) {
    return Status::error(Status::Code::kSnapshotOutOfDate,
                         "snapshot at " + std::to_string(meta.index) + " is older than stored " +
                             std::to_string(*stored));
  }
  if (meta.index + 1 < first_index()) {
    return Status::error(Status::Code::kSnapshotOutOfDate,
                         "snapshot at " + std::to_string(meta.index) + " is below the log start " +
                             std::to_string(first_index()));
  }
  return Status::ok();
}

leveldb::Env* LogStorage::env() const { return options_.env != nullptr ? options_.env : leveldb::Env::Default(); }

std::string LogStorage::snapshot_path(uint64_t generation) const {
  return dir_ + "/" + snapshot_file_name(generation);
}

Status LogStorage::save_snapshot(const SnapshotMeta& meta, std::string_view data) {
  PreparedSnapshot prepared;
  if (Status s = write_snapshot_data(meta, data, &prepared); !s.is_ok()) return s;
  return publish_snapshot(prepared);
}

Status LogStorage::write_snapshot_data(const SnapshotMeta& meta, std::string_view data, PreparedSnapshot* out,
                                       const std::atomic<bool>* abandon) {
  if (Status s = check_snapshot_is_newer(meta); !s.is_ok()) return s;
  SnapshotRecord rec;
  rec.meta = meta;
  rec.generation = next_snapshot_generation_.fetch_add(1);
  rec.data_size = data.size();
  rec.in_file = true;
  const std::string path = snapshot_path(rec.generation);
  leveldb::WritableFile* raw = nullptr;
  leveldb::Status ls = env()->NewWritableFile(path, &raw);
  if (!ls.ok()) return file_error("creating " + path, ls);
  std::unique_ptr<leveldb::WritableFile> file(raw);
  Status result = Status::ok();
  uint32_t crc = 0;
  const size_t sync_every = std::max<size_t>(options_.snapshot_sync_bytes, 1);
  size_t unsynced = 0;
  for (size_t off = 0; off < data.size();) {
    if (abandon != nullptr && abandon->load(std::memory_order_acquire)) {
      result = Status::closed("writing snapshot " + path + " abandoned");
      break;
    }
    const size_t len = std::min({kSnapshotWriteBytes, sync_every - unsynced, data.size() - off});
    crc = crc32c_extend(crc, data.data() + off, len);
    ls = file->Append(leveldb::Slice(data.data() + off, len));
    if (!ls.ok()) {
      result = file_error("writing " + path, ls);
      break;
    }
    off += len;
    unsynced += len;
    if (unsynced == sync_every) {
      ls = file->Sync();
      if (!ls.ok()) {
        result = file_error("syncing " + path, ls);
        break;
      }
      unsynced = 0;
    }
  }
  if (result.is_ok()) {
    ls = file->Sync();
    if (!ls.ok()) result = file_error("syncing " + path, ls);
  }
  if (result.is_ok()) {
    ls = file->Close();
    if (!ls.ok()) result = file_error("closing " + path, ls);
  }
  file.reset();
  // The file's name must be durable before a record naming it is.
  if (result.is_ok()) result = sync_directory(dir_);
  if (!result.is_ok()) {
    env()->RemoveFile(path);
    return result;
  }
  rec.data_crc = crc;
  out->record = rec;
  return Status::ok();
}

Status LogStorage::publish_snapshot(const PreparedSnapshot& prepared) {
  const SnapshotRecord& rec = prepared.record;
  ZKRAFT_INVARIANT(rec.in_file, "a prepared snapshot's data is in its file");
  // On failure the file stays until the next open() removes it (nothing names it).
  if (Status r = reopen_if_needed(); !r.is_ok()) return r;
  if (Status s = check_snapshot_is_newer(rec.meta); !s.is_ok()) {
    env()->RemoveFile(snapshot_path(rec.generation));
    return s;
  }
  std::optional<SnapshotRecord> old;
  {
    std::shared_lock lock(meta_mu_);
    old = snapshot_;
  }
  const SnapshotMeta& meta = rec.meta;
  Term t = 0;
  const bool keep_log = term(meta.index, &t).is_ok() && t == meta.term;
  const Index first = first_index();
  const Index last = last_index();
  leveldb::WriteBatch batch;
  if (!keep_log) {
    for (Index i = first; i <= last; ++i) batch.Delete(entry_key(i));
    batch.Put(leveldb::Slice(kFirstIndexKey.data(), kFirstIndexKey.size()),
              encode_first_index(FirstIndexMarker{meta.index + 1, meta.term}));
  }
  batch.Put(leveldb::Slice(kSnapshotMetaKey.data(), kSnapshotMetaKey.size()), encode_snapshot_record(rec));
  // A failed write may still have reached the disk: the file stays, and open() keeps it if the
  // record did.
  if (Status s = write(&batch, true); !s.is_ok()) return s;
  {
    std::unique_lock lock(meta_mu_);
    snapshot_ = rec;
    if (!keep_log) {
      first_index_.store(meta.index + 1, std::memory_order_release);
      last_index_.store(meta.index, std::memory_order_release);
      prev_term_ = meta.term;
    }
  }

  // The old data is unreachable now; removing it may be lost in a crash (open() sweeps it).
  if (old && old->in_file) {
    leveldb::Status d = env()->RemoveFile(snapshot_path(old->generation));
    if (!d.ok()) spdlog::warn("log storage {}: removing the old snapshot's file: {}", dir_, d.ToString());
  } else if (old) {
    leveldb::WriteBatch del;
    for (uint64_t n = 0; n < old->chunk_count; ++n) del.Delete(snapshot_chunk_key(old->generation, n));
    Status d = write(&del, false);
    if (!d.is_ok()) spdlog::warn("log storage {}: dropping old snapshot chunks: {}", dir_, d.to_string());
  }
  return Status::ok();
}

Status LogStorage::load_snapshot(SnapshotMeta* meta, std::string* data) const {
  std::shared_lock db_lock(db_mu_);
  if (!db_) return Status::unavailable("log storage in " + dir_ + " is closed until the disk has space");
  std::optional<SnapshotRecord> rec;
  const leveldb::Snapshot* snap = nullptr;
  std::unique_ptr<leveldb::SequentialFile> file;
  {
    // Opening the file, or taking the LevelDB snapshot, under the lock pins this record's data: a
    // newer publish removes the old data only after it has swapped the record under the exclusive
    // lock (and an open file outlives its removal).
    std::shared_lock lock(meta_mu_);
    rec = snapshot_;
    if (rec && rec->in_file) {
      leveldb::SequentialFile* raw = nullptr;
      leveldb::Status s = env()->NewSequentialFile(snapshot_path(rec->generation), &raw);
      if (!s.ok()) return Status::io_error("opening the snapshot's data: " + describe(s));
      file.reset(raw);
    } else if (rec) {
      snap = db_->GetSnapshot();
    }
  }
  if (!rec) return Status::unavailable("no snapshot stored");
  std::string out;
  Status result = Status::ok();
  uint32_t crc = 0;
  if (file) {
    // Straight into the result, one piece at a time, checksummed while each is in cache.
    out.resize(rec->data_size);
    size_t off = 0;
    while (off < out.size()) {
      leveldb::Slice got;
      const size_t want = std::min(kSnapshotWriteBytes, out.size() - off);
      leveldb::Status s = file->Read(want, &got, out.data() + off);
      if (!s.ok()) return Status::io_error("reading the snapshot's data: " + describe(s));
      if (got.empty()) break;  // shorter than the record says
      if (got.data() != out.data() + off) std::memcpy(out.data() + off, got.data(), got.size());
      crc = crc32c_extend(crc, out.data() + off, got.size());
      off += got.size();
    }
    char extra = 0;
    leveldb::Slice more;
    if (off < out.size() || !file->Read(1, &more, &extra).ok() || !more.empty()) {
      return Status::corruption("snapshot at index " + std::to_string(rec->meta.index) + " in " + dir_ +
                                ": its file does not have the " + std::to_string(rec->data_size) +
                                " bytes its record says");
    }
  } else {
    leveldb::ReadOptions ro;
    ro.snapshot = snap;
    // Read once, start to end: keeping the chunks in the block cache would only evict the log.
    ro.fill_cache = false;
    out.reserve(rec->data_size);
    {
      // One iterator over the generation's chunks (keys sort by chunk number): each value is
      // appended straight from LevelDB's block, and checksummed while it is still in cache.
      std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
      it->Seek(snapshot_chunk_key(rec->generation, 0));
      for (uint64_t n = 0; n < rec->chunk_count; ++n, it->Next()) {
        const std::string want = snapshot_chunk_key(rec->generation, n);
        if (!it->Valid() || it->key() != leveldb::Slice(want)) {
          result = it->status().ok() ? Status::corruption("snapshot chunk " + std::to_string(n) + " is missing")
                                     : Status::io_error(describe(it->status()));
          break;
        }
        leveldb::Slice v = it->value();
        crc = crc32c_extend(crc, v.data(), v.size());
        out.append(v.data(), v.size());
      }
    }
    db_->ReleaseSnapshot(snap);
  }
  if (!result.is_ok()) return result;
  if (out.size() != rec->data_size || crc != rec->data_crc) {
    return Status::corruption("snapshot at index " + std::to_string(rec->meta.index) + " in " + dir_ +
                              " fails its checksum");
  }
  *meta = rec->meta;
  *data = std::move(out);
  return Status::ok();
}

Status LogStorage::compact(Index through) {
  if (Status r = reopen_if_needed(); !r.is_ok()) return r;
  const Index first = first_index();
  if (through < first) return Status::ok();  // already compacted
  {
    std::shared_lock lock(meta_mu_);
    if (!snapshot_ || through > snapshot_->meta.index) {
      return Status::invalid_argument("compact through " + std::to_string(through) +
                                      " is not covered by a snapshot");
    }
  }
  if (through > last_index()) {
    return Status::invalid_argument("compact through " + std::to_string(through) +
                                    " is beyond the last index " + std::to_string(last_index()));
  }
  Term t = 0;
  Status s = term(through, &t);
  if (!s.is_ok()) return s;
  leveldb::WriteBatch batch;
  for (Index i = first; i <= through; ++i) batch.Delete(entry_key(i));
  batch.Put(leveldb::Slice(kFirstIndexKey.data(), kFirstIndexKey.size()),
            encode_first_index(FirstIndexMarker{through + 1, t}));
  s = write(&batch, false);
  if (!s.is_ok()) return s;
  std::unique_lock lock(meta_mu_);
  first_index_.store(through + 1, std::memory_order_release);
  prev_term_ = t;
  return Status::ok();
}

}  // namespace zkraft::consensus
