// run_random_seed: a cluster shape, fault schedule and workload all derived from one seed.

#include <algorithm>

#include "tests/sim/sim_cluster.h"

namespace zkraft::sim {

using consensus::ConfChange;
using consensus::ConfChangeType;

namespace {

NodeId pick(SimRng& rng, const std::vector<NodeId>& ids) { return ids[rng.below(ids.size())]; }

void random_conf_change(SimCluster& c, SimRng& rng, NodeId leader) {
  const auto& m = c.core(leader).membership();
  std::vector<NodeId> outsiders;
  for (NodeId id : c.node_ids()) {
    if (!consensus::is_voter(m, id) && !consensus::is_learner(m, id)) outsiders.push_back(id);
  }
  ConfChange cc;
  const uint64_t r = rng.below(3);
  if (r == 0 && !m.learners.empty()) {
    cc = {ConfChangeType::kPromoteLearner, pick(rng, m.learners)};
  } else if (r == 1 && !outsiders.empty()) {
    cc = {ConfChangeType::kAddLearner, pick(rng, outsiders)};
  } else if (m.voters.size() > 2) {
    cc = {ConfChangeType::kRemoveNode, pick(rng, m.voters)};
  } else if (!m.learners.empty()) {
    cc = {ConfChangeType::kRemoveNode, pick(rng, m.learners)};
  } else {
    return;
  }
  c.propose_conf_change(leader, cc);
}

}  // namespace

SeedResult run_random_seed(uint64_t seed, const RandomRunOptions& ro) {
  SimRng shape(seed ^ 0xC0FFEEull);
  SimOptions o;
  o.seed = seed;
  o.trace = ro.trace;
  o.voters = shape.chance(350) ? 5 : 3;
  o.spare_nodes = shape.chance(400) ? static_cast<int>(1 + shape.below(2)) : 0;
  o.raft.election_ticks = 10;
  o.tick_skew_ms = static_cast<int>(shape.below(3));  // clocks run up to 20% fast or slow
  o.raft.heartbeat_ticks = 1 + static_cast<int>(shape.below(3));
  o.raft.pre_vote = !shape.chance(100);
  o.raft.check_quorum = !shape.chance(100);
  o.raft.max_inflight_msgs = 1 + shape.below(8);
  o.raft.max_msg_bytes = 64 + shape.below(512);
  o.raft.max_snapshot_chunk_bytes = 256 + shape.below(2000);
  o.max_delay_ms = 2 + shape.below(15);
  o.loss_per_mille = shape.below(120);
  o.dup_per_mille = shape.below(60);
  o.slow_per_mille = shape.below(60);
  o.max_disk_ms = 1 + shape.below(8);
  o.snapshot_every = shape.chance(600) ? 5 + shape.below(30) : 0;
  o.keep_log_tail = shape.below(10);
  // Half the runs answer snapshot requests later, as a state machine on its own thread would.
  o.max_snapshot_delay_ms = shape.chance(500) ? 0 : 1 + shape.below(30);
  // Half the runs evict applied entries from memory beyond a budget of one to ~50 entries, so a
  // lagging follower is sent entries read back from storage. From a stream of its own, so that
  // every other decision of a seed is the same as without it.
  SimRng evict(seed ^ 0xE71C7ull);
  o.raft.max_log_memory_bytes = evict.chance(500) ? 0 : 32 + evict.below(2000);

  SimCluster c(o);
  SimRng& rng = c.rng();
  const std::vector<NodeId> ids = c.node_ids();
  uint64_t counter = 0;
  uint64_t read_ctx = 0;

  while (c.now() < ro.fault_ms && c.ok()) {
    c.run_for(1 + rng.below(30));
    NodeId l = c.leader();
    if (rng.chance(600)) {
      const NodeId target = (l != 0 && rng.chance(800)) ? l : pick(rng, ids);
      // Now and then a burst, to fill append batches and the in-flight window.
      const uint64_t n = rng.chance(50) ? 5 + rng.below(40) : 1;
      for (uint64_t k = 0; k < n; ++k) {
        c.propose(target, "v" + std::to_string(seed) + "." + std::to_string(counter++));
      }
    }
    const uint64_t r = rng.below(1000);
    if (r < 15) {
      // random partition into two or three groups
      std::vector<std::vector<NodeId>> groups(2 + rng.below(2));
      for (NodeId id : ids) groups[rng.below(groups.size())].push_back(id);
      c.partition(groups);
    } else if (r < 30) {
      c.heal();
    } else if (r < 40) {
      NodeId a = pick(rng, ids), b = pick(rng, ids);
      if (a != b) c.block(a, b);
    } else if (r < 48) {
      // Prefer a node in the middle of a write: that is where durability bugs hide.
      std::vector<NodeId> writing;
      for (NodeId id : ids) if (c.write_in_flight(id)) writing.push_back(id);
      c.crash(!writing.empty() && rng.chance(700) ? pick(rng, writing) : pick(rng, ids));
    } else if (r < 68) {
      NodeId id = pick(rng, ids);
      if (!c.is_up(id)) c.restart(id);
    } else if (r < 98) {
      if (l) random_conf_change(c, rng, l);
    } else if (r < 108) {
      if (l) c.transfer_leadership(l, pick(rng, ids));
    } else if (r < 125) {
      NodeId id = pick(rng, ids);
      if (c.is_up(id)) c.read_index(id, ++read_ctx);
    } else if (r < 130) {
      NodeId id = pick(rng, ids);
      if (c.is_up(id)) c.broken_leader_connection(id);
    } else if (r < 133) {
      c.take_snapshot(pick(rng, ids), rng.below(5));
    }
  }

  SeedResult res;
  res.seed = seed;
  if (c.ok()) {
    // Faults stop: every link up, every node running, a clean network.
    c.heal();
    for (NodeId id : ids) c.restart(id);
    c.set_loss(0);
    c.set_dup(0);
    c.set_slow(0);
    const std::string marker = "live." + std::to_string(seed);
    const uint64_t healed_at = c.now();
    const uint64_t deadline = c.now() + ro.liveness_ms;
    NodeId committed_on = 0;
    uint64_t last_propose = 0;
    bool proposed = false;
    while (c.now() < deadline && c.ok() && committed_on == 0) {
      c.run_for(10);
      NodeId l = c.leader();
      if (l && (!proposed || c.now() - last_propose > 500)) {
        if (c.propose(l, marker).ok()) {
          proposed = true;
          last_propose = c.now();
        }
      }
      for (NodeId id : ids) {
        const auto& d = c.applied_data(id);
        if (c.is_up(id) && std::find(d.begin(), d.end(), marker) != d.end() && l == id) committed_on = id;
      }
    }
    if (c.ok() && committed_on == 0) {
      res.failure = "liveness: no leader committed a new entry within " +
                    std::to_string(ro.liveness_ms) + " ms after faults stopped";
    }
    if (committed_on != 0) res.recovery_ms = c.now() - healed_at;
    if (c.ok() && committed_on != 0) {
      // Every member of the final configuration catches up to the leader's commit.
      const auto members = c.core(committed_on).membership();
      const consensus::Index target = c.core(committed_on).commit_index();
      auto caught_up = [&] {
        for (NodeId id : members.voters) if (c.applied(id) < target) return false;
        for (NodeId id : members.learners) if (c.applied(id) < target) return false;
        return true;
      };
      if (!c.run_until(caught_up, deadline > c.now() ? deadline - c.now() + 2000 : 2000)) {
        res.failure = "liveness: members did not catch up to index " + std::to_string(target);
      }
    }
  }
  if (!c.ok()) res.failure = "safety: " + c.checker().violation();
  if (!res.failure.empty()) res.failure += "\n" + c.describe();
  res.ok = res.failure.empty();
  res.trace_hash = c.trace_hash();
  res.events = c.events();
  res.committed = c.checker().committed_count();
  res.counters = c.counters();
  return res;
}

}  // namespace zkraft::sim
