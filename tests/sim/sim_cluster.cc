#include "tests/sim/sim_cluster.h"

#include <algorithm>
#include <cstdio>

namespace zkraft::sim {

using consensus::ConfChange;
using consensus::Entry;
using consensus::Index;
using consensus::Message;
using consensus::RaftCore;
using consensus::Ready;

namespace {

// The simulated state machine's snapshot: applied index and state hash, padded so that it
// takes several chunks to send.
std::string encode_sm(Index index, uint64_t hash) {
  std::string out = std::to_string(index) + ":" + std::to_string(hash) + ":";
  out.resize(3000, '.');
  return out;
}

bool decode_sm(const std::string& s, Index& index, uint64_t& hash) {
  auto a = s.find(':');
  if (a == std::string::npos) return false;
  auto b = s.find(':', a + 1);
  if (b == std::string::npos) return false;
  index = std::stoull(s.substr(0, a));
  hash = std::stoull(s.substr(a + 1, b - a - 1));
  return true;
}

uint64_t mix(uint64_t h, const Entry& e) {
  h ^= e.index * 0x9E3779B97F4A7C15ull;
  h = hash_bytes(e.data, h ^ e.term);
  return h;
}

}  // namespace

SimCluster::SimCluster(const SimOptions& options) : opt_(options), rng_(options.seed) {
  for (int i = 1; i <= opt_.voters; ++i) initial_.voters.push_back(static_cast<NodeId>(i));
  for (int i = 1; i <= opt_.voters + opt_.spare_nodes; ++i) {
    Node& n = nodes_[static_cast<NodeId>(i)];
    n.id = static_cast<NodeId>(i);
    n.rng = rng_.fork();
    n.tick_interval = static_cast<uint64_t>(opt_.tick_ms);
    if (opt_.tick_skew_ms > 0) {
      n.tick_interval = static_cast<uint64_t>(opt_.tick_ms - opt_.tick_skew_ms) +
                        rng_.below(2 * static_cast<uint64_t>(opt_.tick_skew_ms) + 1);
    }
    start_node(n);
  }
}

void SimCluster::start_node(Node& n) {
  consensus::RaftConfig cfg = opt_.raft;
  cfg.id = n.id;
  // Every node, including ones that join later, knows the bootstrap membership.
  cfg.initial_membership = initial_;
  consensus::RecoveredState rec = n.storage.recover();
  n.sm_applied = rec.snapshot.index;
  n.sm_hash = 0;
  n.last_snapshot = rec.snapshot.index;
  if (rec.snapshot.index > 0) decode_sm(rec.snapshot_data, n.sm_applied, n.sm_hash);
  SimRng* rng = &n.rng;
  n.core = std::make_unique<RaftCore>(cfg, std::move(rec), [rng] { return rng->next(); });
  n.up = true;
  n.inflight.reset();
  // Ticks start at a random phase per node.
  schedule(now_ + 1 + rng_.below(static_cast<uint64_t>(opt_.tick_ms)), EventKind::kTick, n.id, n.epoch);
}

std::vector<NodeId> SimCluster::node_ids() const {
  std::vector<NodeId> ids;
  for (auto& [id, n] : nodes_) ids.push_back(id);
  return ids;
}

NodeId SimCluster::leader() const {
  NodeId best = 0;
  consensus::Term best_term = 0;
  for (auto& [id, n] : nodes_) {
    if (n.up && n.core->role() == consensus::Role::kLeader && n.core->term() >= best_term) {
      best = id;
      best_term = n.core->term();
    }
  }
  return best;
}

std::string SimCluster::describe() const {
  std::string out;
  auto ids = [](const std::vector<NodeId>& v) {
    std::string s;
    for (NodeId id : v) s += (s.empty() ? "" : ",") + std::to_string(id);
    return s;
  };
  for (auto& [id, n] : nodes_) {
    out += "  node " + std::to_string(id) + ": ";
    if (!n.up) {
      out += "down\n";
      continue;
    }
    const auto st = n.core->status();
    out += std::string(consensus::role_name(st.role)) + " term " + std::to_string(st.term) +
           " vote " + std::to_string(st.vote) + " leader " + std::to_string(st.leader) + " log " +
           std::to_string(st.first_index) + ".." + std::to_string(st.last_index) + " (last term " +
           std::to_string(n.core->log().last_term()) + ") commit " + std::to_string(st.commit) +
           " applied " + std::to_string(st.applied) + " voters {" + ids(st.membership.voters) +
           "} learners {" + ids(st.membership.learners) + "}\n";
  }
  return out;
}

consensus::Index SimCluster::known_commit() const {
  consensus::Index c = 0;
  for (auto& [id, n] : nodes_) {
    if (n.up) c = std::max(c, n.core->commit_index());
  }
  return c;
}

std::map<NodeId, const RaftCore*> SimCluster::current_leaders() const {
  std::map<NodeId, const RaftCore*> out;
  for (auto& [id, n] : nodes_) {
    if (n.up && n.core->role() == consensus::Role::kLeader) out[id] = n.core.get();
  }
  return out;
}

void SimCluster::trace(const std::string& line) {
  trace_hash_ = hash_bytes(line, trace_hash_);
  if (opt_.trace) std::printf("%8llu %s\n", static_cast<unsigned long long>(now_), line.c_str());
}

void SimCluster::schedule(uint64_t at, EventKind kind, NodeId node, uint64_t epoch, std::string payload) {
  queue_.push(Event{at, seq_++, kind, node, epoch, std::move(payload)});
}

// ---------------------------------------------------------------- running

bool SimCluster::step_one() {
  if (queue_.empty()) return false;
  Event ev = queue_.top();
  queue_.pop();
  now_ = ev.time;
  handle(ev);
  after_event();
  ++events_;
  return true;
}

void SimCluster::run_for(uint64_t ms) {
  const uint64_t end = now_ + ms;
  while (!queue_.empty() && queue_.top().time <= end) step_one();
  now_ = end;
}

bool SimCluster::run_until(const std::function<bool()>& pred, uint64_t max_ms) {
  const uint64_t end = now_ + max_ms;
  if (pred()) return true;
  while (!queue_.empty() && queue_.top().time <= end) {
    step_one();
    if (pred()) return true;
  }
  now_ = end;
  return pred();
}

void SimCluster::handle(const Event& ev) {
  Node& n = nodes_.at(ev.node);
  if (!n.up || ev.epoch != n.epoch) return;  // the node crashed since this was scheduled
  switch (ev.kind) {
    case EventKind::kTick:
      n.core->tick();
      schedule(now_ + n.tick_interval, EventKind::kTick, n.id, n.epoch);
      break;
    case EventKind::kDeliver: {
      Message m;
      std::string error;
      if (!consensus::decode_message(ev.payload, m, &error)) {
        std::fprintf(stderr, "sim: undecodable message: %s\n", error.c_str());
        std::abort();
      }
      // Links cut while the message was in flight lose it too.
      if (blocked_.count({m.from, m.to}) || (drop_ && drop_(m))) break;
      trace("recv " + std::to_string(m.from) + "->" + std::to_string(m.to) + " " +
            consensus::message_type_name(m.type) + " t" + std::to_string(m.term) + " i" +
            std::to_string(m.index) + " n" + std::to_string(m.entries.size()) +
            (m.reject ? " rej" : ""));
      ++counters_[std::string("recv.") + consensus::message_type_name(m.type)];
      n.core->step(m);
      break;
    }
    case EventKind::kDiskDone:
      disk_done(n);
      break;
  }
  pump(n);
}

void SimCluster::after_event() {
  for (auto& [id, n] : nodes_) {
    if (n.up && n.core->role() == consensus::Role::kLeader) {
      if (leader_terms_.insert(n.core->term()).second) ++counters_["leader.elected"];
      checker_.observe_leader(id, *n.core);
    }
  }
}

// ---------------------------------------------------------------- node I/O

void SimCluster::pump(Node& n) {
  if (!n.up || n.inflight || !n.core->has_ready()) return;
  Ready rd = n.core->ready();
  checker_.observe_appended(n.id, rd.entries, *n.core);
  for (const Message& m : rd.messages_now) send(m);
  if (!rd.must_sync()) {
    // Nothing to persist: complete at once (still in order: persist, send, apply, advance).
    n.inflight = std::move(rd);
    disk_done(n);
    pump(n);
    return;
  }
  n.inflight = std::move(rd);
  schedule(now_ + rng_.between(opt_.min_disk_ms, opt_.max_disk_ms), EventKind::kDiskDone, n.id, n.epoch);
}

void SimCluster::disk_done(Node& n) {
  if (!n.inflight) return;
  Ready rd = std::move(*n.inflight);
  n.inflight.reset();
  n.storage.persist(rd);
  for (const Message& m : rd.messages_after_persist) send(m);
  if (rd.snapshot) {
    Index idx = 0;
    uint64_t h = 0;
    decode_sm(rd.snapshot_data, idx, h);
    n.sm_applied = idx;
    n.sm_hash = h;
    n.last_snapshot = idx;
    ++n.stats.snapshots_restored;
    ++counters_["snapshot.restored"];
    trace("node " + std::to_string(n.id) + " restored snapshot " + std::to_string(idx));
    checker_.observe_snapshot_restored(n.id, idx, h);
  }
  for (const Entry& e : rd.committed_entries) apply_entry(n, e);
  for (const auto& rs : rd.read_states) {
    // Linearizable reads: the read point covers everything committed before the request.
    auto it = n.read_floor.find(rs.context);
    if (it != n.read_floor.end() && rs.index < it->second) {
      checker_.report("stale read index: node " + std::to_string(n.id) + " got " +
                      std::to_string(rs.index) + " for a read issued when " +
                      std::to_string(it->second) + " was committed");
    }
    trace("read_state " + std::to_string(n.id) + " ctx " + std::to_string(rs.context) + " index " +
          std::to_string(rs.index));
    n.read_states.push_back(rs);
    ++counters_["read_state"];
  }
  n.core->advance(rd);
  maybe_snapshot(n, false, opt_.keep_log_tail);
}

void SimCluster::apply_entry(Node& n, const Entry& e) {
  if (e.index != n.sm_applied + 1) {
    checker_.report("node " + std::to_string(n.id) + " applied index " + std::to_string(e.index) +
                    " right after " + std::to_string(n.sm_applied));
  }
  n.sm_hash = mix(n.sm_hash, e);
  n.sm_applied = e.index;
  if (e.type == consensus::EntryType::kNormal && !e.data.empty()) n.applied_data.push_back(e.data);
  if (e.type == consensus::EntryType::kConfChange) ++counters_["apply.conf_change"];
  ++n.stats.applied_entries;
  checker_.observe_applied(n.id, e, n.core->term(), n.sm_hash, current_leaders());
}

void SimCluster::maybe_snapshot(Node& n, bool force, uint64_t keep_tail) {
  if (!force && (opt_.snapshot_every == 0 || n.sm_applied < n.last_snapshot + opt_.snapshot_every)) return;
  if (n.sm_applied <= n.last_snapshot) return;
  const Index at = n.sm_applied;
  auto meta = n.core->snapshot_taken(at, encode_sm(at, n.sm_hash));
  if (meta.index != at) return;
  n.storage.save_snapshot(meta, encode_sm(at, n.sm_hash));
  n.last_snapshot = at;
  const Index through = at > keep_tail ? at - keep_tail : 0;
  n.core->compact(through);
  n.storage.compact(std::min(through, n.core->log().offset()));
  trace("node " + std::to_string(n.id) + " snapshot at " + std::to_string(at));
  ++counters_["snapshot.taken"];
}

void SimCluster::send(const Message& m) {
  const std::string bytes = consensus::encode_message(m);
  if (!nodes_.count(m.to)) return;
  if (blocked_.count({m.from, m.to}) || (drop_ && drop_(m))) return;
  if (opt_.loss_per_mille && rng_.chance(opt_.loss_per_mille)) return;
  int copies = (opt_.dup_per_mille && rng_.chance(opt_.dup_per_mille)) ? 2 : 1;
  for (int c = 0; c < copies; ++c) {
    uint64_t delay = rng_.between(opt_.min_delay_ms, opt_.max_delay_ms);
    if (opt_.slow_per_mille && rng_.chance(opt_.slow_per_mille)) delay *= 10;
    schedule(now_ + delay, EventKind::kDeliver, m.to, nodes_.at(m.to).epoch, bytes);
  }
}

// ---------------------------------------------------------------- faults

void SimCluster::block(NodeId from, NodeId to) { blocked_.insert({from, to}); }
void SimCluster::unblock(NodeId from, NodeId to) { blocked_.erase({from, to}); }

void SimCluster::isolate(NodeId id) {
  for (auto& [other, n] : nodes_) {
    if (other == id) continue;
    block(id, other);
    block(other, id);
  }
  trace("isolate " + std::to_string(id));
}

void SimCluster::partition(const std::vector<std::vector<NodeId>>& groups) {
  blocked_.clear();
  std::map<NodeId, size_t> group_of;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (NodeId id : groups[g]) group_of[id] = g;
  }
  for (auto& [a, na] : nodes_) {
    for (auto& [b, nb] : nodes_) {
      if (a == b) continue;
      auto ga = group_of.find(a), gb = group_of.find(b);
      const size_t x = ga == group_of.end() ? SIZE_MAX - a : ga->second;
      const size_t y = gb == group_of.end() ? SIZE_MAX - b : gb->second;
      if (x != y) block(a, b);
    }
  }
  std::string line = "partition";
  for (auto& g : groups) {
    line += " [";
    for (NodeId id : g) line += std::to_string(id) + " ";
    line += "]";
  }
  trace(line);
}

void SimCluster::heal() {
  blocked_.clear();
  trace("heal");
}

void SimCluster::crash(NodeId id) {
  Node& n = nodes_.at(id);
  if (!n.up) return;
  if (n.inflight && opt_.tear_per_mille && rng_.chance(opt_.tear_per_mille)) {
    n.storage.tear(*n.inflight, rng_);
  }
  n.inflight.reset();
  n.up = false;
  ++n.epoch;
  n.core.reset();
  n.read_states.clear();
  trace("crash " + std::to_string(id));
  ++counters_["crash"];
}

void SimCluster::restart(NodeId id) {
  Node& n = nodes_.at(id);
  if (n.up) return;
  ++n.epoch;
  start_node(n);
  trace("restart " + std::to_string(id));
}

// ---------------------------------------------------------------- client actions

consensus::ProposeResult SimCluster::propose(NodeId id, const std::string& data) {
  Node& n = nodes_.at(id);
  if (!n.up) return consensus::ProposeResult{consensus::RaftError::kNotLeader, 0, 0, 0};
  auto r = n.core->propose(data);
  trace("propose " + std::to_string(id) + " " + data + " -> " + consensus::raft_error_name(r.error));
  pump(n);
  after_event();
  return r;
}

consensus::ProposeResult SimCluster::propose_conf_change(NodeId id, const ConfChange& cc) {
  Node& n = nodes_.at(id);
  if (!n.up) return consensus::ProposeResult{consensus::RaftError::kNotLeader, 0, 0, 0};
  auto r = n.core->propose_conf_change(cc);
  trace("confchange " + std::to_string(id) + " type " + std::to_string(static_cast<int>(cc.type)) +
        " node " + std::to_string(cc.node) + " -> " + consensus::raft_error_name(r.error));
  pump(n);
  after_event();
  return r;
}

consensus::RaftError SimCluster::transfer_leadership(NodeId id, NodeId to) {
  Node& n = nodes_.at(id);
  if (!n.up) return consensus::RaftError::kNotLeader;
  auto r = n.core->transfer_leadership(to);
  trace("transfer " + std::to_string(id) + " -> " + std::to_string(to));
  pump(n);
  after_event();
  return r;
}

consensus::RaftError SimCluster::read_index(NodeId id, uint64_t context) {
  Node& n = nodes_.at(id);
  if (!n.up) return consensus::RaftError::kNotLeader;
  n.read_floor[context] = std::max(known_commit(), checker_.max_committed());
  auto r = n.core->read_index(context);
  trace("read_index " + std::to_string(id) + " ctx " + std::to_string(context));
  pump(n);
  return r;
}

void SimCluster::broken_leader_connection(NodeId id) {
  Node& n = nodes_.at(id);
  if (!n.up) return;
  n.core->broken_leader_connection();
  trace("broken_leader_connection " + std::to_string(id));
  pump(n);
  after_event();
}

void SimCluster::take_snapshot(NodeId id, uint64_t keep_tail) {
  Node& n = nodes_.at(id);
  if (!n.up) return;
  maybe_snapshot(n, true, keep_tail);
}

}  // namespace zkraft::sim
