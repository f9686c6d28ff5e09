#pragma once
// SessionQueue: one client connection's requests, answered strictly in arrival order (ZooKeeper's
// per-session FIFO guarantee). A read waits at the head until everything before it was answered,
// so it sees the session's own earlier writes; a write or sync waits for its outcome (a commit, a
// read point) wherever it is, and is answered only once it reaches the head.
//
// Every request gets a sequence number, consecutive per queue, so an outcome finds its request in
// O(1) (seq - front seq) instead of scanning the queue.
//
// Invariants (checked in every build): replies leave from the head only and in sequence order; an
// in-flight request is answered once; a request never leaves before its answer.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <variant>

#include "jute/request.h"

namespace zkraft::server {

struct QueuedRequest {
  // Executed against the local tree when it reaches the head.
  struct Read {
    jute::RequestBody body;
  };
  // A write (or sync) whose outcome is awaited: `request_id` is how the outcome names it.
  struct InFlight {
    uint64_t request_id = 0;
    bool close_after = false;  // closeSession: close once answered
    std::string sync_path;     // sync: the path its reply echoes
  };
  // The answer is known (framed reply, possibly empty: close without a reply).
  struct Answered {
    std::string reply;
    bool close_after = false;
  };

  int32_t xid = 0;
  int32_t op = 0;
  bool is_connect = false;
  int64_t received_ms = 0;  // monotonic: decoded on the network thread
  // The slow-request log's stages (monotonic): reached the state thread (and, for a write, was
  // proposed), and had its outcome (a write's apply, a sync's read point); 0 = not yet.
  int64_t handled_ms = 0;
  int64_t answered_ms = 0;
  std::string path;  // a write's path, kept only while the slow-request log is on
  std::variant<Read, InFlight, Answered> state;
};

class SessionQueue {
 public:
  using Seq = uint64_t;

  Seq push(QueuedRequest r);
  // The request with this sequence number while it is queued, else nullptr.
  QueuedRequest* find(Seq seq);
  // Gives an in-flight request its answer. False if it is no longer queued.
  bool answer(Seq seq, std::string reply, bool close_after);

  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }
  QueuedRequest& front() { return queue_.front(); }
  Seq front_seq() const { return front_seq_; }
  // Removes the head, which must be a Read or Answered request.
  QueuedRequest pop_front();
  // Requests still waiting for an outcome (writes, syncs).
  size_t in_flight() const { return in_flight_; }

 private:
  std::deque<QueuedRequest> queue_;
  Seq front_seq_ = 1;  // sequence number of queue_.front()
  size_t in_flight_ = 0;
};

// Flow control (ZooKeeper's per-connection and global outstanding limits): stop reading from a
// connection while it, or the server as a whole, has this many requests queued.
struct FlowLimits {
  size_t per_connection = 1000;
  size_t global = 1000;
};
inline bool over_flow_limits(size_t queued, size_t global_outstanding, const FlowLimits& limits) {
  return queued >= limits.per_connection || global_outstanding >= limits.global;
}

}  // namespace zkraft::server
