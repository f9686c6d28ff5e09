#pragma once
// Read-only introspection of a Raft core, for metrics (zk_synced_followers, ...) and tests.

#include <cstdint>
#include <vector>

#include "consensus/progress.h"
#include "consensus/types.h"

namespace zkraft::consensus {

enum class Role : uint8_t { kFollower, kPreCandidate, kCandidate, kLeader };
const char* role_name(Role r);

struct PeerStatus {
  NodeId id = 0;
  Index match = 0;
  Index next = 0;
  ProgressState state = ProgressState::kProbe;
  bool learner = false;
  bool recent_active = false;
};

struct RaftStatus {
  NodeId id = 0;
  Role role = Role::kFollower;
  Term term = 0;
  NodeId vote = 0;
  NodeId leader = 0;
  Index commit = 0;
  Index applied = 0;
  Index first_index = 0;
  Index last_index = 0;
  Term first_term = 0;  // of first_index (0 when the log holds no entry)
  Term last_term = 0;
  Index snapshot_index = 0;  // latest snapshot the core can send
  // The log's entries in memory: those after evicted_index, of log_memory_bytes (entry_size).
  Index evicted_index = 0;
  uint64_t log_memory_bytes = 0;
  Membership membership;
  NodeId transferee = 0;    // leadership transfer in progress to this node
  uint64_t quorum_contact_age_ticks = UINT64_MAX;  // RaftCore::quorum_contact_age_ticks()
  std::vector<PeerStatus> peers;  // leader only: every other member's progress
};

}  // namespace zkraft::consensus
