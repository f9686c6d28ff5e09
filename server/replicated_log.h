#pragma once
// What the server needs from the log: propose an entry, and learn in log order which entries are
// committed (durable on a majority). The standalone server uses a one-node log (LocalLog); the
// ensemble uses Raft behind the same interface.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace zkraft::server {

class ReplicatedLog {
 public:
  // Called on the server's io thread, once per committed entry, in index order.
  using ApplyFn = std::function<void(uint64_t index, std::string_view data)>;

  virtual ~ReplicatedLog() = default;
  // Replays every committed entry already in the log (start-up); returns the last index.
  virtual uint64_t recover(const ApplyFn& apply) = 0;
  // Starts delivering newly committed entries to `apply`.
  virtual void start(ApplyFn apply) = 0;
  // Appends an entry; it reaches `apply` once committed. False if this server cannot accept
  // writes now (not the leader, storage failed): the caller answers the client with an error.
  virtual bool propose(std::string data) = 0;
  virtual void stop() = 0;

  // For 4lw/metrics.
  virtual uint64_t fsync_count() const = 0;
};

}  // namespace zkraft::server
