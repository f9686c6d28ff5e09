#pragma once
// ServingGate: whether this server may answer its clients now, decided from how long ago it last
// knew it was in contact with a quorum (ReplicatedLog::quorum_contact_age_ms). Pure: it is fed
// the age and says when the mode changes; the pipeline acts on the change (closes connections).
//
// Why a bound, and why this one. A server cut off from the majority must not keep its clients
// believing they are connected: the majority will expire their sessions and delete their
// ephemerals (another client takes the lock), while a client still served here would keep
// reading its own lock node. So a client in a minority partition must see Disconnected before
// the majority can expire its session. With T the negotiated session timeout:
//   - clients (Java, C, Kazoo) ping after T/3 of idleness (half their 2T/3 read timeout);
//   - the leader expires a session T after it last heard of it: a ping it served itself, or a
//     follower's report of the sessions it heard, sent every pipeline tick P. After a cut at C,
//     the newest ping the leader knows of is no older than C - P - T/3, so the majority expires
//     nothing before C + 2T/3 - P;
//   - this server checks the age every tick and before each batch of client messages, and the
//     age it is given never understates the truth, so it closes its clients by C + B + P.
// Safety needs B + P < 2T/3 - P for the smallest T a client can be granted (minSessionTimeout).
// We take B = T_min/3 and P <= T_min/12 (RequestPipeline::tick_interval_ms), which leaves at
// least T_min/6 between the close and the earliest expiry (667 ms with ZooKeeper's defaults,
// tickTime 2000, T_min 4000). Larger session timeouts only widen the margin. B never goes
// below kMinContactBoundMs: Raft heartbeats every 100 ms (server/raft_options.cc), so a shorter
// bound would close clients of a healthy server; a minSessionTimeout that forces the floor is
// warned about at start, because the margin above then no longer holds.
//
// Read-only mode (readonlymode.enabled): once cut off for ZooKeeper's grace period on top of
// the bound (QuorumPeer waits max(2000, tickTime) ms before starting its read-only server), the
// server accepts read-only clients; when contact returns, those are closed so that they
// reconnect as read/write clients, as ZooKeeper's ReadOnlyZooKeeperServer shuts down.
//
// Modes: kServing -> kCutOff (age > bound) -> kReadOnly (cut off for longer than the grace, if
// enabled); any mode -> kServing as soon as age <= bound. The gate starts cut off (nothing is
// known yet), so a server that starts without a quorum also waits out the grace.

#include <cstdint>
#include <optional>
#include <string_view>

#include "server/config.h"

namespace zkraft::server {

enum class ServingMode : uint8_t { kServing, kCutOff, kReadOnly };
std::string_view serving_mode_name(ServingMode m);

struct ServingPolicy {
  static constexpr int64_t kMinContactBoundMs = 300;

  int64_t contact_bound_ms = 1333;
  bool read_only_enabled = false;
  int64_t read_only_grace_ms = 2000;
  bool bound_is_floored = false;  // minSessionTimeout too short for the margin above

  static ServingPolicy from_config(const Config& config);
};

class ServingGate {
 public:
  explicit ServingGate(ServingPolicy policy) : policy_(policy) {}

  struct Change {
    ServingMode from;
    ServingMode to;
  };
  // The mode for a quorum contact `age_ms` old at monotonic time `now_ms`; a change when it
  // differs from the last one.
  std::optional<Change> update(int64_t age_ms, int64_t now_ms);

  ServingMode mode() const { return mode_; }
  bool serving() const { return mode_ == ServingMode::kServing; }
  bool read_only() const { return mode_ == ServingMode::kReadOnly; }
  const ServingPolicy& policy() const { return policy_; }

 private:
  ServingPolicy policy_;
  ServingMode mode_ = ServingMode::kCutOff;
  std::optional<int64_t> cut_off_since_ms_;  // monotonic; set by the first update while cut off
};

}  // namespace zkraft::server
