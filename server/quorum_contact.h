#pragma once
// How old this server's last known contact with a quorum is, from the figures the Raft thread
// last copied (RaftReplicatedLog refreshes them every 50 ms). Pure, so the rule is tested alone.
//
// Invariants: the age never understates the truth (one tick is added for the tick the core has
// not counted yet, and a late copy only makes it older); a leader that is the only voter is its
// own quorum and is always in contact. The second rule matters under load: the TSan run of the
// integration suites showed a standalone server whose Raft thread copied its figures 350 ms to
// 3.7 s late close every client as "lost contact with a quorum"; ZooKeeper's standalone server
// has no quorum to lose.

#include <algorithm>
#include <cstdint>

#include "server/replicated_log.h"

namespace zkraft::server {

inline int64_t quorum_contact_age_ms(int64_t contact_ms, bool own_quorum, int64_t now_ms, int64_t tick_ms) {
  if (own_quorum) return 0;
  if (contact_ms == ReplicatedLog::kNoQuorumContact) return ReplicatedLog::kNoQuorumContact;
  return std::max<int64_t>(0, now_ms - contact_ms) + tick_ms;
}

}  // namespace zkraft::server
