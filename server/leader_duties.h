#pragma once
// LeaderDuties: what a server does for the ensemble besides answering its own clients.
//
//  - Session liveness and expiry. The leader alone decides expiry: it tracks every session's
//    deadline on the MONOTONIC clock (a wall-clock step never expires anyone), hears from
//    followers which of their sessions showed signs of life, and proposes a closeSession
//    (expired) for each session whose deadline passed. A follower reports its sessions each tick;
//    without a leader nobody decides, and the next leader gives every session a full timeout.
//  - The container/TTL reaper (ZooKeeper's ContainerManager): every znode.container.checkIntervalMs
//    the leader looks for empty containers and expired TTL nodes (TTL is measured against znode
//    mtimes, i.e. the wall clock) and queues their removal; it proposes the queued removals at
//    most znode.container.maxPerMinute per minute, the first at once and then one every
//    60000 / maxPerMinute ms, as ContainerManager sleeps between its deletes. A path is queued or
//    proposed at most once until its removal applies. The first check comes one interval after
//    this server becomes leader, as ContainerManager's timer starts with one interval's delay.
//  - Membership: every server learns the peer addresses /zookeeper/config names; the leader moves
//    Raft's membership to it one change at a time (new servers join as learners and are promoted
//    once added; servers no longer named are removed, the leader itself last).
//
// No I/O and no clock of its own: tick() is given the time.

#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/config.h"
#include "server/replicated_log.h"
#include "server/write_router.h"
#include "server/zk_state_machine.h"
#include "session/session_expiry_tracker.h"
#include "session/touch_table.h"

namespace zkraft::server {

struct DutyOptions {
  int32_t tick_time_ms = 2000;
  bool standalone = true;                 // no membership to reconcile
  int64_t container_check_interval_ms = 60000;  // znode.container.checkIntervalMs
  int32_t container_max_per_minute = 10000;     // znode.container.maxPerMinute, > 0
  int64_t container_max_never_used_ms = 0;      // znode.container.maxNeverUsedIntervalMs
};

// The servers /zookeeper/config names (nullopt if it is missing or does not parse), and its
// version (-1: never reconfigured, the bootstrap membership stands).
struct ConfiguredMembership {
  std::vector<PeerConfig> servers;
  int32_t znode_version = -1;
};
std::optional<ConfiguredMembership> configured_membership(const ZkStateMachine& sm);

class LeaderDuties {
 public:
  LeaderDuties(const DutyOptions& options, const ZkStateMachine& sm, ReplicatedLog& log,
               WriteRouter& router);

  // Every session the state knows gets a full timeout from now (start-up).
  void reset(int64_t now_ms);

  // Liveness, all on the monotonic clock.
  void session_attached(int64_t id, int32_t timeout_ms, int64_t now_ms);  // handshake
  void session_heard(int64_t id, int32_t timeout_ms, int64_t now_ms);     // any request
  void sessions_alive(const std::vector<int64_t>& ids, int64_t now_ms);   // a follower's report

  // A close (client or expiry) was proposed / committed.
  void mark_closing(int64_t id) { closing_.insert(id); }
  bool closing(int64_t id) const { return closing_.count(id) != 0; }
  void session_closed(int64_t id);
  void session_created(int64_t id, int32_t timeout_ms, int64_t now_ms);
  void node_reaped(const std::string& path) { reaping_.erase(path); }

  void leader_changed(bool self, int64_t now_ms);
  // Learns the peer addresses of the members /zookeeper/config names.
  void learn_peers();

  // Runs the duties due at these times.
  void tick(int64_t monotonic_ms, int64_t wall_ms);

  const session::SessionExpiryTracker& expiry() const { return expiry_; }

 private:
  void expire_sessions(int64_t now_ms);
  void find_reap_candidates(int64_t monotonic_ms, int64_t wall_ms);
  void propose_reaps(int64_t monotonic_ms);
  void reconcile_membership();

  DutyOptions options_;
  const ZkStateMachine& sm_;
  ReplicatedLog& log_;
  WriteRouter& router_;
  session::SessionExpiryTracker expiry_;
  session::TouchTable touched_;  // sessions heard from since the last report to the leader
  std::set<int64_t> closing_;    // close or expiry proposed, not yet applied
  std::set<std::string> reaping_;       // queued or proposed, not yet applied
  std::deque<std::string> reap_queue_;  // found, not yet proposed (the per-minute cap)
  // Removals proposable now, in units of 1/60000 of a removal per ms per maxPerMinute: each ms
  // adds maxPerMinute, each removal costs 60000. Accrues only while the queue is not empty.
  int64_t reap_credit_ = 0;
  int64_t reap_credit_ms_ = 0;
  std::optional<int64_t> last_reap_ms_;
};

}  // namespace zkraft::server
