#include "consensus/log_storage.h"

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/write_batch.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

#include "consensus/invariant.h"
#include "consensus/log_append_rule.h"
#include "consensus/log_storage_errors.h"

namespace zkraft::consensus {

using namespace storage;  // NOLINT: the codec is this file's vocabulary

namespace {

// Old snapshot files are shrunk this much at a time before they are removed (file_remover.h).
constexpr uint64_t kRemoveStepBytes = 4 << 20;
constexpr std::chrono::milliseconds kRemoveStepPause{4};

leveldb::Options db_options(const StorageOptions& options, leveldb::Env* env, leveldb::Cache* cache) {
  leveldb::Options lo;
  lo.create_if_missing = options.create_if_missing;
  // A torn LevelDB log tail must not stop start-up: LevelDB drops the damaged record and our own
  // per-entry checksums and contiguity scan decide what is really corrupt.
  lo.paranoid_checks = false;
  lo.write_buffer_size = options.write_buffer_size;
  lo.env = env;
  lo.block_cache = cache;
  return lo;
}

}  // namespace

LogStorage::LogStorage(std::string dir, const StorageOptions& options)
    : dir_(std::move(dir)),
      options_(options),
      table_env_(std::make_unique<PreadEnv>(options.env != nullptr ? options.env : leveldb::Env::Default())),
      // A test's environment (options.env: the crash simulation's) must see every write-ahead
      // write, so preallocation is for real files only.
      db_env_(options.env == nullptr ? std::make_unique<PreallocEnv>(table_env_.get()) : nullptr),
      remover_(std::make_unique<FileRemover>([this](const std::string& path) {
        shrink_in_steps(path, kRemoveStepBytes, kRemoveStepPause);
        leveldb::Status s = env()->RemoveFile(path);
        return s.ok() ? std::string() : s.ToString();
      })) {}

void LogStorage::wait_for_file_removals() { remover_->wait_idle(); }

LogStorage::~LogStorage() = default;

std::unique_ptr<LogStorage> LogStorage::open(const std::string& dir, const StorageOptions& options,
                                             std::string* error) {
  std::unique_ptr<LogStorage> st(new LogStorage(dir, options));
  if (options.block_cache_bytes > 0) st->block_cache_.reset(leveldb::NewLRUCache(options.block_cache_bytes));
  leveldb::Options lo = db_options(options, st->db_env(), st->block_cache_.get());
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
  leveldb::Status s = leveldb::DB::Open(db_options(options_, db_env(), block_cache_.get()), dir_, &db);
  if (!s.ok()) {
    // Readers must not find db_ null: they are told to wait (they hold db_mu_ shared) until a
    // later reopen succeeds. Until then reads fail as unavailable.
    return leveldb_error("reopening " + dir_, s);
  }
  db_.reset(db);
  return Status::ok();
}

Status LogStorage::recover() {
  leveldb::ReadOptions ro;
  std::string value;

  // Format marker: a fresh database gets one; anything else must already carry ours, or v1's
  // (moved to v2 below, in the same batch as any other repair).
  auto read_key = [&](std::string_view key, std::string* out) -> leveldb::Status {
    return db_->Get(ro, leveldb::Slice(key.data(), key.size()), out);
  };
  bool from_v1 = false;
  leveldb::Status s = read_key(kFormatKey, &value);
  if (s.IsNotFound()) {
    s = read_key(v1::kFormatKey, &value);
    if (s.ok() && value != v1::kFormat) return Status::corruption("unknown log format '" + value + "'");
    from_v1 = s.ok();
  }
  if (s.IsNotFound()) {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
    it->SeekToFirst();
    if (it->Valid()) return Status::corruption("database has data but no zkraft format marker");
    leveldb::WriteBatch b;
    b.Put(leveldb::Slice(kFormatKey.data(), kFormatKey.size()),
          leveldb::Slice(kFormatV2.data(), kFormatV2.size()));
    Status w = write(&b, true);
    if (!w.is_ok()) return w;
  } else if (!s.ok()) {
    return Status::io_error("reading format marker: " + describe(s));
  } else if (!from_v1 && value != kFormatV2) {
    return Status::corruption("unknown log format '" + value + "'");
  }
  const std::string_view first_index_key = from_v1 ? v1::kFirstIndexKey : kFirstIndexKey;
  const std::string_view snapshot_meta_key = from_v1 ? v1::kSnapshotMetaKey : kSnapshotMetaKey;

  auto read_record = [&](std::string_view key, std::string* out) -> Status {
    leveldb::Status rs = db_->Get(ro, leveldb::Slice(key.data(), key.size()), out);
    if (rs.IsNotFound()) return Status::unavailable("");
    if (!rs.ok()) return Status::io_error(describe(rs));
    return Status::ok();
  };

  // v2 keeps the hard state among the entries (found by the scan below); v1 under one key.
  std::optional<HardState> v1_hard_state;
  Status r = Status::ok();
  if (from_v1) {
    r = read_record(v1::kHardStateKey, &value);
    if (r.is_ok()) {
      HardState hs;
      if (!decode_hard_state(value, &hs)) return Status::corruption("hard state record is corrupt");
      v1_hard_state = hs;
    } else if (r.code() != Status::Code::kUnavailable) {
      return r;
    }
  }

  FirstIndexMarker marker;
  std::optional<std::string> v1_first_index_value;
  r = read_record(first_index_key, &value);
  if (r.is_ok()) {
    if (!decode_first_index(value, &marker)) return Status::corruption("first-index marker is corrupt");
    if (from_v1) v1_first_index_value = value;
  } else if (r.code() != Status::Code::kUnavailable) {
    return r;
  }

  std::optional<std::string> v1_snapshot_meta_value;
  r = read_record(snapshot_meta_key, &value);
  if (r.is_ok()) {
    SnapshotRecord rec;
    if (!decode_snapshot_record(value, &rec)) return Status::corruption("snapshot metadata is corrupt");
    snapshot_ = rec;
    if (from_v1) v1_snapshot_meta_value = value;
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
  // The hard-state records among them are collected; the one at the highest index is current.
  Index expected = marker.first_index;
  Term last_term = marker.prev_term;
  std::optional<Index> damaged_from;  // first index of a damaged run after the last good entry
  std::string damage;
  size_t damaged_records = 0;
  std::optional<HardState> newest_hard_state;
  hard_state_at_.clear();
  {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
    // From the record at first_index - 1: the one written when the log was empty, or compacted.
    for (it->Seek(hard_state_key(marker.first_index - 1)); it->Valid(); it->Next()) {
      leveldb::Slice k = it->key();
      if (k.empty() || k[0] != kEntryPrefix) break;
      std::string_view key(k.data(), k.size());
      std::string_view val(it->value().data(), it->value().size());
      if (auto at = parse_hard_state_key(key)) {
        HardState hs;
        if (!decode_hard_state(val, &hs)) {
          return Status::corruption("hard state record at log index " + std::to_string(*at) + " is corrupt");
        }
        newest_hard_state = hs;
        hard_state_at_.push_back(*at);
        continue;
      }
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
  const Index kept_last = expected - 1;
  if (from_v1) newest_hard_state = v1_hard_state;
  // Records past the kept log (after a damaged tail) go; the newest one's value, which may hold
  // a vote, is written again at the log's end.
  bool rewrite_hard_state = from_v1 && newest_hard_state.has_value();
  while (!hard_state_at_.empty() && hard_state_at_.back() > kept_last) {
    cleanup.Delete(hard_state_key(hard_state_at_.back()));
    hard_state_at_.pop_back();
    rewrite_hard_state = true;
    need_cleanup = true;
  }
  if (rewrite_hard_state) {
    cleanup.Put(hard_state_key(kept_last), encode_hard_state(*newest_hard_state));
    if (hard_state_at_.empty() || hard_state_at_.back() != kept_last) hard_state_at_.push_back(kept_last);
    need_cleanup = true;
  }
  if (newest_hard_state) hard_state_ = *newest_hard_state;
  if (from_v1) {
    // The v1 records move to their v2 keys, in the same synced batch as the new marker.
    auto put = [&](std::string_view key, const std::string& v) {
      cleanup.Put(leveldb::Slice(key.data(), key.size()), v);
    };
    if (v1_first_index_value) put(kFirstIndexKey, *v1_first_index_value);
    if (v1_snapshot_meta_value) put(kSnapshotMetaKey, *v1_snapshot_meta_value);
    put(kFormatKey, std::string(kFormatV2));
    for (std::string_view key : {v1::kHardStateKey, v1::kFirstIndexKey, v1::kSnapshotMetaKey, v1::kFormatKey}) {
      cleanup.Delete(leveldb::Slice(key.data(), key.size()));
    }
    need_cleanup = true;
    spdlog::info("log storage {}: moving the v1 layout to v2 (the hard state among the entries)", dir_);
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
  // The hard state goes at the log's new end (storage_codec.h). A truncation drops the records
  // past that end, so the current hard state is written again even if the caller gave none.
  size_t dropped = 0;
  for (auto it = hard_state_at_.rbegin(); it != hard_state_at_.rend() && *it > new_last; ++it) {
    batch.Delete(hard_state_key(*it));
    ++dropped;
  }
  std::optional<HardState> written;  // read under the lock only when a record is written
  if (hs != nullptr || dropped > 0) {
    written = hs != nullptr ? *hs : hard_state();
    batch.Put(hard_state_key(new_last), encode_hard_state(*written));
  }
  if (batch.ApproximateSize() <= leveldb::WriteBatch().ApproximateSize()) return Status::ok();
  Status s = write(&batch, sync);
  if (!s.is_ok()) return s;
  hard_state_at_.resize(hard_state_at_.size() - dropped);
  if (written && (hard_state_at_.empty() || hard_state_at_.back() != new_last)) {
    hard_state_at_.push_back(new_last);
  }
  // A record past the log's end would outrank the ones written after it once the log grows back.
  ZKRAFT_INVARIANT(hard_state_at_.empty() || hard_state_at_.back() <= new_last,
                   "no hard-state record lies past the log's end");
  std::unique_lock lock(meta_mu_);
  last_index_.store(new_last, std::memory_order_release);
  if (written) hard_state_ = *written;
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
    // Hard-state records sit between entries (storage_codec.h).
    while (it->Valid() && parse_hard_state_key(std::string_view(it->key().data(), it->key().size()))) it->Next();
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
  // Hard-state records at or below `through` go too; if that takes the newest one, it is written
  // again at the log's end.
  size_t dropped = 0;
  for (auto it = hard_state_at_.begin(); it != hard_state_at_.end() && *it <= through; ++it) {
    batch.Delete(hard_state_key(*it));
    ++dropped;
  }
  const bool keep_newest = dropped > 0 && dropped == hard_state_at_.size();
  const Index last = last_index();
  if (keep_newest) batch.Put(hard_state_key(last), encode_hard_state(hard_state()));
  batch.Put(leveldb::Slice(kFirstIndexKey.data(), kFirstIndexKey.size()),
            encode_first_index(FirstIndexMarker{through + 1, t}));
  s = write(&batch, false);
  if (!s.is_ok()) return s;
  hard_state_at_.erase(hard_state_at_.begin(), hard_state_at_.begin() + static_cast<std::ptrdiff_t>(dropped));
  if (keep_newest) hard_state_at_.push_back(last);
  std::unique_lock lock(meta_mu_);
  first_index_.store(through + 1, std::memory_order_release);
  prev_term_ = t;
  return Status::ok();
}

}  // namespace zkraft::consensus
