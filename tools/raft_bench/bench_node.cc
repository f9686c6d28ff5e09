#include "bench_node.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace zkraft::tools {

using namespace consensus;  // NOLINT: benchmark glue over the consensus module
namespace asio = boost::asio;

namespace {

// A proposal's first 12 bytes: proposer number and the proposal time (steady clock, µs).
constexpr size_t kHeaderBytes = 12;

void put32(char* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put64(char* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint32_t get32(const char* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
uint64_t get64(const char* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

uint64_t now_us() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

BenchNode::BenchNode(asio::io_context& io, BenchNodeConfig cfg, std::function<void(std::string)> on_result)
    : io_(io), cfg_(std::move(cfg)), on_result_(std::move(on_result)), ticker_(io),
      rng_(cfg_.id * 7919 + static_cast<uint64_t>(Clock::now().time_since_epoch().count())) {}

BenchNode::~BenchNode() { stop(); }

bool BenchNode::open(std::string* error) {
  auto storage = LogStorage::open(cfg_.dir, StorageOptions{}, error);
  if (!storage) return false;

  RecoveredState rec;
  rec.hard_state = storage->hard_state();
  if (storage->last_index() >= storage->first_index()) {
    Status s = storage->entries(storage->first_index(), storage->last_index() + 1, UINT64_MAX, &rec.entries);
    if (!s.is_ok()) {
      *error = s.to_string();
      return false;
    }
  }
  RaftConfig rc;
  rc.id = cfg_.id;
  rc.initial_membership.voters = cfg_.voters;
  rc.election_ticks = cfg_.election_ticks;
  persisted_hs_ = rec.hard_state;
  core_ = std::make_unique<RaftCore>(rc, std::move(rec), [this] { return rng_(); });

  GroupCommitOptions go;
  go.sync = cfg_.fsync;
  log_ = std::make_unique<GroupCommitLog>(std::move(storage), go);

  PeerTransportOptions to;
  to.self_id = cfg_.id;
  to.cluster_name = "raft-bench";
  to.max_message_bytes = 64u << 20;
  PeerTransport::Handlers h;
  h.on_message = [this](NodeId from, std::string bytes) { on_message(from, std::move(bytes)); };
  h.on_peer_down = [this](NodeId peer) {
    if (core_ && peer == core_->leader() && peer != cfg_.id) {
      core_->broken_leader_connection();
      pump();
    }
  };
  transport_ = std::make_unique<PeerTransport>(io_, to, std::move(h));
  Status s = transport_->listen("127.0.0.1", 0);
  if (!s.is_ok()) {
    *error = s.to_string();
    return false;
  }
  return true;
}

void BenchNode::start(const std::map<NodeId, std::pair<std::string, uint16_t>>& peers) {
  for (auto& [id, addr] : peers) {
    if (id != cfg_.id) transport_->add_peer(id, addr.first, addr.second);
  }
  log_->start();
  ticker_.expires_after(std::chrono::milliseconds(cfg_.tick_ms));
  ticker_.async_wait([this](boost::system::error_code ec) {
    if (!ec) on_tick();
  });
}

void BenchNode::stop() {
  if (stopped_) return;
  stopped_ = true;
  ticker_.cancel();
  if (transport_) transport_->stop();
  if (log_) log_->stop();
}

void BenchNode::on_tick() {
  if (stopped_) return;
  core_->tick();
  maybe_start_load();
  pump();
  ticker_.expires_after(std::chrono::milliseconds(cfg_.tick_ms));
  ticker_.async_wait([this](boost::system::error_code ec) {
    if (!ec) on_tick();
  });
}

void BenchNode::on_message(NodeId from, std::string bytes) {
  if (stopped_) return;
  Message m;
  std::string err;
  if (!decode_message(bytes, m, &err)) {
    spdlog::warn("bench node {}: bad message from {}: {}", cfg_.id, from, err);
    return;
  }
  core_->step(m);
  pump();
}

void BenchNode::send(const Message& m) { transport_->send(m.to, encode_message(m)); }

// One Ready at a time: while its fsync runs, new proposals and messages accumulate in the core and
// become the next Ready — group commit at the Raft level on top of the storage's.
void BenchNode::pump() {
  if (stopped_ || ready_in_flight_ || !core_->has_ready()) return;
  auto rd = std::make_shared<Ready>(core_->ready());
  ready_in_flight_ = true;
  for (const Message& m : rd->messages_now) send(m);
  if (rd->snapshot) {
    spdlog::critical("bench node {}: snapshot installation is not supported by the benchmark", cfg_.id);
    std::abort();
  }
  if (!rd->must_sync()) {
    finish_ready(rd);
    return;
  }
  // etcd's MustSync rule: new entries, or a changed term or vote, must be fsynced before the
  // messages that depend on them; a hard state that only moved its commit index need not be.
  const bool need_sync = !rd->entries.empty() ||
                         (rd->hard_state && (rd->hard_state->term != persisted_hs_.term ||
                                             rd->hard_state->vote != persisted_hs_.vote));
  if (rd->hard_state) persisted_hs_ = *rd->hard_state;
  log_->submit(rd->entries, rd->hard_state, [this, rd](Status s) {
    // Runs on the storage thread: hop back to the core's thread.
    asio::post(io_, [this, rd, s] {
      if (!s.is_ok()) {
        spdlog::critical("bench node {}: persisting failed: {}", cfg_.id, s.to_string());
        std::abort();
      }
      finish_ready(rd);
    });
  }, need_sync);
}

void BenchNode::finish_ready(const std::shared_ptr<Ready>& rd) {
  if (stopped_) return;
  for (const Message& m : rd->messages_after_persist) send(m);
  apply(rd->committed_entries);
  core_->advance(*rd);
  ready_in_flight_ = false;
  maybe_start_load();
  pump();
}

void BenchNode::maybe_start_load() {
  if (load_started_ || core_->role() != Role::kLeader) return;
  load_started_ = true;
  auto now = Clock::now();
  measure_start_ = now + std::chrono::microseconds(static_cast<int64_t>(cfg_.warmup_seconds * 1e6));
  measure_end_ = measure_start_ + std::chrono::microseconds(static_cast<int64_t>(cfg_.measure_seconds * 1e6));
  spdlog::info("bench node {}: leader in term {}, starting {} proposers", cfg_.id, core_->term(), cfg_.proposers);
  for (int p = 0; p < cfg_.proposers; ++p) propose(static_cast<uint32_t>(p));
}

void BenchNode::propose(uint32_t proposer) {
  if (load_done_) return;
  std::string data(std::max(cfg_.entry_size, kHeaderBytes), 'x');
  put32(data.data(), proposer);
  put64(data.data() + 4, now_us());
  ProposeResult r = core_->propose(std::move(data));
  if (!r.ok()) {
    spdlog::warn("bench node {}: proposal refused: {}", cfg_.id, raft_error_name(r.error));
    load_done_ = true;
  }
}

void BenchNode::apply(const std::vector<Entry>& committed) {
  if (!load_started_ || load_done_) return;
  const auto now = Clock::now();
  const uint64_t t = now_us();
  for (const Entry& e : committed) {
    if (e.type != EntryType::kNormal || e.data.size() < kHeaderBytes) continue;
    uint32_t proposer = get32(e.data.data());
    uint64_t sent = get64(e.data.data() + 4);
    if (now >= measure_start_ && now < measure_end_) {
      if (committed_in_window_ == 0) {
        stats_at_start_ = log_->stats();
        transport_at_start_ = transport_->stats();
      }
      ++committed_in_window_;
      latencies_us_.push_back(static_cast<uint32_t>(std::min<uint64_t>(t - sent, UINT32_MAX)));
    }
    if (proposer < static_cast<uint32_t>(cfg_.proposers)) propose(proposer);
  }
  if (now >= measure_end_) report();
}

void BenchNode::report() {
  load_done_ = true;
  GroupCommitStats g = log_->stats();
  PeerTransportStats tr = transport_->stats();
  std::sort(latencies_us_.begin(), latencies_us_.end());
  auto pct = [&](double q) -> double {
    if (latencies_us_.empty()) return 0;
    return latencies_us_[std::min(latencies_us_.size() - 1, static_cast<size_t>(q * latencies_us_.size()))] / 1000.0;
  };
  uint64_t fsyncs = g.fsyncs - stats_at_start_.fsyncs;
  uint64_t fsync_us = g.fsync_micros_total - stats_at_start_.fsync_micros_total;
  nlohmann::json j;
  j["entry_size"] = cfg_.entry_size;
  j["proposers"] = cfg_.proposers;
  j["fsync"] = cfg_.fsync;
  j["seconds"] = cfg_.measure_seconds;
  j["committed"] = committed_in_window_;
  j["entries_per_sec"] = committed_in_window_ / cfg_.measure_seconds;
  j["mb_per_sec"] = committed_in_window_ * cfg_.entry_size / cfg_.measure_seconds / 1e6;
  j["latency_ms_p50"] = pct(0.50);
  j["latency_ms_p99"] = pct(0.99);
  j["leader_fsyncs"] = fsyncs;
  j["leader_entries_per_fsync"] = fsyncs ? static_cast<double>(g.entries - stats_at_start_.entries) / fsyncs : 0.0;
  j["leader_fsync_ms_avg"] = fsyncs ? fsync_us / 1000.0 / fsyncs : 0.0;
  j["leader_msgs_per_write"] =
      tr.writes > transport_at_start_.writes
          ? static_cast<double>(tr.messages_sent - transport_at_start_.messages_sent) / (tr.writes - transport_at_start_.writes)
          : 0.0;
  j["term"] = core_->term();
  on_result_("RESULT " + j.dump());
}

}  // namespace zkraft::tools
