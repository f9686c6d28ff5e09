#include "bench_node.h"

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
    : cfg_(std::move(cfg)), on_result_(std::move(on_result)) {
  RaftNodeOptions o;
  o.id = cfg_.id;
  o.dir = cfg_.dir;
  o.initial_membership.voters = cfg_.voters;
  o.listen_host = "127.0.0.1";
  o.listen_port = 0;
  o.tick_ms = cfg_.tick_ms;
  o.election_ticks = cfg_.election_ticks;
  o.heartbeat_ticks = 1;
  o.fsync = cfg_.fsync;
  o.cluster_name = "raft-bench";
  node_ = std::make_unique<RaftNode>(io, std::move(o), *this);
}

BenchNode::~BenchNode() { stop(); }

bool BenchNode::open(std::string* error) { return node_->open(error); }

void BenchNode::start(const std::map<NodeId, std::pair<std::string, uint16_t>>& peers) {
  for (auto& [id, addr] : peers) {
    if (id != cfg_.id) node_->add_peer(id, PeerAddress{addr.first, addr.second});
  }
  node_->start();
}

void BenchNode::stop() { node_->stop(); }

void BenchNode::on_leader_change(NodeId, Term, bool self_is_leader) {
  if (self_is_leader) maybe_start_load();
}

void BenchNode::maybe_start_load() {
  if (load_started_ || !node_->is_leader()) return;
  load_started_ = true;
  auto now = Clock::now();
  measure_start_ = now + std::chrono::microseconds(static_cast<int64_t>(cfg_.warmup_seconds * 1e6));
  measure_end_ = measure_start_ + std::chrono::microseconds(static_cast<int64_t>(cfg_.measure_seconds * 1e6));
  spdlog::info("bench node {}: leader in term {}, starting {} proposers", cfg_.id, node_->term(), cfg_.proposers);
  for (int p = 0; p < cfg_.proposers; ++p) propose(static_cast<uint32_t>(p));
}

void BenchNode::propose(uint32_t proposer) {
  if (load_done_) return;
  std::string data(std::max(cfg_.entry_size, kHeaderBytes), 'x');
  put32(data.data(), proposer);
  put64(data.data() + 4, now_us());
  ProposeResult r = node_->propose(std::move(data));
  if (!r.ok()) {
    spdlog::warn("bench node {}: proposal refused: {}", cfg_.id, raft_error_name(r.error));
    load_done_ = true;
  }
}

void BenchNode::apply(const Entry& e) {
  if (!load_started_ || load_done_) return;
  if (e.data.size() < kHeaderBytes) return;  // a leader's no-op
  const auto now = Clock::now();
  const uint64_t t = now_us();
  uint32_t proposer = get32(e.data.data());
  uint64_t sent = get64(e.data.data() + 4);
  if (now >= measure_start_ && now < measure_end_) {
    if (committed_in_window_ == 0) {
      stats_at_start_ = node_->storage_stats();
      transport_at_start_ = node_->transport_stats();
    }
    ++committed_in_window_;
    latencies_us_.push_back(static_cast<uint32_t>(std::min<uint64_t>(t - sent, UINT32_MAX)));
  }
  if (proposer < static_cast<uint32_t>(cfg_.proposers)) propose(proposer);
  if (now >= measure_end_) report();
}

void BenchNode::report() {
  load_done_ = true;
  GroupCommitStats g = node_->storage_stats();
  PeerTransportStats tr = node_->transport_stats();
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
  j["term"] = node_->term();
  on_result_("RESULT " + j.dump());
}

}  // namespace zkraft::tools
