#pragma once
// PreallocEnv: a LevelDB environment whose write-ahead files (NNNNNN.log, where every log entry
// and hard state is first written and fsynced) are extended with fallocate(2) in steps of
// kStepBytes ahead of the writes; every other file goes to the environment it wraps.
//
// Why: an append that grows a file changes its size, so each fdatasync(2) of LevelDB's
// write-ahead file writes the inode as well as the data. Writing inside a region already
// allocated leaves the size alone. ZooKeeper pads its transaction log ahead (64 MB,
// zookeeper.preAllocSize) for the same reason. On the development machine a 100 B write plus
// fdatasync ran 6,644 to 7,856 times a second inside a fallocate'd region, 5,241 to 6,168 growing
// the file (docs/benchmarks.md, 2026-12-07).
//
// What a reader sees: between the last write and the allocated end the file reads as zeros, until
// Close() truncates it to the bytes written. LevelDB's log reader skips a zero header (type 0,
// length 0) without reporting a drop: it is the format's mark for a preallocated region. A crash
// can leave such a tail; a record torn by the crash is dropped as before (paranoid_checks off,
// log_storage.cc), and it was never acknowledged: no write is until its fdatasync returns.
//
// Invariant: bytes reach the file in the order appended, at the offsets an append-only file would
// give them; a failed fallocate (e.g. a file system without it) only turns preallocation off for
// that file.

#include <leveldb/env.h>

#include <cstdint>
#include <string>

namespace zkraft::consensus {

class PreallocEnv final : public leveldb::EnvWrapper {
 public:
  static constexpr uint64_t kStepBytes = 4 << 20;

  // `base` is not owned and must outlive this environment. Write-ahead files are opened with
  // open(2) directly, so the base must be a POSIX file environment.
  explicit PreallocEnv(leveldb::Env* base) : leveldb::EnvWrapper(base) {}

  leveldb::Status NewWritableFile(const std::string& fname, leveldb::WritableFile** result) override;
};

}  // namespace zkraft::consensus
