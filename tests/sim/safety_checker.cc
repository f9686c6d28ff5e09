#include "tests/sim/safety_checker.h"

namespace zkraft::sim {

using consensus::Entry;
using consensus::Index;
using consensus::NodeId;
using consensus::RaftCore;
using consensus::Term;

uint64_t hash_bytes(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {
uint64_t entry_hash(const Entry& e) {
  return hash_bytes(e.data, 1469598103934665603ull ^ static_cast<uint64_t>(e.type));
}
}  // namespace

void SafetyChecker::fail(std::string why) {
  if (violation_.empty()) violation_ = std::move(why);
}

void SafetyChecker::check_leader_has(NodeId leader, const RaftCore& core, Index index,
                                     const Committed& c) {
  const auto& log = core.log();
  if (index <= log.offset()) return;  // compacted: covered by its snapshot
  auto t = log.term(index);
  if (!t || *t != c.term) {
    fail("leader completeness: leader " + std::to_string(leader) + " of term " +
         std::to_string(core.term()) + " lacks committed entry " + std::to_string(index) +
         " (term " + std::to_string(c.term) + "), has term " + (t ? std::to_string(*t) : "none"));
  }
}

void SafetyChecker::observe_leader(NodeId id, const RaftCore& core) {
  auto [it, inserted] = leaders_.emplace(core.term(), id);
  if (!inserted) {
    if (it->second != id) {
      fail("election safety: two leaders in term " + std::to_string(core.term()) + ": " +
           std::to_string(it->second) + " and " + std::to_string(id));
    }
    return;
  }
  // A new leader: it must hold every entry known committed before its term.
  for (auto& [index, c] : committed_) {
    if (c.known_in_term < core.term()) check_leader_has(id, core, index, c);
  }
}

void SafetyChecker::observe_appended(NodeId id, const std::vector<Entry>& entries,
                                     const RaftCore& core) {
  for (const Entry& e : entries) {
    const Term prev = core.log().term(e.index - 1).value_or(0);
    Appended a{entry_hash(e), prev};
    auto [it, inserted] = appended_.emplace(std::make_pair(e.index, e.term), a);
    if (!inserted && (it->second.data_hash != a.data_hash || it->second.prev_term != a.prev_term)) {
      fail("log matching: node " + std::to_string(id) + " entry " + std::to_string(e.index) +
           " term " + std::to_string(e.term) + " differs from another log's entry there");
    }
  }
}

void SafetyChecker::observe_applied(NodeId id, const Entry& e, Term term, uint64_t sm_hash,
                                    const std::map<NodeId, const RaftCore*>& leaders) {
  Committed c{e.term, entry_hash(e), sm_hash, term};
  auto [it, inserted] = committed_.emplace(e.index, c);
  if (!inserted) {
    if (it->second.term != c.term || it->second.data_hash != c.data_hash) {
      fail("state machine safety: node " + std::to_string(id) + " applied a different entry at " +
           std::to_string(e.index) + " (term " + std::to_string(e.term) + " vs " +
           std::to_string(it->second.term) + ")");
    } else if (it->second.sm_hash != sm_hash) {
      fail("state machine safety: node " + std::to_string(id) + " state differs at index " +
           std::to_string(e.index));
    }
    return;
  }
  for (auto& [lid, core] : leaders) {
    if (core->term() > term) check_leader_has(lid, *core, e.index, c);
  }
}

void SafetyChecker::observe_snapshot_restored(NodeId id, Index index, uint64_t sm_hash) {
  auto it = committed_.find(index);
  if (it == committed_.end()) {
    fail("snapshot at " + std::to_string(index) + " restored on node " + std::to_string(id) +
         " covers an index no node applied");
    return;
  }
  if (it->second.sm_hash != sm_hash) {
    fail("state machine safety: snapshot restored on node " + std::to_string(id) + " at " +
         std::to_string(index) + " has a different state");
  }
}

}  // namespace zkraft::sim
