#pragma once
// FileRemover: removes files on a thread of its own, for LogStorage's old snapshot files. Why: on
// ext4 removing a snapshot file of ~190 MB (freeing its blocks) took 50 to 230 ms per call on the
// storage thread under the 3-server snapshot load, and every log write, so every acknowledgement,
// waited behind it (docs/benchmarks.md, 2026-12-06).
//
// Invariants: files are removed in the order given, each once; a removal that fails is logged
// (nothing else depends on it: LogStorage::open sweeps files nothing names); wait_idle() returns
// only once everything queued before it is removed; the destructor removes what is still queued
// before it returns.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace zkraft::consensus {

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
