#include "consensus/storage_prealloc_env.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <utility>

#include "consensus/storage_posix_status.h"

namespace zkraft::consensus {

namespace {

// As LevelDB's own PosixWritableFile: appends gather here and reach the file at Flush or Sync.
constexpr size_t kBufferBytes = 64 << 10;

bool is_write_ahead_file(std::string_view fname) {
  const size_t slash = fname.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? fname : fname.substr(slash + 1);
  return base.size() > 4 && base.substr(base.size() - 4) == ".log";
}

class PreallocatedFile final : public leveldb::WritableFile {
 public:
  PreallocatedFile(std::string name, int fd) : name_(std::move(name)), fd_(fd) { buffer_.reserve(kBufferBytes); }
  ~PreallocatedFile() override {
    if (fd_ >= 0) Close();
  }

  leveldb::Status Append(const leveldb::Slice& data) override {
    if (buffer_.size() + data.size() > kBufferBytes) {
      if (leveldb::Status s = write_buffer(); !s.ok()) return s;
      if (data.size() > kBufferBytes) return write_bytes(data.data(), data.size());
    }
    buffer_.append(data.data(), data.size());
    return leveldb::Status::OK();
  }

  leveldb::Status Close() override {
    if (fd_ < 0) return leveldb::Status::OK();
    leveldb::Status s = write_buffer();
    // A closed file ends where its bytes end: no zero tail is left for a reader of a clean file.
    if (allocated_ > written_ && ::ftruncate(fd_, static_cast<off_t>(written_)) != 0 && s.ok()) {
      s = posix_status(name_, errno);
    }
    if (::close(fd_) != 0 && s.ok()) s = posix_status(name_, errno);
    fd_ = -1;
    return s;
  }

  leveldb::Status Flush() override { return write_buffer(); }

  leveldb::Status Sync() override {
    if (leveldb::Status s = write_buffer(); !s.ok()) return s;
    if (::fdatasync(fd_) != 0) return posix_status(name_, errno);
    return leveldb::Status::OK();
  }

 private:
  leveldb::Status write_buffer() {
    leveldb::Status s = write_bytes(buffer_.data(), buffer_.size());
    buffer_.clear();
    return s;
  }

  // Extends the allocation to cover [written_, end) if it does not yet; on failure writes go on
  // as plain appends.
  void allocate_through(uint64_t end) {
    if (!preallocate_ || end <= allocated_) return;
    uint64_t target = allocated_;
    while (target < end) target += PreallocEnv::kStepBytes;
    if (::fallocate(fd_, 0, static_cast<off_t>(allocated_), static_cast<off_t>(target - allocated_)) != 0) {
      preallocate_ = false;
      return;
    }
    allocated_ = target;
  }

  leveldb::Status write_bytes(const char* p, size_t n) {
    allocate_through(written_ + n);
    while (n > 0) {
      const ssize_t put = ::pwrite(fd_, p, n, static_cast<off_t>(written_));
      if (put < 0) {
        if (errno == EINTR) continue;
        return posix_status(name_, errno);
      }
      p += put;
      n -= static_cast<size_t>(put);
      written_ += static_cast<uint64_t>(put);
    }
    return leveldb::Status::OK();
  }

  const std::string name_;
  int fd_;
  std::string buffer_;
  uint64_t written_ = 0;    // bytes of the file that hold appended data
  uint64_t allocated_ = 0;  // the end of what fallocate gave the file; zeros between written_ and it
  bool preallocate_ = true;
};

}  // namespace

leveldb::Status PreallocEnv::NewWritableFile(const std::string& fname, leveldb::WritableFile** result) {
  if (!is_write_ahead_file(fname)) return target()->NewWritableFile(fname, result);
  *result = nullptr;
  const int fd = ::open(fname.c_str(), O_TRUNC | O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return posix_status(fname, errno);
  *result = new PreallocatedFile(fname, fd);
  return leveldb::Status::OK();
}

}  // namespace zkraft::consensus
