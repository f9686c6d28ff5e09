#include "server/zk_server.h"

#include <spdlog/spdlog.h>

#include "server/dashboard.h"
#include "server/systemd_notify.h"

#include <algorithm>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include <boost/asio/post.hpp>

namespace zkraft::server {

namespace {
int network_thread_count(const Config& config) {
  if (config.network_threads > 0) return config.network_threads;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

constexpr int64_t kAdminFetchTimeoutMs = 2000;

std::string read_file(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ConnectionLimits connection_limits(const Config& config) {
  ConnectionLimits l;
  l.max_frame = config.max_buffer;
  l.sessionless_timeout_ms = config.sessionless_timeout_ms;
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
  if (!start_tls()) return false;
  if (!network_.listen(config_.client_address, static_cast<uint16_t>(config_.client_port), &error)) {
    spdlog::error("{}", error);
    return false;
  }
  spdlog::info("{} network thread(s) serve client connections", network_.threads());
  if (!start_admin()) {
    exit_code_ = 4;
    return false;
  }
  if (!start_metrics()) return false;
  tick();
  return true;
}

// TLS for clients (server/tls_context.h): the stores are read here, so a missing or unreadable
// file stops the start with one line, as ZooKeeper's X509Util does.
bool ZkServer::start_tls() {
  if (!client_tls_wanted(config_)) return true;
  std::string error;
  TlsOptions options;
  if (!tls_options_from_config(config_, &options, &error)) {
    spdlog::error("{}", error);
    exit_code_ = 2;
    return false;
  }
  auto ctx = build_server_tls_context(options, &error);
  if (!ctx) {
    spdlog::error("TLS: {}", error);
    return false;
  }
  network_.set_tls(std::make_shared<TlsContextSource>(options, std::move(ctx)));
  if (config_.secure_client_port > 0) {
    const std::string& address =
        config_.secure_client_address.empty() ? config_.client_address : config_.secure_client_address;
    if (!network_.listen_secure(address, static_cast<uint16_t>(config_.secure_client_port), &error)) {
      spdlog::error("{}", error);
      return false;
    }
    spdlog::info("TLS client port {}:{}", address, network_.secure_port());
  }
  if (config_.client_port_unification) spdlog::info("client port {} also takes TLS", config_.client_port);
  return true;
}

bool ZkServer::start_admin() {
  if (!config_.admin_enabled || config_.admin_port == 0) return true;
  admin_context_.config = &config_;
  admin_context_.initial_configuration = read_file(config_.source_file);
  admin_context_.fetch_status = [this](StatsReset reset) { return fetch_admin_status(reset); };
  admin_context_.fetch_counts = [this] {
    return on_state_thread<ServerStatus>(
        [this] { return pipeline_->admin_status(StatsReset::kNone, false); });
  };
  admin_context_.trace_mask = &trace_mask_;
  admin_context_.authorize = [this](const std::vector<jute::Id>& ids) {
    return on_state_thread<bool>(
        [this, ids] { return pipeline_->admin_allowed(ids, jute::perms::kAll, "/"); });
  };
  admin_context_.monotonic_ms = [this] { return clock_.monotonic_ms(); };
  admin_context_.last_snapshot_ms = &last_snapshot_ms_;
  admin_context_.snapshot = [this] {
    return on_state_thread<AdminSnapshot>([this] {
      AdminSnapshot snap;
      snap.data = pipeline_->admin_snapshot(&snap.last_zxid);
      return snap;
    });
  };
  admin_context_.fetch_timeout_ms = kAdminFetchTimeoutMs;
  AdminServer::Options o;
  o.address = config_.admin_address;
  o.port = static_cast<uint16_t>(config_.admin_port);
  o.idle_timeout_ms = config_.admin_idle_timeout_ms;
  admin_ = std::make_unique<AdminServer>(
      [this](const AdminRequest& r) { return handle_admin_port_request(r, admin_context_); }, o);
  std::string error;
  if (!admin_->start(&error)) {
    admin_.reset();
    if (config_.standalone()) {
      spdlog::error("Unable to start AdminServer, exiting abnormally: {}", error);
      return false;
    }
    spdlog::warn("Problem starting AdminServer: {}", error);
    return true;
  }
  spdlog::info("Started AdminServer on address {}, port {} and command URL {}",
               config_.admin_address, admin_->port(), config_.admin_command_url);
  return true;
}

bool ZkServer::start_metrics() {
  if (config_.metrics_provider.empty()) return true;
  if (config_.metrics_provider != kPrometheusProviderClass) {
    spdlog::warn("metricsProvider.className {}: zkraft has only {}; no metrics are served",
                 config_.metrics_provider, kPrometheusProviderClass);
    return true;
  }
  if (config_.metrics_port == 0) return true;
  AdminServer::Options o;
  o.address = config_.metrics_host;
  o.port = static_cast<uint16_t>(config_.metrics_port);
  metrics_ = std::make_unique<AdminServer>(
      [this](const AdminRequest& r) {
        return handle_metrics_request(
            r,
            [this] {
              return on_state_thread<MetricsStatus>([this] { return pipeline_->metrics_status(); });
            },
            exporter_, clock_.monotonic_ms());
      },
      o);
  std::string error;
  if (!metrics_->start(&error)) {
    metrics_.reset();
    spdlog::error("Cannot start /metrics server: {}", error);
    return false;
  }
  spdlog::info("Starting /metrics HTTP endpoint at host: {}, port: {}, exportJvmInfo: {} (there "
               "is no JVM: no jvm_* metrics either way)",
               config_.metrics_host, metrics_->port(), config_.metrics_export_jvm_info);
  return true;
}

template <class T>
std::optional<T> ZkServer::on_state_thread(std::function<T()> fn) {
  // Only the posted handler owns the promise: after a timeout it may still answer, into a
  // future nobody reads; dropped unrun (the state thread stopped), it breaks the promise.
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  if (admin_stopping_) return std::nullopt;
  boost::asio::post(io_, [this, promise = std::move(promise), fn = std::move(fn)] {
    if (!stopped_) promise->set_value(fn());
  });
  // In slices, so that stop() (on the state thread, which then cannot answer) does not wait out
  // the whole bound.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kAdminFetchTimeoutMs);
  while (future.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (admin_stopping_ || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
  }
  try {
    return future.get();
  } catch (const std::future_error&) {
    return std::nullopt;  // broken promise: the server is stopping
  }
}

std::optional<ServerStatus> ZkServer::fetch_admin_status(StatsReset reset) {
  auto st = on_state_thread<ServerStatus>([this, reset] { return pipeline_->admin_status(reset); });
  if (st) {
    st->data_dir_size = directory_bytes(config_.data_dir);
    st->log_dir_size = directory_bytes(raft_log_dir(config_));
  }
  return st;
}

void ZkServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  systemd_notify("STOPPING=1");
  admin_stopping_ = true;  // a request waiting for this (state) thread gives up at once
  if (admin_) admin_->stop();
  if (metrics_) metrics_->stop();
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
