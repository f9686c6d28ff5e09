#include "consensus/received_snapshot.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace zkraft::consensus {

namespace {

Status file_error(int err, const std::string& what) {
  const std::string m = what + ": " + std::strerror(err);
  return err == ENOSPC || err == EDQUOT ? Status::error(Status::Code::kNoSpace, m) : Status::io_error(m);
}

}  // namespace

void ReceivedSnapshot::drop() {
  writer_.reset();  // removes an unfinished file
  if (finished_) storage_.discard_snapshot_file(*finished_);
  finished_.reset();
  meta_.reset();
  size_ = 0;
}

Status ReceivedSnapshot::write(const SnapshotChunk& chunk) {
  if (chunk.offset == 0) {
    drop();
    auto writer = std::make_unique<SnapshotFileWriter>();
    const SnapshotFileTarget target = storage_.snapshot_file_target();
    if (int err = writer->open(target); err != 0) return file_error(err, "creating " + target.path);
    writer_ = std::move(writer);
    meta_ = chunk.meta;
  } else if (!writer_ || !(*meta_ == chunk.meta) || chunk.offset != size_) {
    return Status::invalid_argument("a chunk of the snapshot at index " + std::to_string(chunk.meta.index) +
                                    " at offset " + std::to_string(chunk.offset) +
                                    " does not continue the chunks written before");
  }
  if (int err = writer_->append(chunk.bytes); err != 0) {
    drop();
    return file_error(err, "writing a chunk of the leader's snapshot");
  }
  size_ += chunk.bytes.size();
  if (!chunk.last) return Status::ok();
  SnapshotFileWritten written;
  if (int err = writer_->finish(&written); err != 0) {
    drop();
    return file_error(err, "finishing the leader's snapshot file");
  }
  writer_.reset();
  finished_ = written;
  return Status::ok();
}

Status ReceivedSnapshot::publish(const SnapshotMeta& meta) {
  if (!finished_ || !(*meta_ == meta)) {
    drop();
    return Status::invalid_argument("the snapshot at index " + std::to_string(meta.index) +
                                    " to store was not received whole");
  }
  const SnapshotFileWritten file = *finished_;
  finished_.reset();  // published or, on failure, removed by publish_snapshot_file
  meta_.reset();
  size_ = 0;
  return storage_.publish_snapshot_file(meta, file);
}

}  // namespace zkraft::consensus
