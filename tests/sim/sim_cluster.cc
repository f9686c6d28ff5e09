#include "tests/sim/sim_cluster.h"

#include <algorithm>
#include <cstdio>

namespace zkraft::sim {

using consensus::ConfChange;
using consensus::Entry;
using consensus::Index;
using consensus::Message;
using consensus::RaftCore;
using consensus::RaftDriver;
using consensus::Ready;

std::map<std::string, uint64_t> SimCluster::counters() const {
  std::map<std::string, uint64_t> c = counters_;
  for (const auto& [id, n] : nodes_) {
    c["snapshot.own_beside"] += n.storage.own_snapshots();
    c["snapshot.own_overtaken"] += n.storage.own_snapshots_overtaken();
    c["snapshot.own_file"] += n.storage.own_snapshot_files();
    c["snapshot.file_discarded"] += n.storage.snapshot_files_discarded();
    c["snapshot.received_stored"] += n.storage.received_stored();
    c["snapshot.received_lost"] += n.storage.received_lost();
    c["log.entry_loads"] += n.storage.entry_loads();
  }
  return c;
}

SimCluster::SimCluster(const SimOptions& options) : opt_(options), rng_(options.seed) {
  for (int i = 1; i <= opt_.voters; ++i) initial_.voters.push_back(static_cast<NodeId>(i));
  for (int i = 1; i <= opt_.voters + opt_.spare_nodes; ++i) {
    Node& n = nodes_[static_cast<NodeId>(i)];
    n.id = static_cast<NodeId>(i);
    n.rng = rng_.fork();
    n.io = std::make_unique<NodeIo>(*this, n.id);
    n.storage.set_seed(options.seed ^ (0xD1B54A32D192ED03ull * static_cast<uint64_t>(i)));
    n.app.files = &n.storage;
    n.storage.set_start_io([this, id = n.id] {
      schedule(now_ + rng_.between(opt_.min_disk_ms, opt_.max_disk_ms), EventKind::kDiskDone, id,
               nodes_.at(id).epoch);
    });
    if (opt_.max_snapshot_delay_ms > 0) {
      n.app.defer = [this, id = n.id](std::function<void()> answer) {
        schedule(now_ + rng_.below(opt_.max_snapshot_delay_ms + 1), EventKind::kTask, id, nodes_.at(id).epoch, {},
                 std::move(answer));
      };
    }
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
  n.applied = rec.snapshot.index;
  n.app.reset();
  SimRng* rng = &n.rng;
  consensus::RaftDriverOptions dopt;
  dopt.snapshot_every = opt_.snapshot_every;
  dopt.keep_tail = opt_.keep_log_tail;
  dopt.compact_step = 3;  // the sim's logs are short: several steps per snapshot, under faults
  // Restores the stored snapshot into n.app.
  n.driver = std::make_unique<RaftDriver>(cfg, std::move(rec), [rng] { return rng->next(); }, dopt,
                                          RaftDriver::Io{n.storage, *n.io, *n.io}, n.app, n.io.get());
  n.up = true;
  n.driver->start();
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
    if (n.up && n.driver->core().role() == consensus::Role::kLeader && n.driver->core().term() >= best_term) {
      best = id;
      best_term = n.driver->core().term();
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
    const auto st = n.driver->core().status();
    out += std::string(consensus::role_name(st.role)) + " term " + std::to_string(st.term) +
           " vote " + std::to_string(st.vote) + " leader " + std::to_string(st.leader) + " log " +
           std::to_string(st.first_index) + ".." + std::to_string(st.last_index) + " (last term " +
           std::to_string(n.driver->core().log().last_term()) + ") commit " + std::to_string(st.commit) +
           " applied " + std::to_string(st.applied) + " voters {" + ids(st.membership.voters) +
           "} learners {" + ids(st.membership.learners) + "}\n";
  }
  return out;
}

consensus::Index SimCluster::known_commit() const {
  consensus::Index c = 0;
  for (auto& [id, n] : nodes_) {
    if (n.up) c = std::max(c, n.driver->core().commit_index());
  }
  return c;
}

std::map<NodeId, const RaftCore*> SimCluster::current_leaders() const {
  std::map<NodeId, const RaftCore*> out;
  for (auto& [id, n] : nodes_) {
    if (n.up && n.driver->core().role() == consensus::Role::kLeader) out[id] = &n.driver->core();
  }
  return out;
}

void SimCluster::trace(const std::string& line) {
  trace_hash_ = hash_bytes(line, trace_hash_);
  if (opt_.trace) std::printf("%8llu %s\n", static_cast<unsigned long long>(now_), line.c_str());
}

void SimCluster::schedule(uint64_t at, EventKind kind, NodeId node, uint64_t epoch, std::string payload,
                          std::function<void()> task) {
  queue_.push(Event{at, seq_++, kind, node, epoch, std::move(payload), std::move(task)});
}

// ---------------------------------------------------------------- running

bool SimCluster::step_one() {
  if (queue_.empty()) return false;
  // top() is const only to protect the heap order, which pop() discards right after.
  Event ev = std::move(const_cast<Event&>(queue_.top()));
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
      n.driver->tick();
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
      n.driver->step(m);
      break;
    }
    case EventKind::kDiskDone:
      n.storage.disk_done();
      break;
    case EventKind::kTask:
      ev.task();
      break;
  }
}

void SimCluster::after_event() {
  for (auto& [id, n] : nodes_) {
    if (n.up && n.driver->core().role() == consensus::Role::kLeader) {
      if (leader_terms_.insert(n.driver->core().term()).second) ++counters_["leader.elected"];
      checker_.observe_leader(id, n.driver->core());
    }
  }
}

// ---------------------------------------------------------------- node I/O

void SimCluster::NodeIo::post(std::function<void()> task) {
  c_.schedule(c_.now_, EventKind::kTask, id_, c_.nodes_.at(id_).epoch, {}, std::move(task));
}

void SimCluster::NodeIo::send(const Message& m) {
  c_.check_promise(c_.nodes_.at(id_), m);
  c_.send(m);
}

void SimCluster::check_promise(const Node& n, const Message& m) {
  const consensus::HardState& hs = n.storage.hard_state();
  const std::string who = "durability: node " + std::to_string(n.id) + " ";
  if (m.type == consensus::MessageType::kVoteResponse && !m.reject) {
    if (hs.term < m.term || (hs.term == m.term && hs.vote != m.to)) {
      checker_.report(who + "granted its vote in term " + std::to_string(m.term) + " to " + std::to_string(m.to) +
                      " before it was on disk (disk: term " + std::to_string(hs.term) + " vote " +
                      std::to_string(hs.vote) + ")");
    }
  } else if (m.type == consensus::MessageType::kAppendResponse && !m.reject) {
    // Within one term a follower's log only grows, so the acknowledged index must be on disk; an
    // older term may have been overwritten by a newer leader in the same batch.
    if (hs.term < m.term) {
      checker_.report(who + "acknowledged in term " + std::to_string(m.term) + " before that term was on disk");
    } else if (hs.term == m.term && n.storage.durable_last_index() < m.index) {
      checker_.report(who + "acknowledged index " + std::to_string(m.index) + " in term " + std::to_string(m.term) +
                      " to " + std::to_string(m.to) + " with only " + std::to_string(n.storage.durable_last_index()) +
                      " on disk");
    }
  }
}

void SimCluster::NodeIo::on_ready(const Ready& rd) {
  c_.checker_.observe_appended(id_, rd.entries, c_.nodes_.at(id_).driver->core());
}

void SimCluster::NodeIo::on_applied(const Entry& e) {
  Node& n = c_.nodes_.at(id_);
  if (e.index != n.applied + 1) {
    c_.checker_.report("node " + std::to_string(id_) + " applied index " + std::to_string(e.index) +
                       " right after " + std::to_string(n.applied));
  }
  if (n.storage.durable_last_index() < e.index) {
    c_.checker_.report("durability: node " + std::to_string(id_) + " applied index " + std::to_string(e.index) +
                       " with only " + std::to_string(n.storage.durable_last_index()) + " on disk");
  }
  n.applied = e.index;
  if (e.type == consensus::EntryType::kConfChange) ++c_.counters_["apply.conf_change"];
  ++n.stats.applied_entries;
  c_.checker_.observe_applied(id_, e, n.driver->core().term(), n.app.hash, c_.current_leaders());
}

void SimCluster::NodeIo::on_snapshot_restored(const consensus::SnapshotMeta& meta, size_t) {
  Node& n = c_.nodes_.at(id_);
  n.applied = meta.index;
  ++n.stats.snapshots_restored;
  ++c_.counters_["snapshot.restored"];
  c_.trace("node " + std::to_string(id_) + " restored snapshot " + std::to_string(meta.index));
  c_.checker_.observe_snapshot_restored(id_, meta.index, n.app.hash);
}

void SimCluster::NodeIo::on_membership_applied(consensus::Index index, const consensus::Membership& m) {
  ++c_.counters_["apply.membership_changed"];
  std::string line = "node " + std::to_string(id_) + " membership at " + std::to_string(index) + ":";
  for (NodeId v : m.voters) line += " v" + std::to_string(v);
  for (NodeId l : m.learners) line += " l" + std::to_string(l);
  c_.trace(line);
}

void SimCluster::NodeIo::on_read_state(const consensus::ReadState& rs) {
  Node& n = c_.nodes_.at(id_);
  // Linearizable reads: the read point covers everything committed before the request.
  auto it = n.read_floor.find(rs.context);
  if (it != n.read_floor.end() && rs.index < it->second) {
    c_.checker_.report("stale read index: node " + std::to_string(id_) + " got " + std::to_string(rs.index) +
                       " for a read issued when " + std::to_string(it->second) + " was committed");
  }
  c_.trace("read_state " + std::to_string(id_) + " ctx " + std::to_string(rs.context) + " index " +
           std::to_string(rs.index));
  ++c_.counters_["read_state"];
}

void SimCluster::NodeIo::on_snapshot_taken(const consensus::SnapshotMeta& meta, size_t, consensus::Index through) {
  c_.trace("node " + std::to_string(id_) + " snapshot at " + std::to_string(meta.index) + " compact " +
           std::to_string(through));
  ++c_.counters_["snapshot.taken"];
}

void SimCluster::NodeIo::on_snapshot_loaded(const consensus::SnapshotMeta& meta, size_t bytes) {
  c_.trace("node " + std::to_string(id_) + " read snapshot at " + std::to_string(meta.index) + " back (" +
           std::to_string(bytes) + " bytes)");
  ++c_.counters_["snapshot.loaded"];
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
  const bool may_tear = n.storage.tearable() && opt_.tear_per_mille && rng_.chance(opt_.tear_per_mille);
  n.storage.crash(rng_, may_tear);
  n.up = false;
  ++n.epoch;
  n.driver.reset();
  n.app.read_states.clear();
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
  auto r = n.driver->propose(data);
  trace("propose " + std::to_string(id) + " " + data + " -> " + consensus::raft_error_name(r.error));
  after_event();
  return r;
}

consensus::ProposeResult SimCluster::propose_conf_change(NodeId id, const ConfChange& cc) {
  Node& n = nodes_.at(id);
  if (!n.up) return consensus::ProposeResult{consensus::RaftError::kNotLeader, 0, 0, 0};
  auto r = n.driver->change_membership(cc);
  trace("confchange " + std::to_string(id) + " type " + std::to_string(static_cast<int>(cc.type)) +
        " node " + std::to_string(cc.node) + " -> " + consensus::raft_error_name(r.error));
  after_event();
  return r;
}

consensus::RaftError SimCluster::transfer_leadership(NodeId id, NodeId to) {
  Node& n = nodes_.at(id);
  if (!n.up) return consensus::RaftError::kNotLeader;
  auto r = n.driver->transfer_leadership(to);
  trace("transfer " + std::to_string(id) + " -> " + std::to_string(to));
  after_event();
  return r;
}

consensus::RaftError SimCluster::read_index(NodeId id, uint64_t context) {
  Node& n = nodes_.at(id);
  if (!n.up) return consensus::RaftError::kNotLeader;
  n.read_floor[context] = std::max(known_commit(), checker_.max_committed());
  auto r = n.driver->read_index(context);
  trace("read_index " + std::to_string(id) + " ctx " + std::to_string(context));
  return r;
}

void SimCluster::broken_leader_connection(NodeId id) {
  Node& n = nodes_.at(id);
  if (!n.up) return;
  trace("broken_leader_connection " + std::to_string(id));
  n.driver->broken_leader_connection();
  after_event();
}

void SimCluster::take_snapshot(NodeId id, uint64_t keep_tail) {
  Node& n = nodes_.at(id);
  if (!n.up) return;
  n.driver->snapshot_now(keep_tail);
}

}  // namespace zkraft::sim
