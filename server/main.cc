// zkraft-server: a ZooKeeper-compatible server. `zkraft-server --config FILE [overrides]`.

#include <spdlog/spdlog.h>

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "consensus/heap_release.h"
#include "server/config.h"
#include "server/raft_replicated_log.h"
#include "server/zk_server.h"

int main(int argc, char** argv) {
  using namespace zkraft::server;
  Config config;
  std::string error, output;
  // ZooKeeper's settings may also come as -Dname=value words in these variables (zkServer.sh).
  const auto jvm_words = jvm_flag_words(std::getenv("SERVER_JVMFLAGS"), std::getenv("JVMFLAGS"));
  if (!parse_command_line(argc, argv, config, &error, &output, jvm_words)) {
    if (!error.empty()) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 2;
    }
    std::fputs(output.c_str(), stdout);
    return 0;  // --help, --version
  }
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e [%l] %v");
  spdlog::set_level(spdlog::level::from_str(config.log_level));  // validated with the config
  for (const auto& warning : config.warnings) spdlog::warn("{}", warning);

  std::error_code fs_ec;
  std::filesystem::create_directories(config.data_dir, fs_ec);
  if (fs_ec) {
    std::fprintf(stderr, "config error: dataDir: cannot create %s: %s\n", config.data_dir.c_str(),
                 fs_ec.message().c_str());
    return 2;
  }
  // LevelDB creates only the last directory of <dataLogDir>/raft.
  if (!config.data_log_dir.empty() && (std::filesystem::create_directories(config.data_log_dir, fs_ec), fs_ec)) {
    std::fprintf(stderr, "config error: dataLogDir: cannot create %s: %s\n", config.data_log_dir.c_str(),
                 fs_ec.message().c_str());
    return 2;
  }

  boost::asio::io_context io;
  std::unique_ptr<ReplicatedLog> log = RaftReplicatedLog::create(io, config, &error);
  if (!log) {
    spdlog::critical("cannot open the log in {}: {}", config.data_dir, error);
    return 1;
  }
  ZkServer server(io, config, std::move(log));
  if (!server.start()) return server.exit_code();
  spdlog::info("malloc: {}", zkraft::consensus::heap_allocator());
  spdlog::info("zkraft {} serving ZooKeeper clients on {}:{} ({}), data in {}", ZKRAFT_VERSION,
               config.client_address, server.client_port(),
               config.standalone() ? "standalone" : "ensemble server " + std::to_string(config.server_id),
               config.data_dir);

  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code, int sig) {
    spdlog::info("signal {}: shutting down", sig);
    server.stop();
    io.stop();
  });
  std::signal(SIGPIPE, SIG_IGN);
  io.run();
  return 0;
}
