#pragma once
// ForkedSnapshot: serialises the state machine in a child process, so that the state thread
// stops only for fork() (the page tables are copied; the pages themselves are shared
// copy-on-write) instead of for the whole serialisation, and clients and applies go on meanwhile.
// The child sees the state exactly as it was at the fork, which is the consistent image a
// snapshot at the last applied index needs; the parent's later writes copy the pages they touch.
//
// The child closes every descriptor but its pipe (a socket the parent closes must not stay open
// in the child), dies with the parent (PR_SET_PDEATHSIG), writes an 8-byte length and the bytes
// `serialize` returned to the pipe, and leaves with _exit. A reader thread of this object collects
// the bytes and reaps the child; `done` gets them, or nullopt when the child failed (killed,
// short output, non-zero exit), from that reader thread. Those bytes are the snapshot itself (the
// admin snapshot), or only a small result when `serialize` wrote the snapshot to a file itself
// (RaftReplicatedLog's snapshots for consensus: consensus/snapshot_file_writer.h).
//
// Once the child is reaped and `done` has returned, the reader thread write-faults the parent's
// resident private pages (server/resident_prefault.h), which fork() left write-protected, so that
// the threads serving clients do not fault them one at a time; the destructor stops it early.
//
// Why fork is safe here: the child is single-threaded and runs only the serialiser, which takes
// no lock but malloc's (glibc's fork leaves malloc usable in the child) and makes plain system
// calls; it logs nothing.

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace zkraft::server {

class ForkedSnapshot {
 public:
  using Serialize = std::function<std::string()>;
  using Done = std::function<void(std::optional<std::string> bytes)>;

  // Forks the child and starts the reader; nullptr (with the reason in *error) when pipe() or
  // fork() failed, and then `done` is never called.
  static std::unique_ptr<ForkedSnapshot> start(const Serialize& serialize, Done done,
                                               std::string* error);
  // Kills a child that is still running and joins the reader (`done` then gets nullopt).
  ~ForkedSnapshot();

  ForkedSnapshot(const ForkedSnapshot&) = delete;
  ForkedSnapshot& operator=(const ForkedSnapshot&) = delete;

 private:
  ForkedSnapshot(pid_t child, int read_fd, Done done);
  void read_and_reap();

  pid_t child_;
  int read_fd_;
  Done done_;
  std::mutex mu_;
  bool reaped_ = false;  // under mu_: after it the pid may belong to another process
  std::atomic<bool> stop_prefault_{false};
  std::thread reader_;
};

}  // namespace zkraft::server
