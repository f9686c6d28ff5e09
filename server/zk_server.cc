#include "server/zk_server.h"

#include <spdlog/spdlog.h>

#include "server/systemd_notify.h"

#include <algorithm>
#include <thread>

namespace zkraft::server {

namespace {
int network_thread_count(const Config& config) {
  if (config.network_threads > 0) return config.network_threads;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

ConnectionLimits connection_limits(const Config& config) {
  ConnectionLimits l;
  l.max_frame = config.max_buffer;
  return l;
}
}  // namespace

ZkServer::ZkServer(boost::asio::io_context& state_io, Config config,
                   std::unique_ptr<ReplicatedLog> log)
    : io_(state_io),
      config_(std::move(config)),
      rng_(std::random_device{}()),
      log_(std::move(log)),
      network_(network_thread_count(config_), connection_limits(config_), clock_,
               state_io.get_executor(),
               [this](std::vector<ClientMessage>& batch) { pipeline_->on_client_messages(batch); }),
      tick_timer_(state_io) {
  pipeline_ = std::make_unique<RequestPipeline>(config_, *log_, network_, clock_,
                                                [this] { return rng_(); });
}

ZkServer::~ZkServer() { stop(); }

bool ZkServer::start() {
  std::string error;
  if (!pipeline_->start(&error)) {
    spdlog::error("log: {}", error);
    return false;
  }
  if (!network_.listen(config_.client_address, static_cast<uint16_t>(config_.client_port), &error)) {
    spdlog::error("{}", error);
    return false;
  }
  spdlog::info("{} network thread(s) serve client connections", network_.threads());
  tick();
  return true;
}

void ZkServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  systemd_notify("STOPPING=1");
  tick_timer_.cancel();
  pipeline_->close_all_clients();
  log_->stop();
  network_.stop();
}

void ZkServer::tick() {
  if (stopped_) return;
  pipeline_->tick();
  report_serving_mode();
  tick_timer_.expires_after(std::chrono::milliseconds(pipeline_->tick_interval_ms()));
  tick_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

void ZkServer::report_serving_mode() {
  const ServingMode mode = pipeline_->serving_mode();
  if (reported_mode_ && *reported_mode_ == mode) return;
  reported_mode_ = mode;
  // systemd (Type=notify) counts the service started once it serves clients.
  std::string status = "STATUS=" + std::string(serving_mode_name(mode));
  if (mode == ServingMode::kServing && !told_ready_) {
    told_ready_ = true;
    status = "READY=1\n" + status;
  }
  systemd_notify(status);
}

}  // namespace zkraft::server
