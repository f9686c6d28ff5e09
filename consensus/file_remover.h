#pragma once
// FileRemover: removes files on a thread of its own, for LogStorage's old snapshot files. Why: on
// ext4 removing a snapshot file of ~190 MB (freeing its blocks) took 50 to 230 ms per call on the
// storage thread under the 3-server snapshot load, and every log write, so every acknowledgement,
// waited behind it (docs/benchmarks.md, 2026-12-06).
//
// Removing a large file at once still stalled every write: with the remover on its own thread, a
// standalone 16x32 setData load on ~700,000 znodes stopped for 45 to 61 ms at each snapshot, as
// the previous 124 MB file was unlinked (the kernel frees its pages and blocks in one call, and
// the log's next fdatasync waited for it); with the unlink skipped, no write took over 30 ms
// (docs/benchmarks.md, 2026-12-07). shrink_in_steps takes such a file down a few MiB at a time
// first, with a pause between steps, so each step's work is small.
//
// Invariants: files are removed in the order given, each once; a removal that fails is logged
// (nothing else depends on it: LogStorage::open sweeps files nothing names); wait_idle() returns
// only once everything queued before it is removed; the destructor removes what is still queued
// before it returns.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace zkraft::consensus {

// Truncates the file at `path` by `step` bytes at a time down to at most `step`, sleeping
// `pause` after each step; does nothing if it cannot stat or truncate it (the removal that
// follows reports any error). For the remover's thread, before the removal itself.
void shrink_in_steps(const std::string& path, uint64_t step, std::chrono::milliseconds pause);

class FileRemover {
 public:
  // remove(path): the removal itself (an Env's RemoveFile); an empty string when it worked, else
  // why not. Called on the remover's thread only.
  using RemoveFn = std::function<std::string(const std::string& path)>;

  explicit FileRemover(RemoveFn remove);
  ~FileRemover();
  FileRemover(const FileRemover&) = delete;
  FileRemover& operator=(const FileRemover&) = delete;

  void remove(std::string path);
  void wait_idle();

 private:
  void run();

  RemoveFn remove_;
  std::mutex mu_;
  std::condition_variable work_;
  std::condition_variable idle_;
  std::deque<std::string> queue_;
  bool busy_ = false;  // a removal taken off the queue is under way
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zkraft::consensus
