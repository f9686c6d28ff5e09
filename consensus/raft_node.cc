#include "consensus/raft_node.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "consensus/log_storage.h"
#include "consensus/messages.h"
#include "consensus/raft_node_bootstrap.h"

namespace zkraft::consensus {

namespace asio = boost::asio;

namespace {

// First byte of every transport payload. Not a Message format version on purpose: the tag is our
// own envelope, the Message encoding stays opaque to it.
constexpr char kTagRaft = 'R';
constexpr char kTagApp = 'A';

std::string tagged(char tag, std::string_view body) {
  std::string out;
  out.reserve(body.size() + 1);
  out.push_back(tag);
  out.append(body);
  return out;
}

uint64_t seed_for(NodeId id) {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ (id * 0x9E3779B97F4A7C15ull) ^
         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

struct RaftNode::Alive {
  bool alive = true;
};

void RaftApplication::on_fatal_error(const std::string& what) {
  spdlog::critical("raft node: fatal storage error: {}", what);
  std::abort();
}

RaftNode::RaftNode(asio::io_context& io, RaftNodeOptions options, RaftApplication& app)
    : io_(io),
      options_(std::move(options)),
      app_(app),
      alive_(std::make_shared<Alive>()),
      ticker_(io),
      rng_(seed_for(options_.id)) {}

RaftNode::~RaftNode() {
  stop();
  alive_->alive = false;
}

// ---------------------------------------------------------------- lifecycle

bool RaftNode::open(std::string* error) {
  std::string err;
  if (opened_) {
    if (error) *error = "raft node already opened";
    return false;
  }
  auto storage = LogStorage::open(options_.dir, options_.storage, &err);
  if (!storage) {
    if (error) *error = err;
    return false;
  }
  Membership bootstrap;
  if (!load_or_record_bootstrap_membership(options_.dir, options_.initial_membership, &bootstrap, &err)) {
    if (error) *error = err;
    return false;
  }

  RecoveredState rec;
  rec.hard_state = storage->hard_state();
  if (storage->snapshot_meta()) {
    Status s = storage->load_snapshot(&rec.snapshot, &rec.snapshot_data);
    if (!s.is_ok()) {
      if (error) *error = "loading snapshot from " + options_.dir + ": " + s.to_string();
      return false;
    }
  }
  const Index from = std::max(storage->first_index(), rec.snapshot.index + 1);
  if (storage->last_index() >= from) {
    Status s = storage->entries(from, storage->last_index() + 1, UINT64_MAX, &rec.entries);
    if (!s.is_ok()) {
      if (error) *error = "loading log from " + options_.dir + ": " + s.to_string();
      return false;
    }
  }
  rec.applied = rec.snapshot.index;

  applied_ = rec.snapshot.index;
  last_snapshot_index_ = rec.snapshot.index;
  if (rec.snapshot.index > 0) {
    applied_membership_ = rec.snapshot.membership;
    app_.restore_snapshot(rec.snapshot, rec.snapshot_data);
    app_.on_membership(applied_membership_);
  } else {
    applied_membership_ = bootstrap;
  }
  spdlog::info("raft node {}: recovered {} (snapshot {}, log {}..{}, term {}, commit {})", options_.id,
               options_.dir, rec.snapshot.index, from, storage->last_index(), rec.hard_state.term,
               rec.hard_state.commit);

  RaftConfig rc;
  rc.id = options_.id;
  rc.initial_membership = bootstrap;
  rc.election_ticks = options_.election_ticks;
  rc.heartbeat_ticks = options_.heartbeat_ticks;
  core_ = std::make_unique<RaftCore>(rc, std::move(rec), [this] { return rng_(); });

  GroupCommitOptions go;
  go.sync = options_.fsync;
  log_ = std::make_unique<GroupCommitLog>(std::move(storage), go);

  PeerTransportOptions to;
  to.self_id = options_.id;
  to.cluster_name = options_.cluster_name;
  to.max_message_bytes = options_.max_message_bytes;
  PeerTransport::Handlers h;
  // Transport handlers run on a strand of io_, i.e. on the io thread; after transport stop()
  // returns none starts, so `this` is valid whenever they run.
  h.on_message = [this](NodeId from, std::string payload) { on_transport_message(from, std::move(payload)); };
  h.on_peer_down = [this](NodeId peer) { on_peer_down(peer); };
  transport_ = std::make_unique<PeerTransport>(io_, to, std::move(h));
  Status s = transport_->listen(options_.listen_host, options_.listen_port);
  if (!s.is_ok()) {
    if (error) *error = "peer listener on " + options_.listen_host + ":" + std::to_string(options_.listen_port) +
                        ": " + s.to_string();
    return false;
  }
  opened_ = true;
  return true;
}

uint16_t RaftNode::peer_port() const { return transport_ ? transport_->port() : 0; }

void RaftNode::start() {
  if (!opened_ || started_ || stopped_) return;
  started_ = true;
  for (const auto& [id, addr] : options_.peers) {
    if (id != options_.id) transport_->add_peer(id, addr.host, addr.port);
  }
  log_->start();
  schedule_tick();
  schedule_pump();  // re-applies the recovered committed entries right away
}

void RaftNode::stop() {
  if (stopped_) return;
  stopped_ = true;
  ticker_.cancel();
  if (transport_) transport_->stop();
  // Finishes what was queued; its completions are posted and then ignored (stopped_).
  if (log_) log_->stop();
}

void RaftNode::fail(const std::string& what) {
  spdlog::critical("raft node {}: {}", options_.id, what);
  stop();
  app_.on_fatal_error(what);
}

// ---------------------------------------------------------------- inputs

void RaftNode::schedule_tick() {
  ticker_.expires_after(std::chrono::milliseconds(options_.tick_ms));
  ticker_.async_wait([this, alive = alive_](boost::system::error_code ec) {
    if (ec || !alive->alive) return;
    on_tick();
  });
}

void RaftNode::on_tick() {
  if (stopped_) return;
  core_->tick();
  schedule_tick();
  after_input();
}

void RaftNode::on_transport_message(NodeId from, std::string payload) {
  if (stopped_ || payload.empty()) return;
  if (payload[0] == kTagRaft) {
    Message m;
    std::string err;
    if (!decode_message(std::string_view(payload).substr(1), m, &err)) {
      spdlog::warn("raft node {}: dropping malformed message from {}: {}", options_.id, from, err);
      return;
    }
    if (m.from != from) {
      spdlog::warn("raft node {}: dropping message claiming to be from {} on {}'s connection", options_.id,
                   m.from, from);
      return;
    }
    core_->step(m);
    after_input();
  } else if (payload[0] == kTagApp) {
    payload.erase(0, 1);
    app_.on_app_message(from, std::move(payload));
    after_input();
  } else {
    spdlog::warn("raft node {}: dropping payload with unknown tag {} from {}", options_.id,
                 static_cast<int>(static_cast<unsigned char>(payload[0])), from);
  }
}

void RaftNode::on_peer_down(NodeId peer) {
  if (stopped_ || !core_ || !options_.fast_failover) return;
  // The transport reports each direction of a connection separately; the core ignores the second
  // call (it no longer follows that leader).
  if (peer == options_.id || peer != core_->leader()) return;
  spdlog::info("raft node {}: connection to leader {} broke", options_.id, peer);
  core_->broken_leader_connection();
  after_input();
}

ProposeResult RaftNode::propose(std::string data) {
  if (!started_ || stopped_) return ProposeResult{RaftError::kNotLeader, 0, 0, 0};
  ProposeResult r = core_->propose(std::move(data));
  schedule_pump();
  return r;
}

RaftError RaftNode::read_index(uint64_t context) {
  if (!started_ || stopped_) return RaftError::kNotLeader;
  RaftError e = core_->read_index(context);
  schedule_pump();
  return e;
}

ProposeResult RaftNode::change_membership(const ConfChange& cc) {
  if (!started_ || stopped_) return ProposeResult{RaftError::kNotLeader, 0, 0, 0};
  ProposeResult r = core_->propose_conf_change(cc);
  schedule_pump();
  return r;
}

RaftError RaftNode::transfer_leadership(NodeId to) {
  if (!started_ || stopped_) return RaftError::kNotLeader;
  RaftError e = core_->transfer_leadership(to);
  schedule_pump();
  return e;
}

void RaftNode::add_peer(NodeId id, const PeerAddress& addr) {
  if (id == options_.id) return;
  options_.peers[id] = addr;
  if (started_ && !stopped_) transport_->add_peer(id, addr.host, addr.port);
}

void RaftNode::send_app_message(NodeId to, std::string payload) {
  if (!started_ || stopped_) return;
  if (to == options_.id) {
    asio::post(io_, [this, alive = alive_, p = std::move(payload)]() mutable {
      if (!alive->alive || stopped_) return;
      app_.on_app_message(options_.id, std::move(p));
      after_input();
    });
    return;
  }
  transport_->send(to, tagged(kTagApp, payload));
}

// ---------------------------------------------------------------- Ready processing

// Calls the application makes (propose, read_index, ...) do not process the Ready inline: the
// application would otherwise see its own callbacks (apply, on_leader_change) re-enter from inside
// its call. One posted pump serves every call made in the same io handler (more batching, too).
void RaftNode::schedule_pump() {
  if (pump_posted_ || stopped_) return;
  pump_posted_ = true;
  asio::post(io_, [this, alive = alive_] {
    if (!alive->alive) return;
    pump_posted_ = false;
    after_input();
  });
}

void RaftNode::after_input() {
  if (stopped_) return;
  pump();
  notify_leader_change();
}

void RaftNode::send_raft(const Message& m) { transport_->send(m.to, tagged(kTagRaft, encode_message(m))); }

// One Ready at a time (ready_in_flight_ covers the disk write and the application callbacks, so
// a proposal made from inside app.apply() simply waits for the next Ready). A loop, not
// recursion, handles consecutive Readies that need no disk wait.
void RaftNode::pump() {
  while (!stopped_ && started_ && !ready_in_flight_ && core_->has_ready()) {
    auto rd = std::make_shared<Ready>(core_->ready());
    ready_in_flight_ = true;
    for (const Message& m : rd->messages_now) send_raft(m);

    auto on_written = [this, alive = alive_, rd](Status s) {
      // Runs on the storage thread: hop back to the io thread.
      asio::post(io_, [this, alive, rd, s = std::move(s)] {
        if (!alive->alive || stopped_) return;
        if (!s.is_ok()) {
          fail("persisting Raft state failed: " + s.to_string());
          return;
        }
        finish_ready(rd);
        after_input();
      });
    };

    if (rd->snapshot) {
      // A snapshot from the leader: store it first (the storage discards a log it does not
      // match), then the entries and hard state after it; GroupCommitLog keeps run() and
      // submit() in order.
      auto saved = std::make_shared<Status>();
      log_->run([meta = *rd->snapshot, data = rd->snapshot_data, saved](LogStorage& s) {
        *saved = s.save_snapshot(meta, data);
      });
      log_->submit(std::move(rd->entries), rd->hard_state,
                   [saved, on_written](Status s) {
                     // The run() task finished before this callback on the same thread.
                     if (s.is_ok() && !saved->is_ok()) s = *saved;
                     on_written(std::move(s));
                   });
      return;
    }
    if (rd->must_sync()) {
      log_->submit(std::move(rd->entries), rd->hard_state, on_written, /*need_sync=*/true);
      return;
    }
    if (rd->has_writes()) {
      // Only the commit index moved: write it without waiting (losing it in a crash is safe; the
      // leader tells us again), but still surface a write error.
      log_->submit(std::move(rd->entries), rd->hard_state,
                   [this, alive = alive_](Status s) {
                     if (s.is_ok()) return;
                     asio::post(io_, [this, alive, s] {
                       if (!alive->alive || stopped_) return;
                       fail("persisting Raft hard state failed: " + s.to_string());
                     });
                   },
                   /*need_sync=*/false);
    }
    finish_ready(rd);
  }
}

void RaftNode::finish_ready(const std::shared_ptr<Ready>& rd) {
  for (const Message& m : rd->messages_after_persist) send_raft(m);
  if (rd->snapshot) {
    const SnapshotMeta& meta = *rd->snapshot;
    spdlog::info("raft node {}: installing snapshot at index {} term {} ({} bytes)", options_.id, meta.index,
                 meta.term, rd->snapshot_data.size());
    app_.restore_snapshot(meta, rd->snapshot_data);
    if (stopped_) return;
    applied_ = std::max(applied_, meta.index);
    last_snapshot_index_ = std::max(last_snapshot_index_, meta.index);
    applied_membership_ = meta.membership;
    app_.on_membership(applied_membership_);
    if (stopped_) return;
  }
  apply_entries(rd->committed_entries);
  if (stopped_) return;
  for (const ReadState& rs : rd->read_states) {
    app_.on_read_state(rs.context, rs.index);
    if (stopped_) return;
  }
  core_->advance(*rd);
  ready_in_flight_ = false;
  maybe_snapshot();
}

void RaftNode::apply_entries(const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    if (e.index <= applied_) continue;  // already covered by a restored snapshot
    applied_ = e.index;
    if (e.type == EntryType::kNormal) {
      app_.apply(e);
    } else if (e.type == EntryType::kConfChange) {
      auto cc = decode_conf_change(e.data);
      if (cc && apply_conf_change(applied_membership_, *cc)) {
        spdlog::info("raft node {}: membership change at index {} applied", options_.id, e.index);
        app_.on_membership(applied_membership_);
      }
    }
    if (stopped_) return;
  }
}

void RaftNode::maybe_snapshot() {
  if (stopped_ || options_.snapshot_every == 0) return;
  if (applied_ < last_snapshot_index_ + options_.snapshot_every) return;
  const Index index = std::min(applied_, core_->applied_index());
  std::string data = app_.take_snapshot();
  if (stopped_) return;
  SnapshotMeta meta = core_->snapshot_taken(index, data);
  // Counted as taken even if the core declined it, so a refusal cannot cause a snapshot per Ready.
  last_snapshot_index_ = std::max({last_snapshot_index_, meta.index, index});
  if (meta.index != index) return;  // the core holds a newer snapshot already (from the leader)
  const Index compact_to = meta.index > options_.keep_tail ? meta.index - options_.keep_tail : 0;
  spdlog::info("raft node {}: snapshot at index {} ({} bytes), compacting through {}", options_.id, meta.index,
               data.size(), compact_to);
  log_->run([this, alive = alive_, meta, data = std::move(data), compact_to](LogStorage& s) {
    Status st = s.save_snapshot(meta, data);
    if (st.code() == Status::Code::kSnapshotOutOfDate) return;  // a newer one is stored already
    if (st.is_ok() && compact_to >= s.first_index()) {
      st = s.compact(std::min({compact_to, meta.index, s.last_index()}));
    }
    if (!st.is_ok()) {
      asio::post(io_, [this, alive, st] {
        if (!alive->alive || stopped_) return;
        fail("storing snapshot failed: " + st.to_string());
      });
    }
  });
  core_->compact(compact_to);
}

void RaftNode::notify_leader_change() {
  if (stopped_ || !core_) return;
  const NodeId lead = core_->leader();
  const Term term = core_->term();
  const bool self = core_->role() == Role::kLeader;
  if (lead == notified_leader_ && term == notified_term_ && self == notified_self_leader_) return;
  notified_leader_ = lead;
  notified_term_ = term;
  notified_self_leader_ = self;
  if (lead != 0) spdlog::info("raft node {}: leader is {} in term {}", options_.id, lead, term);
  app_.on_leader_change(lead, term, self);
}

// ---------------------------------------------------------------- introspection

RaftStatus RaftNode::status() const { return core_ ? core_->status() : RaftStatus{}; }
NodeId RaftNode::leader() const { return core_ ? core_->leader() : 0; }
Term RaftNode::term() const { return core_ ? core_->term() : 0; }
bool RaftNode::is_leader() const { return core_ && core_->role() == Role::kLeader; }
Index RaftNode::commit_index() const { return core_ ? core_->commit_index() : 0; }
uint64_t RaftNode::fsync_count() const { return log_ ? log_->stats().fsyncs : 0; }
GroupCommitStats RaftNode::storage_stats() const { return log_ ? log_->stats() : GroupCommitStats{}; }
PeerTransportStats RaftNode::transport_stats() const {
  return transport_ ? transport_->stats() : PeerTransportStats{};
}

}  // namespace zkraft::consensus
