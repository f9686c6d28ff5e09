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
//
// Hand-offs between them are BatchQueues. The caller runs `state_io` on one thread (main).

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>

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
  // cannot be bound. Call on the state thread before it runs `state_io`.
  bool start();
  void stop();
  uint16_t client_port() const { return network_.port(); }
  int network_threads() const { return network_.threads(); }

 private:
  void tick();
  // Tells systemd (if it started us) when serving starts or stops: READY=1 the first time.
  void report_serving_mode();

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
};

}  // namespace zkraft::server
