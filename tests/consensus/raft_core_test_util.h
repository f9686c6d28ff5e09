#pragma once
// A tiny synchronous driver for RaftCore unit tests: cores exchange messages through queues the
// test delivers explicitly; Ready batches are "persisted" instantly.

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "consensus/raft_core.h"

namespace zkraft::consensus::testing {

inline RaftConfig make_config(NodeId id, std::vector<NodeId> voters) {
  RaftConfig c;
  c.id = id;
  c.initial_membership.voters = std::move(voters);
  c.election_ticks = 10;
  c.heartbeat_ticks = 1;
  return c;
}

// A counter as random source: election timeouts become T + (k mod T).
inline RandomSource fixed_random(uint64_t v) {
  return [v] { return v; };
}

class TestNet {
 public:
  void add(NodeId id, std::vector<NodeId> voters, RecoveredState rec = {}, uint64_t jitter = 0,
           bool pre_vote = true, bool check_quorum = true) {
    RaftConfig cfg = make_config(id, std::move(voters));
    cfg.pre_vote = pre_vote;
    cfg.check_quorum = check_quorum;
    cfg.max_snapshot_chunk_bytes = snapshot_chunk;
    cfg.max_log_memory_bytes = log_memory_bytes;
    cores[id] = std::make_unique<RaftCore>(cfg, std::move(rec), fixed_random(jitter));
  }
  RaftCore& at(NodeId id) { return *cores.at(id); }

  // Processes every node's Ready (persist is instant), queuing its messages. Returns whether
  // anything happened.
  bool process_readies() {
    bool any = false;
    for (auto& [id, core] : cores) {
      while (core->has_ready()) {
        any = true;
        Ready rd = core->ready();
        last_ready[id] = rd;
        for (auto& m : rd.messages_now) queue.push_back(m);
        for (auto& m : rd.messages_after_persist) queue.push_back(m);
        for (auto& e : rd.committed_entries) applied[id].push_back(e);
        if (!rd.entries.empty()) appended[id].push_back(rd.entries);
        for (auto& r : rd.read_states) read_states[id].push_back(r);
        for (auto& c : rd.snapshot_chunks) received_chunks[id].push_back(c);
        if (rd.snapshot) installed[id].push_back({*rd.snapshot, rd.snapshot_size});
        core->advance(rd);
      }
    }
    return any;
  }
  // Delivers messages (dropping those on cut links) until the cluster is quiet.
  void stabilize(int max_rounds = 1000) {
    for (int i = 0; i < max_rounds; ++i) {
      process_readies();
      if (queue.empty()) return;
      std::deque<Message> batch;
      batch.swap(queue);
      for (auto& m : batch) {
        ++delivered[m.type];
        if (cut.count({m.from, m.to}) || !cores.count(m.to)) continue;
        cores.at(m.to)->step(m);
      }
    }
  }
  // Delivers the oldest queued message (if any); returns false if the queue was empty.
  bool deliver_one() {
    if (queue.empty()) return false;
    Message m = queue.front();
    queue.pop_front();
    ++delivered[m.type];
    if (!cut.count({m.from, m.to}) && cores.count(m.to)) cores.at(m.to)->step(m);
    return true;
  }
  void tick_all(int n = 1) {
    for (int i = 0; i < n; ++i) {
      for (auto& [id, c] : cores) c->tick();
    }
  }
  void isolate(NodeId id) {
    for (auto& [other, c] : cores) {
      if (other == id) continue;
      cut.insert({id, other});
      cut.insert({other, id});
    }
  }
  void heal() { cut.clear(); }
  // Ticks everyone until `id` is leader (it must be the only one whose timer fires first).
  void elect(NodeId id) {
    for (int i = 0; i < 100 && at(id).role() != Role::kLeader; ++i) {
      at(id).tick();
      stabilize();
    }
  }

  size_t snapshot_chunk = 1 << 20;
  size_t log_memory_bytes = 0;  // RaftConfig::max_log_memory_bytes of the cores added after
  std::map<NodeId, std::unique_ptr<RaftCore>> cores;
  std::deque<Message> queue;
  std::set<std::pair<NodeId, NodeId>> cut;
  std::map<NodeId, std::vector<Entry>> applied;
  std::map<NodeId, std::vector<ReadState>> read_states;
  std::map<NodeId, std::vector<std::vector<Entry>>> appended;  // Ready::entries batches
  std::map<NodeId, Ready> last_ready;
  std::map<NodeId, std::vector<SnapshotChunk>> received_chunks;  // Ready::snapshot_chunks, in order
  std::map<NodeId, std::vector<std::pair<SnapshotMeta, uint64_t>>> installed;  // Ready::snapshot, size
  std::map<MessageType, int> delivered;
};

}  // namespace zkraft::consensus::testing
