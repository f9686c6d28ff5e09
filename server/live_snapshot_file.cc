#include "server/live_snapshot_file.h"

#include "tree/invariant.h"  // server/ has no copy of its own: tree/ is below it

namespace zkraft::server {

LiveSnapshotFile::LiveSnapshotFile(const consensus::SnapshotFileTarget& target, std::function<void()> on_room,
                                   Done done, std::optional<tree::LiveSnapshotCheck> check, Into into)
    : target_(target), into_(into), on_room_(std::move(on_room)), done_(std::move(done)), check_(std::move(check)) {
  thread_ = std::thread([this] { run(); });
}

LiveSnapshotFile::~LiveSnapshotFile() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool LiveSnapshotFile::push(std::string piece) {
  std::lock_guard lock(mu_);
  pieces_.push_back(std::move(piece));
  cv_.notify_all();
  if (pieces_.size() < kRoomPieces) return true;
  full_told_ = true;
  return false;
}

std::string LiveSnapshotFile::spare_piece() {
  std::lock_guard lock(mu_);
  if (spares_.empty()) return {};
  std::string buffer = std::move(spares_.back());
  spares_.pop_back();
  return buffer;
}

size_t LiveSnapshotFile::spare_count() {
  std::lock_guard lock(mu_);
  return spares_.size();
}

void LiveSnapshotFile::finish() {
  std::lock_guard lock(mu_);
  finishing_ = true;
  cv_.notify_all();
}

void LiveSnapshotFile::run() {
  consensus::SnapshotFileWriter writer;  // its destructor removes a file not finished
  int err = into_ == Into::kStoredFile ? writer.open_append(target_) : writer.open(target_);
  while (true) {
    std::string piece;
    bool room_now = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !pieces_.empty() || finishing_; });
      if (stopping_) return;
      if (pieces_.empty()) break;  // finishing, and everything is written
      piece = std::move(pieces_.front());
      pieces_.pop_front();
      if (full_told_ && pieces_.size() < kRoomPieces) {
        full_told_ = false;
        room_now = true;
      }
    }
    if (room_now) on_room_();
    if (check_) ZKRAFT_INVARIANT(check_->add(piece), "a live snapshot's pieces are whole records");
    if (err == 0) err = writer.append(piece);
    piece.clear();
    std::lock_guard lock(mu_);
    if (spares_.size() < kRoomPieces) spares_.push_back(std::move(piece));
  }
  // Bytes that are not the tree at the snapshot's start would, once published, make a restore
  // lose or invent writes.
  if (check_) ZKRAFT_INVARIANT(check_->holds_the_start(), "a live snapshot holds the tree as it was at its start");
  // No piece follows finish(), and the next snapshot is a snapshot interval away: kept until then
  // (the object lives until the next one starts), the buffers were ~10 MB of the heap.
  std::vector<std::string> spares;
  {
    std::lock_guard lock(mu_);
    spares.swap(spares_);
  }
  spares.clear();
  consensus::SnapshotFileWritten written;
  if (err == 0) err = writer.finish(&written);
  done_(err, written);
}

}  // namespace zkraft::server
