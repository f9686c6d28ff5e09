#pragma once
// Session ids the way ZooKeeper makes them, so ids look familiar in logs and 4lw output and
// stay unique across servers: the top byte is the server id, the next 40 bits the creation time.

#include <cstdint>

namespace zkraft::session {

// ZooKeeper's SessionTrackerImpl.initializeNextSessionId:
// (server_id << 56) | ((now_ms << 24) >>> 8), skipping Long.MIN_VALUE (the container owner marker).
int64_t initial_session_id(int64_t server_id, int64_t now_ms);

// Hands out session ids: the first is initial_session_id(server_id, now_ms), then +1 each.
// A plain value (copyable; peek() and reset() let its owner persist it) so a replicated state
// machine can own one and every replica assigns the same ids when it applies the same entries.
class SessionIdGenerator {
 public:
  SessionIdGenerator() = default;
  SessionIdGenerator(int64_t server_id, int64_t now_ms) : next_(initial_session_id(server_id, now_ms)) {}

  int64_t next() { return next_++; }
  int64_t peek() const { return next_; }
  // Never hand out `id` or anything below it again (e.g. after loading a snapshot).
  void observe(int64_t id) {
    if (id >= next_) next_ = id + 1;
  }
  void reset(int64_t next_id) { next_ = next_id; }

 private:
  int64_t next_ = 1;
};

}  // namespace zkraft::session
