#pragma once
// ReceivedSnapshot: a leader's snapshot written to a LogStorage snapshot file chunk by chunk as a
// follower receives it (Ready::snapshot_chunks), then published as the stored snapshot, so that
// the follower never gathers its bytes in memory (a 1,000,000-znode snapshot is ~190 MB).
//
// Chunks come as types.h's SnapshotChunk says: offset 0 starts a new file (an unfinished or
// unpublished one is removed), each later chunk continues it exactly where the last one ended
// and `last` finishes it (synced, with its directory). publish() then makes it the stored
// snapshot with LogStorage::publish_snapshot_file's rules. A crash before that leaves a file
// nothing names, which LogStorage::open() removes.
//
// Storage thread only (it calls LogStorage's writers); not thread-safe.

#include <memory>
#include <optional>

#include "consensus/log_storage.h"
#include "consensus/snapshot_file_writer.h"
#include "consensus/status.h"
#include "consensus/types.h"

namespace zkraft::consensus {

class ReceivedSnapshot {
 public:
  explicit ReceivedSnapshot(LogStorage& storage) : storage_(storage) {}
  ~ReceivedSnapshot() { drop(); }
  ReceivedSnapshot(const ReceivedSnapshot&) = delete;
  ReceivedSnapshot& operator=(const ReceivedSnapshot&) = delete;

  // kInvalidArgument for a chunk that does not start or continue a transfer; kNoSpace or
  // kIoError (the file is then dropped) when writing fails.
  Status write(const SnapshotChunk& chunk);
  // kInvalidArgument unless the chunks of exactly `meta` were all written; else as
  // LogStorage::publish_snapshot_file. The transfer is over either way.
  Status publish(const SnapshotMeta& meta);

 private:
  void drop();

  LogStorage& storage_;
  std::optional<SnapshotMeta> meta_;  // of the transfer being written
  uint64_t size_ = 0;
  std::unique_ptr<SnapshotFileWriter> writer_;     // while unfinished
  std::optional<SnapshotFileWritten> finished_;  // after the last chunk
};

}  // namespace zkraft::consensus
