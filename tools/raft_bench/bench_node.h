#pragma once
// BenchNode: one Raft server for the benchmark — RaftCore driven on one io_context thread, its log
// in LogStorage behind a GroupCommitLog (real fsync), its messages over PeerTransport. When it
// becomes leader it runs the load: `proposers` closed-loop proposers, each keeping one entry of
// `entry_size` bytes in flight and proposing the next once the previous one is applied locally.
// After a warm-up it counts the entries committed during the measurement window and reports
// them as one "RESULT {json}" line through on_result.
//
// This is benchmark glue, not the server's Raft driver: no snapshots, no membership changes.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "consensus/group_commit_log.h"
#include "consensus/peer_transport.h"
#include "consensus/raft_core.h"

namespace zkraft::tools {

struct BenchNodeConfig {
  consensus::NodeId id = 0;
  std::string dir;
  std::vector<consensus::NodeId> voters;
  int tick_ms = 20;
  int election_ticks = 10;
  size_t entry_size = 100;
  int proposers = 1;
  double warmup_seconds = 1.0;
  double measure_seconds = 5.0;
  bool fsync = true;
};

class BenchNode {
 public:
  BenchNode(boost::asio::io_context& io, BenchNodeConfig cfg, std::function<void(std::string)> on_result);
  ~BenchNode();

  // Opens storage and binds the peer listener on 127.0.0.1 (ephemeral port). False + *error on failure.
  bool open(std::string* error);
  uint16_t port() const { return transport_->port(); }
  // Connects to the peers and starts ticking. Call on (or before running) the io_context.
  void start(const std::map<consensus::NodeId, std::pair<std::string, uint16_t>>& peers);
  void stop();

 private:
  using Clock = std::chrono::steady_clock;

  void on_tick();
  void on_message(consensus::NodeId from, std::string bytes);
  void pump();
  void finish_ready(const std::shared_ptr<consensus::Ready>& rd);
  void send(const consensus::Message& m);
  void apply(const std::vector<consensus::Entry>& committed);
  void maybe_start_load();
  void propose(uint32_t proposer);
  void report();

  boost::asio::io_context& io_;
  BenchNodeConfig cfg_;
  std::function<void(std::string)> on_result_;
  std::unique_ptr<consensus::GroupCommitLog> log_;
  std::unique_ptr<consensus::PeerTransport> transport_;
  std::unique_ptr<consensus::RaftCore> core_;
  boost::asio::steady_timer ticker_;
  std::mt19937_64 rng_;
  bool ready_in_flight_ = false;
  consensus::HardState persisted_hs_;  // last hard state handed to storage
  bool stopped_ = false;

  // Load (leader only).
  bool load_started_ = false;
  bool load_done_ = false;
  Clock::time_point measure_start_, measure_end_;
  uint64_t committed_in_window_ = 0;
  std::vector<uint32_t> latencies_us_;
  consensus::GroupCommitStats stats_at_start_;
  consensus::PeerTransportStats transport_at_start_;
};

}  // namespace zkraft::tools
