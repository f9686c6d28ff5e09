#include "server/forked_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

#include "server/resident_prefault.h"

namespace zkraft::server {

namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void close_all_but(int keep) {
  if (::close_range(3, static_cast<unsigned>(keep) - 1, 0) == 0 &&
      ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0) == 0) {
    return;
  }
  const long max = ::sysconf(_SC_OPEN_MAX);  // close_range needs Linux 5.9
  for (long fd = 3; fd < (max > 0 ? max : 65536); ++fd) {
    if (fd != keep) ::close(static_cast<int>(fd));
  }
}

[[noreturn]] void run_child(int write_fd, const ForkedSnapshot::Serialize& serialize) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) ::_exit(3);  // the parent died before prctl took effect
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);  // a reader that went away ends the child
  if (write_fd < 3) ::_exit(4);
  close_all_but(write_fd);
  const std::string bytes = serialize();
  unsigned char header[8];
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) header[i] = static_cast<unsigned char>(n >> (8 * i));
  const bool ok = write_all(write_fd, reinterpret_cast<const char*>(header), sizeof header) &&
                  write_all(write_fd, bytes.data(), bytes.size());
  ::_exit(ok ? 0 : 5);
}

}  // namespace

std::unique_ptr<ForkedSnapshot> ForkedSnapshot::start(const Serialize& serialize, Done done,
                                                      std::string* error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  ::fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups for the reader; a hint only
  const pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return nullptr;
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], serialize);
  }
  ::close(fds[1]);
  return std::unique_ptr<ForkedSnapshot>(new ForkedSnapshot(pid, fds[0], std::move(done)));
}

ForkedSnapshot::ForkedSnapshot(pid_t child, int read_fd, Done done)
    : child_(child), read_fd_(read_fd), done_(std::move(done)) {
  reader_ = std::thread([this] { read_and_reap(); });
}

ForkedSnapshot::~ForkedSnapshot() {
  stop_prefault_ = true;
  {
    // Until it is reaped the pid is the child's (a zombie at worst), never another process's.
    std::lock_guard<std::mutex> lock(mu_);
    if (!reaped_) ::kill(child_, SIGKILL);
  }
  if (reader_.joinable()) reader_.join();
}

void ForkedSnapshot::read_and_reap() {
  std::optional<std::string> bytes;
  unsigned char header[8];
  if (read_all(read_fd_, reinterpret_cast<char*>(header), sizeof header)) {
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t{header[i]} << (8 * i);
    std::string data;
    if (n < (uint64_t{1} << 40)) {
      data.resize(n);
      if (read_all(read_fd_, data.data(), n)) bytes = std::move(data);
    }
  }
  ::close(read_fd_);
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(child_), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  int status = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) bytes.reset();
  done_(std::move(bytes));
  // No child shares the pages any more: each is the parent's alone, still write-protected.
  const auto t0 = std::chrono::steady_clock::now();
  const PrefaultResult r = prefault_resident_private_memory(stop_prefault_);
  spdlog::debug("after a snapshot child: {} resident pages in {} regions write-faulted in {} ms", r.pages, r.regions,
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace zkraft::server
