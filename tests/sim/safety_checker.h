#pragma once
// Raft safety properties checked by the simulation after every event.
//
//  - election safety: at most one leader per term;
//  - log matching: two logs holding an entry with the same index and term hold the same data
//    and agree on the term of the entry before it (so, inductively, on the whole prefix);
//  - state machine safety: every node applies the same entry at each index (and reaches the
//    same state-machine hash there);
//  - leader completeness / no committed entry lost: an entry known committed (applied anywhere)
//    while the applying node was in term Ta is in the log of every leader of a term > Ta.
// The first violation is kept as a message; later checks keep running but do not overwrite it.

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "consensus/raft_core.h"
#include "consensus/types.h"

namespace zkraft::sim {

uint64_t hash_bytes(const std::string& s, uint64_t h = 1469598103934665603ull);

class SafetyChecker {
 public:
  // A node is leader in `term` right now (called after every event for each leader).
  void observe_leader(consensus::NodeId id, const consensus::RaftCore& core);
  // A node handed entries out for persistence; `core` still holds them.
  void observe_appended(consensus::NodeId id, const std::vector<consensus::Entry>& entries,
                        const consensus::RaftCore& core);
  // A node applied entry `e` while in term `term`, reaching state-machine hash `sm_hash`.
  void observe_applied(consensus::NodeId id, const consensus::Entry& e, consensus::Term term,
                       uint64_t sm_hash, const std::map<consensus::NodeId, const consensus::RaftCore*>& leaders);
  // A node restored a snapshot at `index` with state-machine hash `sm_hash`.
  void observe_snapshot_restored(consensus::NodeId id, consensus::Index index, uint64_t sm_hash);

  // Records a failure found outside the checker (e.g. the harness saw an out-of-order apply).
  void report(std::string why) { fail(std::move(why)); }

  bool ok() const { return violation_.empty(); }
  const std::string& violation() const { return violation_; }
  size_t committed_count() const { return committed_.size(); }
  consensus::Index max_committed() const { return committed_.empty() ? 0 : committed_.rbegin()->first; }

 private:
  struct Committed {
    consensus::Term term;
    uint64_t data_hash;
    uint64_t sm_hash;
    consensus::Term known_in_term;
  };
  struct Appended {
    uint64_t data_hash;
    consensus::Term prev_term;
  };
  void fail(std::string why);
  void check_leader_has(consensus::NodeId leader, const consensus::RaftCore& core,
                        consensus::Index index, const Committed& c);

  std::map<consensus::Term, consensus::NodeId> leaders_;
  std::map<std::pair<consensus::Index, consensus::Term>, Appended> appended_;
  std::map<consensus::Index, Committed> committed_;
  std::string violation_;
};

}  // namespace zkraft::sim
