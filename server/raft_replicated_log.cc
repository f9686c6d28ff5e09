// RaftReplicatedLog: creation, start and stop, the commands the state thread sends to the Raft
// thread, what the Raft thread sends back (applies, snapshots, leader changes, read states, peer
// messages) and its dispatch on the state thread. The figures: raft_replicated_log_figures.cc.
#include "server/raft_replicated_log.h"

#include <errno.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "consensus/snapshot_file_writer.h"
#include "server/clock.h"
#include "server/forked_snapshot.h"
#include "server/raft_options.h"
#include "tree/invariant.h"  // server/ has no copy of its own: tree/ is below it

namespace zkraft::server {

namespace asio = boost::asio;

namespace {
// EX_IOERR (sysexits.h): what a supervisor sees when the log could not be made durable.
constexpr int kFatalStorageExitCode = 74;
int64_t steady_ms() { return SystemClock().monotonic_ms(); }
}  // namespace

std::unique_ptr<RaftReplicatedLog> RaftReplicatedLog::create(asio::io_context& state,
                                                             const Config& config,
                                                             std::string* error) {
  auto options = raft_options(config, error);
  if (!options) return nullptr;
  return std::unique_ptr<RaftReplicatedLog>(
      new RaftReplicatedLog(state, std::move(*options), is_observer(config), !config.standalone(),
                            config.snapshot_in_child_process));
}

RaftReplicatedLog::RaftReplicatedLog(asio::io_context& state, consensus::RaftNodeOptions options,
                                     bool observer, bool own_thread, bool snapshot_in_child)
    : self_id_(options.id),
      observer_(observer),
      tick_ms_(options.tick_ms),
      in_sync_window_ms_(2 * int64_t{options.election_ticks} * options.tick_ms),
      own_thread_(own_thread),
      raft_io_(own_thread ? own_io_ : state),
      raft_work_(own_io_.get_executor()),
      refresh_timer_(raft_io_),
      commands_(raft_io_.get_executor(), [this](std::vector<Command>& b) { run_commands(b); }),
      events_(state.get_executor(), [this](std::vector<Event>& b) { dispatch(b); }),
      snapshot_in_child_(snapshot_in_child) {
  node_ = std::make_unique<consensus::RaftNode>(raft_io_, std::move(options), *this);
}

RaftReplicatedLog::~RaftReplicatedLog() { stop(); }

bool RaftReplicatedLog::start(LogListener& listener, std::string* error) {
  listener_ = &listener;
  // The Raft thread is not running yet, so the node may be opened from here (the state thread),
  // and a stored snapshot reaches the listener before start() returns.
  opening_ = true;
  bool opened = node_->open(error);
  opening_ = false;
  if (!opened) return false;
  start_up_commit_ = node_->commit_index();
  node_->start();
  looking_since_ms_ = steady_ms();
  if (own_thread_) looking_count_ = 1;  // an ensemble member starts without a leader
  refresh_figures();
  schedule_refresh();
  spdlog::info("raft: server {} listening for peers on port {}", node_->id(), node_->peer_port());
  if (!own_thread_) return true;  // runs on the state thread's io_context
  raft_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "zk-raft");  // shown by top -H, ps -L, perf
    raft_io_.run();
  });
  return true;
}

void RaftReplicatedLog::stop() {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  if (!raft_thread_.joinable()) {  // on the state thread (or never started)
    node_->stop();
    refresh_timer_.cancel();
    commands_.close();
    events_.close();
    snapshot_child_.reset();  // after events_ closed: its answer goes nowhere
    // A live snapshot under way stops here (its file is removed); the listener is not called,
    // as it may be gone already (the server's destructor drops it before this object).
    live_steps_ = false;
    live_file_.reset();
    return;
  }
  asio::post(raft_io_, [this] {
    node_->stop();
    refresh_timer_.cancel();
    raft_work_.reset();
    raft_io_.stop();
  });
  raft_thread_.join();
  commands_.close();
  events_.close();
  snapshot_child_.reset();
  live_steps_ = false;  // as above
  live_file_.reset();
}

// ---------------------------------------------------------------- state thread -> Raft thread

void RaftReplicatedLog::propose(std::string entry) { commands_.push(Propose{std::move(entry)}); }
void RaftReplicatedLog::read_index(uint64_t context) { commands_.push(ReadIndex{context}); }
void RaftReplicatedLog::send(uint64_t to, std::string payload) {
  commands_.push(Send{to, std::move(payload)});
}
void RaftReplicatedLog::add_peer(uint64_t id, const std::string& host, uint16_t port) {
  if (id != self_id_) commands_.push(AddPeer{id, host, port});
}
void RaftReplicatedLog::snapshot_now() { commands_.push(SnapshotNow{}); }
void RaftReplicatedLog::transfer_leadership(uint64_t to) { commands_.push(TransferLeadership{to}); }

void RaftReplicatedLog::change_membership(MembershipChange change, uint64_t id) {
  commands_.push(ChangeMembership{change, id});
}

void RaftReplicatedLog::run_commands(std::vector<Command>& batch) {
  bool proposed = false;
  for (auto& c : batch) {
    if (auto* p = std::get_if<Propose>(&c)) {
      ++proposals_;
      proposed = true;
      node_->propose(std::move(p->entry));  // refused: a leader change is on its way (header)
    } else if (auto* r = std::get_if<ReadIndex>(&c)) {
      ++read_index_rounds_;
      if (node_->read_index(r->context) != consensus::RaftError::kOk) {
        events_.push(ReadPoint{r->context, 0, false});
      }
    } else if (auto* s = std::get_if<Send>(&c)) {
      node_->send_app_message(s->to, std::move(s->payload));
    } else if (auto* a = std::get_if<AddPeer>(&c)) {
      node_->add_peer(a->id, consensus::PeerAddress{a->host, a->port});
    } else if (std::holds_alternative<SnapshotNow>(c)) {
      node_->snapshot_now();
    } else if (auto* t = std::get_if<TransferLeadership>(&c)) {
      transfer_leadership_now(t->to);
    } else {
      const auto& m = std::get<ChangeMembership>(c);
      consensus::ConfChange cc;
      cc.node = m.id;
      switch (m.change) {
        case MembershipChange::kAddLearner: cc.type = consensus::ConfChangeType::kAddLearner; break;
        case MembershipChange::kPromote: cc.type = consensus::ConfChangeType::kPromoteLearner; break;
        case MembershipChange::kRemove: cc.type = consensus::ConfChangeType::kRemoveNode; break;
      }
      if (node_->change_membership(cc).ok()) {
        spdlog::info("raft: proposed membership change {} of server {}", int(m.change), m.id);
      }
    }
  }
  if (proposed) ++proposal_batches_;
}

void RaftReplicatedLog::transfer_leadership_now(uint64_t to) {
  const auto st = node_->status();
  if (st.role != consensus::Role::kLeader) return;
  if (to == 0) {
    // Yield: to the other voter that holds the most of the log.
    consensus::Index best = 0;
    for (const auto& p : st.peers) {
      const bool voter = std::find(st.membership.voters.begin(), st.membership.voters.end(), p.id) !=
                         st.membership.voters.end();
      if (voter && (to == 0 || p.match > best)) to = p.id, best = p.match;
    }
    if (to == 0) return;  // no other voter
  }
  auto e = node_->transfer_leadership(static_cast<consensus::NodeId>(to));
  spdlog::info("raft: leadership transfer to server {}: {}", to, consensus::raft_error_name(e));
}

// ---------------------------------------------------------------- Raft thread -> state thread

void RaftReplicatedLog::apply(const consensus::Entry& e) { events_.push(Apply{e.index, e.data}); }

void RaftReplicatedLog::on_conf_change_applied(consensus::Index index) {
  // Without it the state thread's applied index stayed at the entry before, while the driver
  // asked for snapshots at the change's own index (csnp right after a reconfig failed the
  // invariant in take_snapshot_for), and a start-up replay ending in a change never ended.
  events_.push(Apply{index, {}});
}

// Never called: request_snapshot() answers from the state thread instead. If it were, an empty
// answer would be stored as the state and the log compacted behind it: stop instead.
std::string RaftReplicatedLog::take_snapshot() {
  ZKRAFT_INVARIANT(false, "snapshots are answered through request_snapshot on the state thread");
  return {};
}

void RaftReplicatedLog::request_snapshot(consensus::Index index, consensus::SnapshotReply reply) {
  events_.push(std::make_unique<SnapshotWanted>(SnapshotWanted{index, std::move(reply), std::nullopt, {}}));
}

void RaftReplicatedLog::request_snapshot_file(consensus::Index index, const consensus::SnapshotFileTarget& target,
                                              consensus::SnapshotReply reply,
                                              consensus::SnapshotFileReply file_reply) {
  events_.push(std::make_unique<SnapshotWanted>(SnapshotWanted{index, std::move(reply), target, std::move(file_reply)}));
}

void RaftReplicatedLog::restore_snapshot(const consensus::SnapshotMeta& meta,
                                         consensus::SnapshotBytes data) {
  if (opening_) {
    listener_->on_restore(meta.index, data->bytes());
    point_index_ = meta.index;
    return;
  }
  events_.push(Restore{meta.index, std::move(data)});
}

void RaftReplicatedLog::on_membership(const consensus::Membership&) {
  if (!opening_) refresh_figures();
}

void RaftReplicatedLog::on_leader_change(consensus::NodeId leader, consensus::Term, bool self) {
  ++leader_changes_;
  if (own_thread_ && leader == 0 && !looking_) {
    looking_ = true;
    looking_since_ms_ = steady_ms();
    ++looking_count_;
  } else if (own_thread_ && leader != 0 && looking_) {
    looking_ = false;
    const auto ms = static_cast<uint64_t>(std::max<int64_t>(0, steady_ms() - looking_since_ms_));
    if (election_ms_buckets_.empty()) election_ms_buckets_.resize(consensus::kLogBucketCount);
    ++election_ms_buckets_[consensus::log_bucket(ms)];
    ++elections_;
    election_ms_total_ += ms;
  }
  refresh_figures();
  events_.push(LeaderChanged{leader, self});
}

void RaftReplicatedLog::on_read_state(uint64_t context, consensus::Index index) {
  events_.push(ReadPoint{context, index, true});
}

void RaftReplicatedLog::on_app_message(consensus::NodeId from, std::string payload) {
  events_.push(Message{from, std::move(payload)});
}

void RaftReplicatedLog::take_snapshot_for(SnapshotWanted& want) {
  if (!want.target) {
    // The child failed (or the storage offered no file, which RaftNode always does): serialise
    // here after all, as of what is applied now (the driver takes a snapshot at any index it
    // handed to apply).
    const auto t0 = std::chrono::steady_clock::now();
    std::string bytes = listener_->on_snapshot_request();
    record_snapshot(bytes.size(), std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - t0).count());
    want.reply(applied_index_, std::move(bytes));
    return;
  }
  // Everything up to want.index is applied and nothing after it: the child's image is exactly
  // the state the driver asked for. A snapshot labelled with another index would make a restore
  // skip or replay entries.
  ZKRAFT_INVARIANT(applied_index_ == want.index, "a snapshot holds exactly the state at its index");
  if (!snapshot_in_child_ && start_delta_snapshot(want)) return;
  if (!snapshot_in_child_ && start_live_snapshot(want)) return;
  snapshot_child_.reset();  // the previous one has answered (one request at a time)
  const auto forked_at = std::chrono::steady_clock::now();
  std::string error;
  consensus::SnapshotFileWriter::prepare_before_fork();
  snapshot_child_ = ForkedSnapshot::start(
      [this, target = *want.target] { return write_snapshot_file(target); },
      [this, want, forked_at](std::optional<std::string> result) {
        snapshot_file_done(want, std::move(result),
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - forked_at).count());
      },
      &error);
  if (!snapshot_child_) {
    spdlog::warn("snapshot at index {}: {}; serialising on the state thread", want.index, error);
    std::string bytes = listener_->on_snapshot_request();
    record_snapshot(bytes.size(), std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - forked_at).count());
    want.reply(want.index, std::move(bytes));
    return;
  }
  const auto pause = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::steady_clock::now() - forked_at)
                         .count();
  spdlog::info("snapshot at index {}: a child process writes it to {} (fork paused the state thread "
               "{:.1f} ms)", want.index, want.target->path, static_cast<double>(pause) / 1000.0);
}

namespace {
// What the child that wrote a snapshot file sends its parent: 0 or the errno that stopped it,
// and the file's size and CRC-32C. Same process image on both ends, so the layout is shared.
struct ChildFileResult {
  int32_t err = 0;
  uint32_t crc32c = 0;
  uint64_t size = 0;
};
// The child writes the file in pieces of this size: its memory holds one piece, not the snapshot.
constexpr size_t kSnapshotPieceBytes = 1 << 20;
}  // namespace

std::string RaftReplicatedLog::write_snapshot_file(const consensus::SnapshotFileTarget& target) {
  ChildFileResult r;
  consensus::SnapshotFileWriter writer;
  r.err = writer.open(target);
  if (r.err == 0) {
    listener_->on_snapshot_write(kSnapshotPieceBytes, [&](std::string_view piece) {
      r.err = writer.append(piece);
      return r.err == 0;
    });
  }
  consensus::SnapshotFileWritten written;
  if (r.err == 0) r.err = writer.finish(&written);
  r.size = written.size;
  r.crc32c = written.crc32c;
  return std::string(reinterpret_cast<const char*>(&r), sizeof r);
}

void RaftReplicatedLog::snapshot_file_done(const SnapshotWanted& want, std::optional<std::string> result,
                                           int64_t ms) {
  const consensus::SnapshotFileTarget& target = *want.target;
  ChildFileResult r;
  if (!result || result->size() != sizeof r) {
    // Killed, or it died: whatever it wrote is of no use (open() would remove it too).
    ::unlink(target.path.c_str());
    spdlog::warn("snapshot at index {}: the child process failed after {} ms; serialising on the state "
                 "thread instead", want.index, ms);
    events_.push(std::make_unique<SnapshotWanted>(SnapshotWanted{want.index, want.reply, std::nullopt, {}}));
    return;
  }
  std::memcpy(&r, result->data(), sizeof r);
  if (r.err != 0) {
    const std::string what = "the child process could not write " + target.path + ": " + std::strerror(r.err);
    spdlog::warn("snapshot at index {}: {}", want.index, what);
    want.file_reply(want.index,
                    r.err == ENOSPC || r.err == EDQUOT
                        ? consensus::Status::error(consensus::Status::Code::kNoSpace, what)
                        : consensus::Status::io_error(what),
                    {});
    return;
  }
  spdlog::info("snapshot at index {}: {} bytes written to {} by a child process in {} ms", want.index, r.size,
               target.path, ms);
  record_snapshot(r.size, ms);
  consensus::SnapshotFileWritten written;
  written.token = target.token;
  written.size = r.size;
  written.crc32c = r.crc32c;
  want.file_reply(want.index, consensus::Status::ok(), written);
}

bool RaftReplicatedLog::start_live_snapshot(SnapshotWanted& want) {
  ZKRAFT_INVARIANT(!live_steps_, "one snapshot at a time");
  const auto t0 = std::chrono::steady_clock::now();
  live_piece_.clear();
  std::optional<tree::LiveSnapshotCheck> check = listener_->begin_live_snapshot(live_piece_);
  if (!check) return false;
  const auto start_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  point_index_ = want.index;
  live_file_.reset();  // the previous one has answered (one request at a time)
  live_steps_ = true;
  const int64_t started_ms = steady_ms();
  live_file_ = std::make_unique<LiveSnapshotFile>(
      *want.target,
      [this] { events_.push(SnapshotStep{}); },  // room again: the steps go on
      [this, want, started_ms](int err, const consensus::SnapshotFileWritten& written) {
        live_snapshot_file_done(want, err, written, steady_ms() - started_ms);
      },
      std::move(check));
  spdlog::info("snapshot at index {}: written live to {} (the start held the state thread {:.1f} ms)", want.index,
               want.target->path, static_cast<double>(start_us) / 1000.0);
  events_.push(SnapshotStep{});
  return true;
}

bool RaftReplicatedLog::start_delta_snapshot(SnapshotWanted& want) {
  const consensus::SnapshotFileTarget& target = *want.target;
  if (target.stored_index == 0 || target.stored_index != point_index_) return false;
  const std::optional<uint64_t> pending = listener_->pending_delta_bytes();
  if (!pending) return false;
  const uint64_t appended = target.stored_size - target.stored_full_size;
  if (2 * (appended + *pending) > target.stored_full_size) return false;
  ZKRAFT_INVARIANT(!live_steps_, "one snapshot at a time");
  const auto t0 = std::chrono::steady_clock::now();
  live_piece_.clear();
  listener_->begin_live_delta(live_piece_);
  point_index_ = want.index;
  const auto start_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  live_file_.reset();  // the previous one has answered (one request at a time)
  live_steps_ = true;
  const int64_t started_ms = steady_ms();
  live_file_ = std::make_unique<LiveSnapshotFile>(
      target, [this] { events_.push(SnapshotStep{}); },
      [this, want, started_ms](int err, const consensus::SnapshotFileWritten& written) {
        live_snapshot_file_done(want, err, written, steady_ms() - started_ms);
      },
      std::nullopt, LiveSnapshotFile::Into::kStoredFile);
  spdlog::info("snapshot at index {}: about {} bytes of changes since index {} appended live to {} (the start "
               "held the state thread {:.1f} ms)",
               want.index, *pending, target.stored_index, target.stored_path, static_cast<double>(start_us) / 1000.0);
  events_.push(SnapshotStep{});
  return true;
}

void RaftReplicatedLog::live_snapshot_step() {
  if (!live_steps_) return;  // stopped
  const bool done = listener_->continue_live_snapshot(live_piece_, kLiveStepRecords);
  bool room = true;
  if (live_piece_.size() >= kLivePieceBytes || done) {
    room = live_file_->push(live_piece_.take());
    if (!done) {
      std::string next = live_file_->spare_piece();
      if (next.capacity() < kLivePieceBytes) next.reserve(2 * kLivePieceBytes);  // a step may pass the mark
      live_piece_.reset(std::move(next));
    }
  }
  if (done) {
    live_steps_ = false;
    live_file_->finish();
    return;
  }
  // A full queue: the file thread posts the next step once it has room (LiveSnapshotFile).
  if (room) events_.push(SnapshotStep{});
}

void RaftReplicatedLog::live_snapshot_file_done(const SnapshotWanted& want, int err,
                                                const consensus::SnapshotFileWritten& written, int64_t ms) {
  if (err == ESTALE) {
    // Appending: the stored snapshot's file was replaced (a leader's snapshot) since its target.
    const std::string what = "the stored snapshot changed before the append to " + want.target->stored_path;
    spdlog::info("snapshot at index {}: {}; the next one is written whole", want.index, what);
    want.file_reply(want.index, consensus::Status::error(consensus::Status::Code::kSnapshotOutOfDate, what), {});
    return;
  }
  if (err != 0) {
    const std::string what = "could not write " + want.target->path + ": " + std::strerror(err);
    spdlog::warn("snapshot at index {}: {}", want.index, what);
    want.file_reply(want.index,
                    err == ENOSPC || err == EDQUOT
                        ? consensus::Status::error(consensus::Status::Code::kNoSpace, what)
                        : consensus::Status::io_error(what),
                    {});
    return;
  }
  if (written.appended) {
    spdlog::info("snapshot at index {}: appended, {} bytes in all, in {} ms", want.index, written.size, ms);
    record_snapshot(written.size - written.appended_to, ms);
  } else {
    spdlog::info("snapshot at index {}: {} bytes written live to {} in {} ms", want.index, written.size,
                 want.target->path, ms);
    record_snapshot(written.size, ms);
  }
  want.file_reply(want.index, consensus::Status::ok(), written);
}

void RaftReplicatedLog::dispatch(std::vector<Event>& batch) {
  for (auto& ev : batch) {
    if (auto* a = std::get_if<Apply>(&ev)) {
      applied_index_ = a->index;
      listener_->on_apply(a->index, a->data);
    } else if (auto* r = std::get_if<Restore>(&ev)) {
      // A live snapshot under way goes on: the tree keeps the state it reads (replace_with).
      applied_index_ = r->index;
      listener_->on_restore(r->index, r->data->bytes());
      point_index_ = r->index;
      r->data.reset();  // a mapping: unmapped now, not when the batch goes
    } else if (auto* l = std::get_if<LeaderChanged>(&ev)) {
      leader_ = l->leader;
      self_leader_ = l->self;
      listener_->on_leader_changed(l->leader, l->self);
    } else if (auto* p = std::get_if<ReadPoint>(&ev)) {
      listener_->on_read_index(p->context, p->index, p->ok);
    } else if (auto* m = std::get_if<Message>(&ev)) {
      listener_->on_peer_message(m->from, std::move(m->payload));
    } else if (std::holds_alternative<SnapshotStep>(ev)) {
      live_snapshot_step();
    } else {
      take_snapshot_for(*std::get<std::unique_ptr<SnapshotWanted>>(ev));
    }
  }
  listener_->on_batch_done();
}

bool RaftReplicatedLog::disk_full() const { return node_ && node_->disk_full(); }

void RaftReplicatedLog::on_fatal_error(const std::string&) {
  // The line saying why is the Raft node's (consensus/raft_node.cc); make sure it is out.
  spdlog::default_logger()->flush();
  std::_Exit(kFatalStorageExitCode);
}

}  // namespace zkraft::server
