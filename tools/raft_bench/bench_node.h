#pragma once
// BenchNode: one Raft server for the benchmark — a consensus::RaftNode (RaftCore driven on one
// io_context thread, its log in LevelDB behind a GroupCommitLog with real fsync, its messages over
// PeerTransport) with this class as its application. When it becomes leader it runs the load:
// `proposers` closed-loop proposers, each keeping one entry of `entry_size` bytes in flight and
// proposing the next once the previous one is applied locally. After a warm-up it counts the
// entries committed during the measurement window and reports them as one "RESULT {json}" line
// through on_result.
//
// The application state is empty (snapshots are taken on RaftNode's schedule but carry nothing).

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "consensus/group_commit_log.h"
#include "consensus/peer_transport.h"
#include "consensus/raft_node.h"

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

class BenchNode : public consensus::RaftApplication {
 public:
  BenchNode(boost::asio::io_context& io, BenchNodeConfig cfg, std::function<void(std::string)> on_result);
  ~BenchNode() override;

  // Opens storage and binds the peer listener on 127.0.0.1 (ephemeral port). False + *error on failure.
  bool open(std::string* error);
  uint16_t port() const { return node_->peer_port(); }
  // Connects to the peers and starts ticking. Call on (or before running) the io_context.
  void start(const std::map<consensus::NodeId, std::pair<std::string, uint16_t>>& peers);
  void stop();

  // consensus::RaftApplication
  void apply(const consensus::Entry& e) override;
  std::string take_snapshot() override { return {}; }
  void restore_snapshot(const consensus::SnapshotMeta&, consensus::SnapshotBytes) override {}
  void on_leader_change(consensus::NodeId leader, consensus::Term term, bool self_is_leader) override;

 private:
  using Clock = std::chrono::steady_clock;

  void maybe_start_load();
  void propose(uint32_t proposer);
  void report();

  BenchNodeConfig cfg_;
  std::function<void(std::string)> on_result_;
  std::unique_ptr<consensus::RaftNode> node_;

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
