#include "consensus/storage_pread_env.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "consensus/storage_posix_status.h"

namespace zkraft::consensus {

namespace {

class PreadFile final : public leveldb::RandomAccessFile {
 public:
  PreadFile(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
  ~PreadFile() override { ::close(fd_); }

  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result, char* scratch) const override {
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, scratch + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        *result = leveldb::Slice(scratch, done);
        return posix_status(name_, errno);
      }
      if (got == 0) break;  // end of file: LevelDB checks the length it got
      done += static_cast<size_t>(got);
    }
    *result = leveldb::Slice(scratch, done);
    return leveldb::Status::OK();
  }

 private:
  const std::string name_;
  const int fd_;
};

}  // namespace

leveldb::Status PreadEnv::NewRandomAccessFile(const std::string& fname, leveldb::RandomAccessFile** result) {
  *result = nullptr;
  const int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return posix_status(fname, errno);
  *result = new PreadFile(fname, fd);
  return leveldb::Status::OK();
}

}  // namespace zkraft::consensus
