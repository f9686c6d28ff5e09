#pragma once
// ZkServer: the wiring of one zkraft server. The threads and what each owns:
//
//   network threads (NetworkPool)   client sockets: framing, decoding, writing replies
//   the state thread (`state_io`)   RequestPipeline: sessions, the tree, applying committed
//                                   entries, reads, watches, the four-letter words
//   the Raft thread                 RaftNode: the Raft core, its driver, the peer transport
//                                   (inside RaftReplicatedLog; an ensemble only: a standalone
//                                   server's one-voter Raft runs on the state thread)
//   the storage thread              LevelDB writes and fsyncs (inside RaftNode)
//   the admin thread (AdminServer)  HTTP: /commands, /health, /ready; it asks the state thread
//                                   for the status (a post, waited for with a bound)
//
// Hand-offs between them are BatchQueues. The caller runs `state_io` on one thread (main).

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "server/admin_server.h"
#include "server/prometheus_metrics.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/network_pool.h"
#include "server/replicated_log.h"
#include "server/request_pipeline.h"

namespace zkraft::server {

class ZkServer {
 public:
  ZkServer(boost::asio::io_context& state_io, Config config, std::unique_ptr<ReplicatedLog> log);
  ~ZkServer();

  // Replays the log, then listens. False (and logs why) if the log cannot be opened or the port
  // cannot be bound; exit_code() then says how the process should exit. An admin port that
  // cannot be bound stops a standalone server (exit code 4, as ZooKeeperServerMain's
  // ERROR_STARTING_ADMIN_SERVER) and is only logged by an ensemble member (as QuorumPeer.start
  // does). Call on the state thread before it runs `state_io`.
  bool start();
  void stop();
  int exit_code() const { return exit_code_; }
  uint16_t client_port() const { return network_.port(); }
  uint16_t secure_client_port() const { return network_.secure_port(); }
  uint16_t admin_port() const { return admin_ ? admin_->port() : 0; }
  uint16_t metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  int network_threads() const { return network_.threads(); }

 private:
  void tick();
  // Tells systemd (if it started us) when serving starts or stops: READY=1 the first time.
  void report_serving_mode();
  bool start_admin();
  bool start_tls();
  // The Prometheus page, a second AdminServer with its own thread (metricsProvider.*). False
  // when its port cannot be bound (fatal, as ZooKeeper's "Cannot boot MetricsProvider").
  bool start_metrics();
  // For the admin thread: runs fn on the state thread and waits for its result, at most
  // kAdminFetchTimeoutMs (nullopt after that, or once the server stops).
  template <class T>
  std::optional<T> on_state_thread(std::function<T()> fn);
  // The status; directory sizes are read on the admin thread.
  std::optional<ServerStatus> fetch_admin_status(StatsReset reset);

  boost::asio::io_context& io_;
  Config config_;
  SystemClock clock_;
  std::mt19937_64 rng_;
  std::unique_ptr<ReplicatedLog> log_;
  std::unique_ptr<RequestPipeline> pipeline_;
  NetworkPool network_;
  boost::asio::steady_timer tick_timer_;
  bool stopped_ = false;
  std::optional<ServingMode> reported_mode_;
  bool told_ready_ = false;
  int exit_code_ = 1;
  std::unique_ptr<AdminServer> admin_;
  std::atomic<bool> admin_stopping_{false};
  AdminContext admin_context_;  // used only on the admin thread
  int64_t trace_mask_ = 306;    // ZooTrace's default text trace mask; admin thread only
  int64_t last_snapshot_ms_ = -1;  // the admin snapshot's rate limit; admin thread only
  std::unique_ptr<AdminServer> metrics_;
  PrometheusExporter exporter_;   // the metrics thread only
};

}  // namespace zkraft::server
