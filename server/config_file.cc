// Config files as a whole: reading one (by format), myid, this server's identity in the
// ensemble, and the checks that need the whole configuration.

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/config.h"
#include "server/config_values.h"
#include "server/tls_options.h"

namespace zkraft::server {

using namespace config_values;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const PeerConfig* Config::self() const {
  for (const auto& p : servers) {
    if (p.id == server_id) return &p;
  }
  return nullptr;
}

std::string raft_log_dir(const Config& cfg) {
  const std::string& parent = cfg.data_log_dir.empty() ? cfg.data_dir : cfg.data_log_dir;
  return (std::filesystem::path(parent) / "raft").string();
}

bool load_config_file(const std::string& path, Config& cfg, std::string* error,
                      std::set<const ConfigKey*>* given) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(error, path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return fail(error, path + ": cannot read file");
  const std::string text = ss.str();
  cfg.source_file = path;

  const std::string lname = lower(path);
  bool yaml;
  if (ends_with(lname, ".yaml") || ends_with(lname, ".yml")) {
    yaml = true;
  } else if (ends_with(lname, ".cfg") || ends_with(lname, ".properties")) {
    yaml = false;
  } else {
    // By content: the first meaningful line decides (zoo.cfg lines use '=', YAML uses ': ').
    yaml = true;
    std::istringstream lines(text);
    std::string raw;
    while (std::getline(lines, raw)) {
      std::string line = trim(raw);
      if (line.empty() || line[0] == '#' || line == "---") continue;
      size_t eq = line.find('='), colon = line.find(':');
      yaml = !(eq != std::string::npos && (colon == std::string::npos || eq < colon));
      break;
    }
  }
  return yaml ? parse_yaml_config(text, cfg, error, given) : parse_zoo_cfg(text, cfg, error, given);
}

bool read_myid(Config& cfg, std::string* error) {
  if (cfg.data_dir.empty()) return true;
  const std::string path = cfg.data_dir + "/myid";
  std::ifstream in(path);
  if (!in) return true;  // absent: keep the configured id
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_int_into("myid (" + path + ")", trim(ss.str()), 0, kMaxServerId, cfg.server_id, error);
}

void apply_server_identity(Config& cfg, bool keep_client_port, bool keep_client_address) {
  const std::string id = std::to_string(cfg.server_id);
  for (std::string* dir : {&cfg.data_dir, &cfg.data_log_dir}) {
    for (size_t pos; (pos = dir->find("{id}")) != std::string::npos;) dir->replace(pos, 4, id);
  }
  if (const PeerConfig* me = cfg.self()) {
    if (!keep_client_port && me->client_port != 0) cfg.client_port = me->client_port;
    if (!keep_client_address && !me->client_address.empty()) cfg.client_address = me->client_address;
  }
}

bool validate_config(const Config& cfg, std::string* error) {
  if (cfg.data_dir.empty()) return fail(error, "data_dir (dataDir): missing");
  if (cfg.client_port < 0 || cfg.client_port > kMaxPort) {
    return fail(error, "client_port: " + std::to_string(cfg.client_port) + " is out of range [0, 65535]");
  }
  if (cfg.client_address.empty()) return fail(error, "client_address: empty");
  if (cfg.tick_time_ms <= 0) return fail(error, "tick_time_ms: must be positive");
  if (cfg.min_session_timeout_ms == 0 || cfg.min_session_timeout_ms < -1) {
    return fail(error, "min_session_timeout_ms: must be positive or -1 (2 x tick time)");
  }
  if (cfg.max_session_timeout_ms == 0 || cfg.max_session_timeout_ms < -1) {
    return fail(error, "max_session_timeout_ms: must be positive or -1 (20 x tick time)");
  }
  if (cfg.min_session_timeout() > cfg.max_session_timeout()) {
    return fail(error, "min_session_timeout_ms: " + std::to_string(cfg.min_session_timeout()) +
                           " is larger than max_session_timeout_ms " +
                           std::to_string(cfg.max_session_timeout()));
  }
  if (cfg.max_client_cnxns < 0) return fail(error, "max_client_connections: must be >= 0");
  static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error",
                                                "critical", "off"};
  if (kLevels.count(cfg.log_level) == 0) {
    return fail(error, "log_level: " + cfg.log_level +
                           " is not one of trace, debug, info, warn, error, critical, off");
  }
  if (cfg.max_buffer <= 0) return fail(error, "max_buffer: must be positive");
  if (cfg.global_outstanding_limit <= 0) return fail(error, "global_outstanding_limit: must be positive");
  if (cfg.max_outstanding_per_connection <= 0) {
    return fail(error, "max_outstanding_per_connection: must be positive");
  }
  if (cfg.max_watches_per_connection < 0) return fail(error, "max_watches_per_connection: must be >= 0");
  if (cfg.admin_port < 0 || cfg.admin_port > kMaxPort) {
    return fail(error, "admin_port: " + std::to_string(cfg.admin_port) + " is out of range [0, 65535]");
  }
  if (cfg.admin_command_url.empty() || cfg.admin_command_url[0] != '/') {
    return fail(error, "admin_command_url: \"" + cfg.admin_command_url + "\" must start with '/'");
  }
  if (cfg.server_id < 0 || cfg.server_id > kMaxServerId) {
    return fail(error, "server_id: " + std::to_string(cfg.server_id) + " is out of range [0, 255]");
  }
  if (cfg.snap_count < 2) return fail(error, "snap_count: must be at least 2");
  if (cfg.network_threads < 0 || cfg.network_threads > 64) {
    return fail(error, "network_threads: " + std::to_string(cfg.network_threads) +
                           " is out of range [0, 64]");
  }
  if (cfg.init_limit <= 0) return fail(error, "init_limit: must be positive");
  if (cfg.sync_limit <= 0) return fail(error, "sync_limit: must be positive");
  std::set<int64_t> ids;
  size_t voters = 0;
  for (const auto& p : cfg.servers) {
    if (!ids.insert(p.id).second) return fail(error, "servers: id " + std::to_string(p.id) + " given twice");
    if (p.host.empty()) return fail(error, "servers: id " + std::to_string(p.id) + " has no host");
    if (p.peer_port <= 0 || p.peer_port > kMaxPort) {
      return fail(error, "servers: id " + std::to_string(p.id) + " has no valid peer port");
    }
    if (p.role == PeerRole::kParticipant) ++voters;
  }
  if (!cfg.servers.empty()) {
    if (cfg.self() == nullptr) {
      return fail(error, "server_id: " + std::to_string(cfg.server_id) +
                             " is not in the servers list (set server_id, --server-id or dataDir/myid)");
    }
    if (voters == 0) return fail(error, "servers: no participant (every server is an observer)");
  }
  if (client_tls_wanted(cfg)) {
    TlsOptions tls;  // the stores are read at start-up (ZkServer::start); here only their settings
    if (!tls_options_from_config(cfg, &tls, error)) return false;
    if (cfg.secure_client_port > 0 && cfg.secure_client_port == cfg.client_port &&
        (cfg.secure_client_address.empty() || cfg.secure_client_address == cfg.client_address)) {
      return fail(error, "secureClientPort: the same as clientPort (use client.portUnification for one port)");
    }
  }
  return true;
}

}  // namespace zkraft::server
