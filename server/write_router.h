#pragma once
// WriteRouter: takes a server's writes to the log and keeps track of what is in flight.
//
//  - On the leader a write is stamped with the leader's wall clock and proposed; on a follower it
//    is forwarded to the leader unstamped (a ForwardedWrite PeerMessage) and the leader stamps it
//    when it proposes it, so every transaction time comes from the leader's clock, once.
//  - Every client write and sync gets a request id that its committed entry (origin_request) or
//    read point (the ReadIndex context) brings back; take() turns it into the queue slot waiting
//    for it. When the leader changes, everything in flight may or may not commit: fail_all()
//    hands every waiting slot back so the server can fail it (ZooKeeper drops those clients).
//  - sync waits for a read point confirmed by a quorum, then for the local apply to reach it.
//  - A reconfig is stamped, where it is proposed, with the servers the leader sees in sync
//    (Txn::synced), the one leader-local fact ZooKeeper's reconfig checks need.
//
// No I/O of its own: it talks to the ReplicatedLog and reads the Clock it is given.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/clock.h"
#include "server/replicated_log.h"
#include "server/session_queue.h"
#include "server/txn.h"

namespace zkraft::server {

// The queue slot an outcome goes to.
struct Waiter {
  uint64_t conn = 0;
  SessionQueue::Seq seq = 0;
};

class WriteRouter {
 public:
  WriteRouter(ReplicatedLog& log, const Clock& clock) : log_(log), clock_(clock) {}

  // A client write: stamps origin and request id, proposes or forwards. Returns the request id,
  // or 0 (nothing sent) when no leader is known.
  uint64_t submit(Txn txn, const Waiter& waiter);
  // A write of the leader's own (expiry, reaping): proposed only if this server leads.
  bool propose_own(Txn txn);
  // A follower's ForwardedWrite arrived: the leader stamps and proposes it; anyone else drops it
  // (its origin fails the request when it learns of the leader change).
  void on_forwarded(std::string txn);

  // sync: asks for a read point. Returns the request id, or 0 when no leader is known.
  uint64_t request_read_point(const Waiter& waiter);
  // The read point for `request_id` arrived: the requests ready at `applied` are returned by
  // release(); a failed read point is returned at once.
  void on_read_index(uint64_t request_id, uint64_t index, bool ok);
  // Syncs whose read point is now applied, and failed ones (ok = false).
  struct Released {
    uint64_t request_id;
    bool ok;
  };
  std::vector<Released> release(uint64_t applied);

  // The slot waiting for `request_id` (once; nullopt if none, e.g. already failed).
  std::optional<Waiter> take(uint64_t request_id);
  bool waiting(uint64_t request_id) const { return waiters_.count(request_id) != 0; }
  // Every waiting slot (the leader changed); the table is empty afterwards.
  std::vector<Waiter> fail_all();

  size_t in_flight() const { return waiters_.size(); }
  // Syncs whose read point arrived and is not applied yet (mntr zk_pending_syncs).
  size_t pending_syncs() const { return read_points_.size(); }
  bool has_syncs_to_release() const { return !read_points_.empty() || !failed_reads_.empty(); }

 private:
  void stamp_synced(Txn& txn) const;

  ReplicatedLog& log_;
  const Clock& clock_;
  uint64_t next_request_id_ = 1;
  std::unordered_map<uint64_t, Waiter> waiters_;
  std::multimap<uint64_t, uint64_t> read_points_;  // index -> request id
  std::vector<uint64_t> failed_reads_;
};

}  // namespace zkraft::server
