#include "consensus/raft_node.h"

#include <boost/asio/post.hpp>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "consensus/heap_release.h"
#include "consensus/invariant.h"
#include "consensus/log_storage.h"
#include "consensus/messages.h"
#include "consensus/raft_node_bootstrap.h"
#include "consensus/received_snapshot.h"

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

// The driver's view of this node's world: GroupCommitLog as its storage, PeerTransport (through
// the Raft tag) as its transport, the io_context as its executor; as its observer it logs and,
// on a fatal storage error, stops the node.
class RaftNode::Wiring final : public RaftDriverStorage,
                               public RaftDriverTransport,
                               public RaftDriverExecutor,
                               public RaftDriverObserver {
 public:
  explicit Wiring(RaftNode& node) : node_(node) {}

  void write(std::vector<Entry> entries, std::optional<HardState> hs, bool need_sync, Done done) override {
    node_.log_->submit(std::move(entries), hs, std::move(done), need_sync);
  }

  void store_snapshot_chunk(SnapshotChunk chunk, Done done) override {
    // A run() task: in order with the writes, and the file the chunks go to is the storage
    // thread's alone.
    node_.log_->run([this, chunk = std::move(chunk), done = std::move(done)](LogStorage& s) {
      if (!received_) received_ = std::make_unique<ReceivedSnapshot>(s);
      done(received_->write(chunk));
    });
  }

  void store_snapshot(const SnapshotMeta& meta, Done done) override {
    // Ordered with submit(): everything submitted before is durable when this runs, and the
    // completion runs before those of later submissions.
    node_.log_->run([this, meta, done = std::move(done)](LogStorage& s) {
      Status st = received_ ? received_->publish(meta)
                            : Status::invalid_argument("no chunk of the leader's snapshot was written");
      warn_if_disk_full(meta, st);
      done(std::move(st));
    });
  }

  void store_own_snapshot(const SnapshotMeta& meta, SnapshotBytes data, Index compact_through, Done done) override {
    GroupCommitLog& log = *node_.log_;
    log.store_snapshot_beside(meta, std::move(data),
                              [&log, id = node_.options_.id, meta, compact_through,
                               done = std::move(done)](LogStorage& s, Status st) {
                                compact_then_trim(log, s, st, id, meta, compact_through);
                                warn_if_disk_full(meta, st);
                                done(std::move(st));
                              });
  }

  std::optional<SnapshotFileTarget> own_snapshot_file() override {
    return node_.log_->storage().snapshot_file_target();
  }

  void store_own_snapshot_file(const SnapshotMeta& meta, const SnapshotFileWritten& file, Index compact_through,
                               Done done) override {
    // The file is written and synced already: only the record remains, in order with the writes
    // (a run() task: behind everything submitted so far, ahead of everything after).
    GroupCommitLog& log = *node_.log_;
    log.run([&log, id = node_.options_.id, meta, file, compact_through, done = std::move(done)](LogStorage& s) {
      Status st = s.publish_snapshot_file(meta, file);
      compact_then_trim(log, s, st, id, meta, compact_through);
      warn_if_disk_full(meta, st);
      done(std::move(st));
    });
  }

  void discard_own_snapshot_file(const SnapshotFileWritten& file) override {
    node_.log_->storage().discard_snapshot_file(file);
  }

  // On the storage thread, once an own snapshot is stored: compacts the stored log behind it, in
  // steps behind later writes (compacting is never needed for durability: a crash between steps
  // keeps a longer log, which recovers the same state), and gives the heap's free pages back at
  // the next pause in the writes. By then the core has dropped its in-memory log up to the
  // snapshot (~27 MB for 100,000 creates of 100 B) and the compaction's batches are gone.
  // The heap keeps freed pages resident until told (release_free_heap: glibc's malloc_trim, or a
  // purge of jemalloc's arenas), and with the tree's blocks in their own pool (tree/block_pool.h)
  // what the heap frees is mostly whole pages. At a pause rather than at once
  // on the Raft thread, where each trim held the thread 20 to 42 ms while 1,000,000 znodes were
  // created (every heartbeat and Ready waited; docs/benchmarks.md): under load freed memory is
  // reused anyway, and a trim at once missed what was freed after it (the compaction's batches).
  static void compact_then_trim(GroupCommitLog& log, LogStorage& s, const Status& st, NodeId id,
                                const SnapshotMeta& meta, Index compact_through) {
    if (st.is_ok() && compact_through > 0 && compact_through >= s.first_index()) {
      log.compact_in_steps(std::min({compact_through, meta.index, s.last_index()}));
    }
    log.run_once_idle([id, index = meta.index](LogStorage&) {
      auto t0 = std::chrono::steady_clock::now();
      std::string_view what = release_free_heap();
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
      spdlog::info("raft node {}: writes paused after the snapshot at index {}; {} in {} us", id, index, what,
                   us.count());
    });
  }

  static void warn_if_disk_full(const SnapshotMeta& meta, const Status& st) {
    if (st.code() == Status::Code::kNoSpace) {
      spdlog::warn("snapshot at index {} not stored, the disk is full ({}); the log is kept whole", meta.index,
                   st.message());
    }
  }

  void load_snapshot(Loaded done) override {
    // On the storage thread, in order with the writes. Mapped on demand: the checksum pass reads
    // the file once (it may hold up fsyncs for as long as that takes, ~1 s per GB); then only
    // what is being read is in memory, and it is the page cache's, not the heap's.
    node_.log_->run([done = std::move(done)](LogStorage& s) {
      SnapshotMeta meta;
      auto mapped = std::make_shared<LogStorage::MappedSnapshot>();
      Status st = s.map_snapshot(&meta, mapped.get(), LogStorage::Mapping::kOnDemand);
      if (st.is_ok()) {
        done(st, meta, std::move(mapped));
        return;
      }
      if (st.code() != Status::Code::kUnavailable || !s.snapshot_meta()) {
        done(st, meta, nullptr);
        return;
      }
      std::string data;  // stored in chunks (before snapshot files): read whole
      st = s.load_snapshot(&meta, &data);
      done(st, meta, snapshot_in_memory(std::move(data)));
    });
  }

  void load_entries(Index lo, Index hi, size_t max_bytes, EntriesLoaded done) override {
    // On the storage thread, in order with the writes; recent entries are still in LevelDB's
    // memtable or the page cache.
    node_.log_->run([lo, hi, max_bytes, &count = node_.entries_read_back_, done = std::move(done)](LogStorage& s) {
      std::vector<Entry> entries;
      Status st = hi < lo ? Status::invalid_argument("an empty range") : s.entries(lo, hi + 1, max_bytes, &entries);
      if (st.is_ok()) count.fetch_add(entries.size(), std::memory_order_relaxed);
      done(st, std::move(entries));
    });
  }

  void send(const Message& m) override { node_.send_raft(m); }

  void post(std::function<void()> task) override { asio::post(node_.io_, std::move(task)); }

  void on_snapshot_restored(const SnapshotMeta& meta, size_t bytes) override {
    spdlog::info("raft node {}: installed snapshot at index {} term {} ({} bytes)", node_.options_.id, meta.index,
                 meta.term, bytes);
  }
  void on_membership_applied(Index index, const Membership&) override {
    spdlog::info("raft node {}: membership change at index {} applied", node_.options_.id, index);
  }
  void on_snapshot_taken(const SnapshotMeta& meta, size_t bytes, Index compact_through) override {
    // The heap is trimmed later, at a pause in the writes (compact_then_trim).
    spdlog::info("raft node {}: snapshot at index {} ({} bytes), compacting through {}", node_.options_.id,
                 meta.index, bytes, compact_through);
  }
  void on_snapshot_loaded(const SnapshotMeta& meta, size_t bytes) override {
    spdlog::info("raft node {}: read the snapshot at index {} ({} bytes) back to send it to a follower",
                 node_.options_.id, meta.index, bytes);
  }
  void on_leader_change(NodeId leader, Term term, bool) override {
    if (leader == last_leader_) return;
    if (leader != 0) {
      spdlog::info("raft node {}: leader is {} in term {} (was {})", node_.options_.id, leader, term,
                   last_leader_);
    } else {
      spdlog::warn("raft node {}: leader {} lost in term {}", node_.options_.id, last_leader_, term);
    }
    last_leader_ = leader;
  }
  void on_fatal_error(const std::string& what) override {
    spdlog::critical("raft node {}: {}: stopping, nothing more is acknowledged", node_.options_.id, what);
    node_.stop();
  }

 private:
  RaftNode& node_;
  NodeId last_leader_ = 0;
  std::unique_ptr<ReceivedSnapshot> received_;  // storage thread only
};

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
  // The snapshot is mapped and checksummed on a thread of its own while this one reads the log
  // after it: with 1,000,000 znodes and 100,000 entries after them, each took ~140 ms of a
  // restart, one after the other (docs/benchmarks.md, 2026-12-06).
  const std::optional<SnapshotMeta> stored = storage->snapshot_meta();
  Status snapshot_status = Status::ok();
  std::thread snapshot_reader;
  if (stored) {
    snapshot_reader = std::thread([&storage, &rec, &snapshot_status] {
      pthread_setname_np(pthread_self(), "zk-open");  // shown by top -H, ps -L, perf
      // Mapped, and unmapped once restored from: the core reads it back if a follower needs it.
      auto mapped = std::make_shared<LogStorage::MappedSnapshot>();
      Status s = storage->map_snapshot(&rec.snapshot, mapped.get());
      if (s.is_ok()) {
        rec.snapshot_bytes = std::move(mapped);
      } else if (s.code() == Status::Code::kUnavailable) {  // in chunks (written before files)
        std::string data;
        s = storage->load_snapshot(&rec.snapshot, &data);
        rec.snapshot_bytes = snapshot_in_memory(std::move(data));
        rec.keep_snapshot_bytes = true;
      }
      snapshot_status = std::move(s);
    });
  }
  const Index from = std::max(storage->first_index(), (stored ? stored->index : 0) + 1);
  Status log_status = Status::ok();
  if (storage->last_index() >= from) {
    log_status = storage->entries(from, storage->last_index() + 1, UINT64_MAX, &rec.entries);
  }
  if (snapshot_reader.joinable()) snapshot_reader.join();
  if (!snapshot_status.is_ok()) {
    if (error) *error = "loading snapshot from " + options_.dir + ": " + snapshot_status.to_string();
    return false;
  }
  if (!log_status.is_ok()) {
    if (error) *error = "loading log from " + options_.dir + ": " + log_status.to_string();
    return false;
  }
  ZKRAFT_INVARIANT(rec.snapshot.index == (stored ? stored->index : 0),
                   "the log read follows the snapshot that was loaded");
  spdlog::info("raft node {}: recovered {} (snapshot {}, log {}..{}, term {}, commit {})", options_.id,
               options_.dir, rec.snapshot.index, from, storage->last_index(), rec.hard_state.term,
               rec.hard_state.commit);

  GroupCommitOptions go;
  go.sync = options_.fsync;
  go.fsync_warning_ms = options_.fsync_warning_ms;
  log_ = std::make_unique<GroupCommitLog>(std::move(storage), go);

  RaftConfig rc;
  rc.id = options_.id;
  rc.initial_membership = bootstrap;
  rc.election_ticks = options_.election_ticks;
  rc.heartbeat_ticks = options_.heartbeat_ticks;
  rc.max_log_memory_bytes = options_.max_log_memory_bytes;
  RaftDriverOptions dopt;
  dopt.snapshot_every = options_.snapshot_every;
  dopt.keep_tail = options_.keep_tail;
  dopt.snapshot_bytes = options_.snapshot_bytes;
  dopt.keep_tail_bytes = options_.keep_tail_bytes;
  wiring_ = std::make_unique<Wiring>(*this);
  // Hands a stored snapshot to app.restore_snapshot.
  driver_ = std::make_unique<RaftDriver>(rc, std::move(rec), [this] { return rng_(); }, dopt,
                                         RaftDriver::Io{*wiring_, *wiring_, *wiring_}, app_, wiring_.get());

  PeerTransportOptions to;
  to.self_id = options_.id;
  to.cluster_name = options_.cluster_name;
  to.auth = options_.peer_auth;
  to.tls = options_.peer_tls;
  to.tls_hostname_verification = options_.peer_tls_hostname_verification;
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
  driver_->start();  // re-applies the recovered committed entries right away
}

void RaftNode::stop() {
  if (stopped_) return;
  stopped_ = true;
  ticker_.cancel();
  if (driver_) driver_->stop();
  if (transport_) transport_->stop();
  // Finishes what was queued; its completions are posted and then ignored (the driver stopped).
  if (log_) log_->stop();
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
  schedule_tick();
  driver_->tick();
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
    driver_->step(m);
  } else if (payload[0] == kTagApp) {
    payload.erase(0, 1);
    app_.on_app_message(from, std::move(payload));
    driver_->after_input();
  } else {
    spdlog::warn("raft node {}: dropping payload with unknown tag {} from {}", options_.id,
                 static_cast<int>(static_cast<unsigned char>(payload[0])), from);
  }
}

void RaftNode::on_peer_down(NodeId peer) {
  if (stopped_ || !driver_ || !options_.fast_failover) return;
  // The transport reports each direction of a connection separately; the core ignores the second
  // call (it no longer follows that leader).
  if (peer == options_.id || peer != driver_->core().leader()) return;
  spdlog::info("raft node {}: connection to leader {} broke", options_.id, peer);
  driver_->broken_leader_connection();
}

ProposeResult RaftNode::propose(std::string data) {
  if (!started_ || stopped_) return ProposeResult{RaftError::kNotLeader, 0, 0, 0};
  return driver_->propose(std::move(data));
}

RaftError RaftNode::read_index(uint64_t context) {
  if (!started_ || stopped_) return RaftError::kNotLeader;
  return driver_->read_index(context);
}

ProposeResult RaftNode::change_membership(const ConfChange& cc) {
  if (!started_ || stopped_) return ProposeResult{RaftError::kNotLeader, 0, 0, 0};
  return driver_->change_membership(cc);
}

RaftError RaftNode::transfer_leadership(NodeId to) {
  if (!started_ || stopped_) return RaftError::kNotLeader;
  return driver_->transfer_leadership(to);
}

void RaftNode::snapshot_now() {
  if (started_ && !stopped_) driver_->snapshot_now(options_.keep_tail);
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
      driver_->after_input();
    });
    return;
  }
  transport_->send(to, tagged(kTagApp, payload));
}

void RaftNode::send_raft(const Message& m) { transport_->send(m.to, tagged(kTagRaft, encode_message(m))); }

// ---------------------------------------------------------------- introspection

RaftStatus RaftNode::status() const { return driver_ ? driver_->core().status() : RaftStatus{}; }
NodeId RaftNode::leader() const { return driver_ ? driver_->core().leader() : 0; }
Term RaftNode::term() const { return driver_ ? driver_->core().term() : 0; }
bool RaftNode::is_leader() const { return driver_ && driver_->core().role() == Role::kLeader; }
Index RaftNode::commit_index() const { return driver_ ? driver_->core().commit_index() : 0; }
Index RaftNode::applied_index() const { return driver_ ? driver_->applied_index() : 0; }
Membership RaftNode::applied_membership() const { return driver_ ? driver_->applied_membership() : Membership{}; }
uint64_t RaftNode::fsync_count() const { return log_ ? log_->stats().fsyncs : 0; }
GroupCommitStats RaftNode::storage_stats() const { return log_ ? log_->stats() : GroupCommitStats{}; }
bool RaftNode::disk_full() const { return log_ && log_->disk_full(); }
PeerTransportStats RaftNode::transport_stats() const {
  return transport_ ? transport_->stats() : PeerTransportStats{};
}

}  // namespace zkraft::consensus
