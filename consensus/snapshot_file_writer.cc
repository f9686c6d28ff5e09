#include "consensus/snapshot_file_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "consensus/storage_crc32c.h"

namespace zkraft::consensus {

namespace {

int write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0) return EIO;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

int sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

void SnapshotFileWriter::prepare_before_fork() { (void)crc32c_extend(0, "", 0); }

SnapshotFileWriter::~SnapshotFileWriter() {
  if (!finished_) abandon();
}

void SnapshotFileWriter::abandon() {
  if (fd_ >= 0) {
    // An append takes back what it wrote: the stored snapshot's file stays as it was.
    if (appending_) (void)::ftruncate(fd_, static_cast<off_t>(appended_to_));
    ::close(fd_);
    fd_ = -1;
    if (!appending_) ::unlink(target_.path.c_str());
  }
}

int SnapshotFileWriter::open(const SnapshotFileTarget& target) {
  if (fd_ >= 0 || finished_) return EBUSY;
  target_ = target;
  fd_ = ::open(target.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  return fd_ >= 0 ? 0 : errno;
}

int SnapshotFileWriter::open_append(const SnapshotFileTarget& target) {
  if (fd_ >= 0 || finished_) return EBUSY;
  if (target.stored_index == 0) return EINVAL;
  target_ = target;
  target_.path = target.stored_path;
  fd_ = ::open(target_.path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0) return errno;
  // Exactly the stored bytes, or the target is out of date: bytes beyond them may be an append
  // published since, and the file of a snapshot replaced since may be cut short already.
  const off_t at = static_cast<off_t>(target.stored_size);
  struct stat st {};
  int err = ::fstat(fd_, &st) != 0 ? errno : st.st_size != at ? ESTALE : 0;
  if (err == 0 && ::lseek(fd_, at, SEEK_SET) != at) err = errno;
  if (err != 0) {
    ::close(fd_);
    fd_ = -1;
    return err;
  }
  appending_ = true;
  appended_to_ = target.stored_size;
  size_ = target.stored_size;
  crc_ = target.stored_crc;
  return 0;
}

int SnapshotFileWriter::append(std::string_view bytes) {
  if (fd_ < 0) return EBADF;
  const uint64_t sync_every = std::max<uint64_t>(target_.sync_bytes, 1);
  while (!bytes.empty()) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(bytes.size(), sync_every - unsynced_));
    if (int err = write_all(fd_, bytes.data(), len); err != 0) return err;
    crc_ = crc32c_extend(crc_, bytes.data(), len);
    size_ += len;
    unsynced_ += len;
    bytes.remove_prefix(len);
    if (unsynced_ == sync_every) {
      if (::fdatasync(fd_) != 0) return errno;
      unsynced_ = 0;
    }
  }
  return 0;
}

int SnapshotFileWriter::finish(SnapshotFileWritten* out) {
  if (fd_ < 0) return EBADF;
  if (::fdatasync(fd_) != 0) return errno;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    if (!appending_) ::unlink(target_.path.c_str());
    return err;
  }
  // The file's name must be durable before a record naming it is.
  if (appending_) {
    // The name is the stored snapshot's, durable already.
    finished_ = true;
    out->token = target_.stored_generation;
    out->size = size_;
    out->crc32c = crc_;
    out->appended = true;
    out->appended_to = appended_to_;
    return 0;
  }
  if (int err = sync_directory(directory_of(target_.path)); err != 0) {
    ::unlink(target_.path.c_str());
    return err;
  }
  finished_ = true;
  out->token = target_.token;
  out->size = size_;
  out->crc32c = crc_;
  return 0;
}

}  // namespace zkraft::consensus
