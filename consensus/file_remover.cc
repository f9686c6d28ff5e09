#include "consensus/file_remover.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zkraft::consensus {

void shrink_in_steps(const std::string& path, uint64_t step, std::chrono::milliseconds pause) {
  struct stat st {};
  if (step == 0 || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  auto size = static_cast<uint64_t>(st.st_size);
  while (size > step) {
    size -= step;
    if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) return;
    std::this_thread::sleep_for(pause);
  }
}

FileRemover::FileRemover(RemoveFn remove) : remove_(std::move(remove)) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "zk-remover");  // shown by top -H, ps -L, perf
    run();
  });
}

FileRemover::~FileRemover() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  thread_.join();
}

void FileRemover::remove(std::string path) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(path));
  }
  work_.notify_one();
}

void FileRemover::wait_idle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void FileRemover::run() {
  std::unique_lock lock(mu_);
  while (true) {
    work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to remove
    std::string path = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    const std::string error = remove_(path);
    if (!error.empty()) spdlog::warn("removing {}: {}", path, error);
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace zkraft::consensus
