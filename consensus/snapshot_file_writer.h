#pragma once
// SnapshotFileWriter: writes one snapshot file at a SnapshotFileTarget (types.h) piece by piece,
// with the CRC-32C and the syncs LogStorage's own snapshot files have: synced every
// target.sync_bytes (so the dirty pages never pile up behind the log's fsyncs), at the end, and
// then its directory, so that a record naming the file can be published once finish() returned.
//
// Plain POSIX calls only: no LevelDB Env, no logging, no locks, no threads. That is what lets a
// forked child of a multi-threaded server use it (server/forked_snapshot.h), with one proviso:
// call prepare_before_fork() in the parent first, so the child does not initialise the CRC's
// one-time CPU dispatch itself. Errors are errno values, which such a child can send to its
// parent as they are. A file that was not finished is removed when the writer goes away.

#include <cstdint>
#include <string>
#include <string_view>

#include "consensus/types.h"

namespace zkraft::consensus {

// fsyncs directory `dir`, so that the names created in it are durable. 0 or an errno.
int sync_directory(const std::string& dir);

class SnapshotFileWriter {
 public:
  static void prepare_before_fork();

  // Creates the file (it must not exist yet). 0, or the errno of the failed call.
  int open(const SnapshotFileTarget& target);
  // Opens the target's stored snapshot file (target.stored_index != 0) to append to it after its
  // stored_size bytes, with the CRC carried on from stored_crc. ESTALE if the file does not hold
  // exactly stored_size bytes (the target is out of date), or the errno of the failed call. An
  // append not finished is cut off again when the writer goes away.
  int open_append(const SnapshotFileTarget& target);
  // Appends `bytes`, syncing whenever target.sync_bytes more were written. 0 or an errno.
  int append(std::string_view bytes);
  // Syncs and closes the file, then syncs its directory. 0 (and *out) or an errno.
  int finish(SnapshotFileWritten* out);

  SnapshotFileWriter() = default;
  ~SnapshotFileWriter();
  SnapshotFileWriter(const SnapshotFileWriter&) = delete;
  SnapshotFileWriter& operator=(const SnapshotFileWriter&) = delete;

 private:
  void abandon();

  SnapshotFileTarget target_;
  int fd_ = -1;
  bool finished_ = false;
  bool appending_ = false;
  uint64_t appended_to_ = 0;
  uint64_t size_ = 0;
  uint64_t unsynced_ = 0;
  uint32_t crc_ = 0;
};

}  // namespace zkraft::consensus
