#pragma once
// LiveSnapshotFile: writes a snapshot's pieces into the storage's file (SnapshotFileWriter: the
// CRC, the fdatasync every target.sync_bytes, the final sync of the file and its directory) on a
// thread of its own, so the state thread that makes the pieces (ZnodeTree's live snapshot) never
// waits for the disk.
//
// Invariants: pieces are written in the order given; a push that leaves kRoomPieces or more
// waiting returns false, and on_room is then called once (on the writer thread) as soon as fewer
// wait, so a producer that stops at false holds at most kRoomPieces pieces in the queue; `done`
// is called exactly once, on the writer thread, after finish() (with the file's size and
// checksum, or an errno), or never if the object is destroyed first (the file is then removed);
// by then the written pieces' buffers kept for reuse (spare_piece) are freed.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "consensus/snapshot_file_writer.h"
#include "tree/live_snapshot_check.h"

namespace zkraft::server {

class LiveSnapshotFile {
 public:
  static constexpr size_t kRoomPieces = 4;
  using Done = std::function<void(int err, const consensus::SnapshotFileWritten& written)>;

  // With a check, the writer thread runs every piece through it and, at finish(), stops the
  // process (an invariant) if the snapshot is not the tree at its start. Appending, the pieces
  // go after the target's stored snapshot in its file (SnapshotFileWriter::open_append; ESTALE
  // if that file is no longer as the target says) instead of into a new file.
  enum class Into : uint8_t { kNewFile, kStoredFile };
  LiveSnapshotFile(const consensus::SnapshotFileTarget& target, std::function<void()> on_room, Done done,
                   std::optional<tree::LiveSnapshotCheck> check = std::nullopt, Into into = Into::kNewFile);
  ~LiveSnapshotFile();  // abandons a file not yet finished
  LiveSnapshotFile(const LiveSnapshotFile&) = delete;
  LiveSnapshotFile& operator=(const LiveSnapshotFile&) = delete;

  // Queues a piece; false if the queue is now full (on_room follows when it is not).
  bool push(std::string piece);
  // The buffer of a piece already written, empty but with its capacity, to make the next piece
  // in; a new (empty, short) string if none is back yet. Reusing them spares the producer a
  // fresh 2 MiB and its page faults per piece (docs/benchmarks.md, "The live snapshot's piece
  // buffers").
  std::string spare_piece();
  // How many such buffers are kept: at most kRoomPieces, and none once the pieces are all
  // written after finish().
  size_t spare_count();
  // No more pieces: the file is synced and closed, then `done` is called.
  void finish();

 private:
  void run();

  consensus::SnapshotFileTarget target_;
  Into into_;
  std::function<void()> on_room_;
  Done done_;
  std::optional<tree::LiveSnapshotCheck> check_;  // used only by the writer thread
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> pieces_;
  std::vector<std::string> spares_;  // written pieces' buffers, at most kRoomPieces
  bool finishing_ = false;
  bool stopping_ = false;
  bool full_told_ = false;  // push returned false; on_room is owed
  std::thread thread_;
};

}  // namespace zkraft::server
