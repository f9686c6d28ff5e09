// LogStorage's snapshots (log_storage.h): the data in its own file beside the LevelDB, the
// record that publishes it, reading it back, and the start-up sweep of files nothing names.

#include <errno.h>
#include <fcntl.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/write_batch.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "consensus/invariant.h"
#include "consensus/log_storage.h"
#include "consensus/log_storage_errors.h"
#include "consensus/snapshot_file_writer.h"
#include "consensus/storage_crc32c.h"

namespace zkraft::consensus {

using namespace storage;  // NOLINT: the codec is this file's vocabulary

namespace {

// A snapshot file is written and read in pieces of this size.
constexpr size_t kSnapshotWriteBytes = 1 << 20;

Status sync_directory_status(const std::string& dir) {
  const int err = sync_directory(dir);
  if (err == 0) return Status::ok();
  const std::string m = "syncing directory " + dir + ": " + std::strerror(err);
  return err == ENOSPC ? Status::error(Status::Code::kNoSpace, m) : Status::io_error(m);
}

}  // namespace

Status LogStorage::sweep_snapshot_files(uint64_t* max_generation) {
  std::vector<std::string> names;
  if (leveldb::Status s = env()->GetChildren(dir_, &names); !s.ok()) {
    return Status::io_error("listing " + dir_ + ": " + describe(s));
  }
  const bool stored = snapshot_ && snapshot_->in_file;
  for (const std::string& name : names) {
    const std::optional<uint64_t> gen = parse_snapshot_file_name(name);
    if (!gen) continue;
    *max_generation = std::max(*max_generation, *gen);
    if (stored && *gen == snapshot_->generation) continue;
    // Written by a snapshot that was never published (a crash, or a newer one won), or the data
    // of an older one whose removal was lost.
    if (leveldb::Status d = env()->RemoveFile(dir_ + "/" + name); !d.ok()) {
      spdlog::warn("log storage {}: removing the unused snapshot file {}: {}", dir_, name, d.ToString());
    }
  }
  if (stored) {
    uint64_t size = 0;
    const std::string path = snapshot_path(snapshot_->generation);
    if (leveldb::Status s = env()->GetFileSize(path, &size); !s.ok()) {
      return Status::corruption("the stored snapshot's data " + path + " is missing: " + describe(s));
    }
    if (size < snapshot_->data_size) {
      return Status::corruption("the stored snapshot's data " + path + " has " + std::to_string(size) +
                                " bytes, its record says " + std::to_string(snapshot_->data_size));
    }
    if (size > snapshot_->data_size) {
      // An append (SnapshotFileTarget) written but never published: not part of the snapshot.
      if (::truncate(path.c_str(), static_cast<off_t>(snapshot_->data_size)) != 0) {
        return Status::io_error("cutting the unpublished append off " + path + ": " + std::strerror(errno));
      }
      spdlog::info("log storage {}: cut {} bytes of an unpublished append off the stored snapshot's data", dir_,
                   size - snapshot_->data_size);
    }
  }
  return Status::ok();
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
  rec.full_size = data.size();
  rec.in_file = true;
  const std::string path = snapshot_path(rec.generation);
  leveldb::WritableFile* raw = nullptr;
  leveldb::Status ls = env()->NewWritableFile(path, &raw);
  if (!ls.ok()) return leveldb_error("creating " + path, ls);
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
      result = leveldb_error("writing " + path, ls);
      break;
    }
    off += len;
    unsynced += len;
    if (unsynced == sync_every) {
      ls = file->Sync();
      if (!ls.ok()) {
        result = leveldb_error("syncing " + path, ls);
        break;
      }
      unsynced = 0;
    }
  }
  if (result.is_ok()) {
    ls = file->Sync();
    if (!ls.ok()) result = leveldb_error("syncing " + path, ls);
  }
  if (result.is_ok()) {
    ls = file->Close();
    if (!ls.ok()) result = leveldb_error("closing " + path, ls);
  }
  file.reset();
  // The file's name must be durable before a record naming it is.
  if (result.is_ok()) result = sync_directory_status(dir_);
  if (!result.is_ok()) {
    env()->RemoveFile(path);
    return result;
  }
  rec.data_crc = crc;
  out->record = rec;
  return Status::ok();
}

SnapshotFileTarget LogStorage::snapshot_file_target() {
  SnapshotFileTarget t;
  t.token = next_snapshot_generation_.fetch_add(1);
  t.path = snapshot_path(t.token);
  t.sync_bytes = std::max<uint64_t>(options_.snapshot_sync_bytes, 1);
  std::shared_lock lock(meta_mu_);
  if (snapshot_ && snapshot_->in_file) {
    t.stored_index = snapshot_->meta.index;
    t.stored_generation = snapshot_->generation;
    t.stored_path = snapshot_path(snapshot_->generation);
    t.stored_size = snapshot_->data_size;
    t.stored_crc = snapshot_->data_crc;
    t.stored_full_size = snapshot_->full_size;
  }
  return t;
}

Status LogStorage::publish_snapshot_file(const SnapshotMeta& meta, const SnapshotFileWritten& file) {
  const std::string path = snapshot_path(file.token);
  PreparedSnapshot prepared;
  prepared.record.meta = meta;
  prepared.record.generation = file.token;
  prepared.record.data_size = file.size;
  prepared.record.data_crc = file.crc32c;
  prepared.record.full_size = file.size;
  prepared.record.in_file = true;
  std::optional<SnapshotRecord> stored;
  if (file.appended) {
    // Only onto the very bytes it was appended to: if another snapshot was stored meanwhile (a
    // leader's), the append belongs to a file that is no longer the snapshot.
    {
      std::shared_lock lock(meta_mu_);
      stored = snapshot_;
    }
    // First: the file of a replaced snapshot may be gone already.
    if (!stored || !stored->in_file || stored->generation != file.token || stored->data_size != file.appended_to) {
      return Status::error(Status::Code::kSnapshotOutOfDate,
                           "the snapshot at " + std::to_string(meta.index) + " was appended to a stored snapshot " +
                               "that another has replaced since");
    }
  }
  uint64_t size = 0;
  if (leveldb::Status s = env()->GetFileSize(path, &size); !s.ok()) {
    return Status::corruption("the snapshot file " + path + " to publish is missing: " + describe(s));
  }
  if (file.appended) {
    if (size < file.size) {
      return Status::corruption("the snapshot file " + path + " has " + std::to_string(size) +
                                " bytes, its appender wrote up to " + std::to_string(file.size));
    }
    prepared.record.full_size = stored->full_size;
    return publish_snapshot(prepared);
  }
  if (size != file.size) {
    env()->RemoveFile(path);
    return Status::corruption("the snapshot file " + path + " has " + std::to_string(size) +
                              " bytes, its writer wrote " + std::to_string(file.size));
  }
  return publish_snapshot(prepared);
}

void LogStorage::discard_snapshot_file(const SnapshotFileWritten& file) {
  {
    std::shared_lock lock(meta_mu_);
    if (snapshot_ && snapshot_->in_file && snapshot_->generation == file.token) {
      // An append to the stored snapshot's file, declined: its bytes go, if they are still the
      // file's last (under the lock, no publish moves the record meanwhile).
      const std::string path = snapshot_path(file.token);
      struct stat st {};
      if (file.appended && file.appended_to >= snapshot_->data_size && ::stat(path.c_str(), &st) == 0 &&
          static_cast<uint64_t>(st.st_size) == file.size) {
        if (::truncate(path.c_str(), static_cast<off_t>(file.appended_to)) != 0) {
          spdlog::warn("log storage {}: cutting a declined append off {}: {}", dir_, path, std::strerror(errno));
        }
      }
      return;
    }
  }
  remover_->remove(snapshot_path(file.token));
}

Status LogStorage::publish_snapshot(const PreparedSnapshot& prepared) {
  const SnapshotRecord& rec = prepared.record;
  ZKRAFT_INVARIANT(rec.in_file, "a prepared snapshot's data is in its file");
  // On failure the file stays until the next open() removes it (nothing names it).
  if (Status r = reopen_if_needed(); !r.is_ok()) return r;
  std::optional<SnapshotRecord> old;
  {
    std::shared_lock lock(meta_mu_);
    old = snapshot_;
  }
  // An append's file is the stored snapshot's own: it stays, and is never removed as the old one.
  const bool same_file = old && old->in_file && old->generation == rec.generation;
  if (Status s = check_snapshot_is_newer(rec.meta); !s.is_ok()) {
    if (!same_file) env()->RemoveFile(snapshot_path(rec.generation));
    return s;
  }
  const SnapshotMeta& meta = rec.meta;
  Term t = 0;
  const bool keep_log = term(meta.index, &t).is_ok() && t == meta.term;
  const Index first = first_index();
  const Index last = last_index();
  leveldb::WriteBatch batch;
  if (!keep_log) {
    for (Index i = first; i <= last; ++i) batch.Delete(entry_key(i));
    // The hard state moves to the new log's end (storage_codec.h).
    for (Index at : hard_state_at_) batch.Delete(hard_state_key(at));
    batch.Put(hard_state_key(meta.index), encode_hard_state(hard_state()));
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
      hard_state_at_.assign(1, meta.index);
      first_index_.store(meta.index + 1, std::memory_order_release);
      last_index_.store(meta.index, std::memory_order_release);
      prev_term_ = meta.term;
    }
  }

  // The old data is unreachable now; removing it may be lost in a crash (open() sweeps it). Not
  // on this thread: freeing a large file's blocks holds the caller for as long as 230 ms.
  if (same_file) {
    // Nothing to remove: the file goes on, longer.
  } else if (old && old->in_file) {
    remover_->remove(snapshot_path(old->generation));
  } else if (old) {
    leveldb::WriteBatch del;
    for (uint64_t n = 0; n < old->chunk_count; ++n) del.Delete(snapshot_chunk_key(old->generation, n));
    Status d = write(&del, false);
    if (!d.is_ok()) spdlog::warn("log storage {}: dropping old snapshot chunks: {}", dir_, d.to_string());
  }
  return Status::ok();
}

LogStorage::MappedSnapshot::~MappedSnapshot() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
}

Status LogStorage::map_snapshot(SnapshotMeta* meta, MappedSnapshot* out, Mapping how) const {
  std::optional<SnapshotRecord> rec;
  std::string path;
  int fd = -1;
  {
    // Opening the file under the lock pins this record's data, as in load_snapshot.
    std::shared_lock lock(meta_mu_);
    rec = snapshot_;
    if (!rec) return Status::unavailable("no snapshot stored");
    if (!rec->in_file) return Status::unavailable("the stored snapshot is in chunks, not a file");
    path = snapshot_path(rec->generation);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) return Status::io_error("opening the snapshot's data " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::io_error("reading the size of " + path + ": " + std::strerror(err));
  }
  // Longer is an append under way (or one never published): only data_size bytes are this snapshot.
  if (static_cast<uint64_t>(st.st_size) < rec->data_size) {
    ::close(fd);
    return Status::corruption("snapshot at index " + std::to_string(rec->meta.index) + " in " + dir_ +
                              ": its file does not have the " + std::to_string(rec->data_size) +
                              " bytes its record says");
  }
  void* addr = nullptr;
  if (rec->data_size > 0) {
    // MAP_POPULATE maps the (cached) pages in one go instead of one fault per page.
    const int populate = how == Mapping::kResident ? MAP_POPULATE : 0;
    addr = ::mmap(nullptr, rec->data_size, PROT_READ, MAP_PRIVATE | populate, fd, 0);
    if (addr == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return Status::io_error("mapping " + path + ": " + std::strerror(err));
    }
    ::madvise(addr, rec->data_size, MADV_SEQUENTIAL);
  }
  ::close(fd);  // the mapping keeps the file
  MappedSnapshot mapped;
  mapped.addr_ = addr;
  mapped.size_ = rec->data_size;
  const std::string_view bytes = mapped.bytes();
  if (crc32c_extend(0, bytes.data(), bytes.size()) != rec->data_crc) {
    return Status::corruption("snapshot at index " + std::to_string(rec->meta.index) + " in " + dir_ +
                              " fails its checksum");
  }
  // Clean pages of a file: dropping them from this mapping frees nothing the page cache needs,
  // and a read faults them back in.
  if (how == Mapping::kOnDemand && addr != nullptr) ::madvise(addr, rec->data_size, MADV_DONTNEED);
  *meta = rec->meta;
  std::swap(out->addr_, mapped.addr_);
  std::swap(out->size_, mapped.size_);
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
    // A longer file is an append under way: only data_size bytes are this snapshot.
    if (off < out.size()) {
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

}  // namespace zkraft::consensus
