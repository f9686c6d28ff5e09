#include "server/config.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace zkraft::server {

namespace {

bool fail(std::string* error, const std::string& msg) {
  if (error != nullptr) *error = "config error: " + msg;
  return false;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<int64_t> to_int(std::string_view text) {
  std::string t = trim(text);
  int64_t v = 0;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (!t.empty() && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (t.empty() || ec != std::errc() || p != e) return std::nullopt;
  return v;
}

// Integer with a lower and upper bound; the message names the key and quotes the text.
bool parse_int(const std::string& key, std::string_view text, int64_t lo, int64_t hi, int64_t& out,
               std::string* error) {
  auto v = to_int(text);
  const char* what = lo >= 1 ? "not a positive integer" : lo == 0 ? "not a non-negative integer"
                                                                   : "not an integer";
  if (!v) return fail(error, key + ": " + what + " \"" + std::string(text) + "\"");
  if (*v < lo || *v > hi) {
    return fail(error, key + ": " + std::to_string(*v) + " is out of range [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]");
  }
  out = *v;
  return true;
}

template <typename T>
bool parse_int_into(const std::string& key, std::string_view text, int64_t lo, int64_t hi, T& out,
                    std::string* error) {
  int64_t v = 0;
  if (!parse_int(key, text, lo, hi, v, error)) return false;
  out = static_cast<T>(v);
  return true;
}

bool parse_bool(const std::string& key, std::string_view text, bool& out, std::string* error) {
  std::string t = lower(trim(text));
  if (t == "true" || t == "yes" || t == "on" || t == "1") {
    out = true;
  } else if (t == "false" || t == "no" || t == "off" || t == "0") {
    out = false;
  } else {
    return fail(error, key + ": not a boolean (true/false/yes/no) \"" + std::string(text) + "\"");
  }
  return true;
}

constexpr int64_t kMaxPort = 65535;
constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxServerId = 255;  // the top byte of a session id

// "srvr, ruok ,stat" -> {"srvr","ruok","stat"}; empty items dropped.
std::set<std::string> split_words(std::string_view text) {
  std::set<std::string> out;
  std::string item;
  std::istringstream in{std::string(text)};
  while (std::getline(in, item, ',')) {
    std::string w = trim(item);
    if (!w.empty()) out.insert(w);
  }
  return out;
}

// host[:port] where host may be [v6]. Splits at the last ':' outside brackets.
void split_host_port(std::string_view s, std::string& host, std::string& port, bool& has_port) {
  has_port = false;
  size_t colon = std::string_view::npos;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (s[i] == ':' && depth == 0) colon = i;
  }
  if (colon == std::string_view::npos) {
    host = std::string(s);
  } else {
    host = std::string(s.substr(0, colon));
    port = std::string(s.substr(colon + 1));
    has_port = true;
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
}

// Splits on ':' outside [ ] brackets.
std::vector<std::string> split_colons(std::string_view s) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ':' && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  return parts;
}

bool parse_role(const std::string& key, std::string_view text, PeerRole& role, std::string* error) {
  std::string t = lower(trim(text));
  if (t == "participant") {
    role = PeerRole::kParticipant;
  } else if (t == "observer") {
    role = PeerRole::kObserver;
  } else {
    return fail(error, key + ": role must be participant or observer, not \"" + std::string(text) + "\"");
  }
  return true;
}

// zoo.cfg: server.N=host:peerPort:electionPort[:participant|observer][;[clientAddr:]clientPort]
bool parse_server_line(const std::string& key, std::string_view id_text, std::string_view value,
                       PeerConfig& peer, std::string* error) {
  if (!parse_int_into(key, id_text, 0, kMaxServerId, peer.id, error)) return false;
  std::string v = trim(value);
  std::string client_part;
  if (size_t semi = v.find(';'); semi != std::string::npos) {
    client_part = trim(std::string_view(v).substr(semi + 1));
    v = trim(std::string_view(v).substr(0, semi));
  }
  std::vector<std::string> parts = split_colons(v);
  if (parts.size() < 3 || parts.size() > 4) {
    return fail(error, key + ": expected host:peerPort:electionPort[:participant|observer], got \"" +
                           std::string(value) + "\"");
  }
  peer.host = trim(parts[0]);
  if (peer.host.size() >= 2 && peer.host.front() == '[' && peer.host.back() == ']') {
    peer.host = peer.host.substr(1, peer.host.size() - 2);
  }
  if (peer.host.empty()) return fail(error, key + ": empty host in \"" + std::string(value) + "\"");
  if (!parse_int_into(key, parts[1], 1, kMaxPort, peer.peer_port, error)) return false;
  if (!parse_int_into(key, parts[2], 1, kMaxPort, peer.election_port, error)) return false;
  if (parts.size() == 4 && !parse_role(key, parts[3], peer.role, error)) return false;
  if (!client_part.empty()) {
    std::string host, port;
    bool has_port = false;
    split_host_port(client_part, host, port, has_port);
    if (!has_port) {
      port = host;  // ";2181" means port only
      host.clear();
    }
    peer.client_address = host;
    if (!parse_int_into(key, port, 1, kMaxPort, peer.client_port, error)) return false;
  }
  return true;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// YAML scalar as text; error if it is a map or sequence.
bool yaml_scalar(const YAML::Node& n, const std::string& key, std::string& out, std::string* error) {
  if (!n.IsScalar()) return fail(error, key + ": expected a single value");
  out = n.Scalar();
  return true;
}

}  // namespace

bool parse_server_spec(std::string_view spec, PeerConfig& peer, std::string* error) {
  auto eq = spec.find('=');
  std::string_view key = spec.substr(0, eq);
  if (eq == std::string_view::npos || key.substr(0, 7) != "server.") {
    if (error) *error = "not a server.N=... line: " + std::string(spec);
    return false;
  }
  std::string k(key);
  return parse_server_line(k, key.substr(7), spec.substr(eq + 1), peer, error);
}

const PeerConfig* Config::self() const {
  for (const auto& p : servers) {
    if (p.id == server_id) return &p;
  }
  return nullptr;
}

bool parse_zoo_cfg(std::string_view text, Config& cfg, std::string* error) {
  // zoo.cfg defaults that differ from our YAML defaults, as QuorumPeerConfig has them: all
  // interfaces, and tickTime 3000 (ZooKeeperServer.DEFAULT_TICK_TIME) when the file gives none.
  cfg.client_address = "0.0.0.0";
  cfg.admin_address = "0.0.0.0";
  cfg.tick_time_ms = 3000;
  std::istringstream in{std::string(text)};
  std::string raw;
  std::map<int64_t, PeerConfig> peers;
  std::optional<bool> admin_enabled;
  while (std::getline(in, raw)) {
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    // java.util.Properties: the key ends at the first '=', ':' or whitespace; then whitespace and
    // at most one '=' or ':' separate it from the value. A bare word is a key with value "".
    size_t end = line.find_first_of("=: \t\f");
    if (end == std::string::npos) end = line.size();
    std::string key = line.substr(0, end);
    size_t pos = end;
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\f')) ++pos;
    if (pos < line.size() && (line[pos] == '=' || line[pos] == ':')) ++pos;
    std::string value = trim(std::string_view(line).substr(std::min(pos, line.size())));
    bool ok = true;
    if (key == "clientPort") {
      ok = parse_int_into(key, value, 0, kMaxPort, cfg.client_port, error);
    } else if (key == "clientPortAddress") {
      cfg.client_address = value;
    } else if (key == "dataDir") {
      cfg.data_dir = value;
    } else if (key == "dataLogDir") {
      cfg.data_log_dir = value;
    } else if (key == "tickTime") {
      ok = parse_int_into(key, value, 1, kMaxInt32, cfg.tick_time_ms, error);
    } else if (key == "initLimit") {
      ok = parse_int_into(key, value, 1, kMaxInt32, cfg.init_limit, error);
    } else if (key == "syncLimit") {
      ok = parse_int_into(key, value, 1, kMaxInt32, cfg.sync_limit, error);
    } else if (key == "minSessionTimeout") {
      ok = parse_int_into(key, value, -1, kMaxInt32, cfg.min_session_timeout_ms, error);
    } else if (key == "maxSessionTimeout") {
      ok = parse_int_into(key, value, -1, kMaxInt32, cfg.max_session_timeout_ms, error);
    } else if (key == "maxClientCnxns") {
      ok = parse_int_into(key, value, 0, kMaxInt32, cfg.max_client_cnxns, error);
    } else if (key == "4lw.commands.whitelist") {
      cfg.four_letter_words = split_words(value);
    } else if (key == "admin.serverPort") {
      ok = parse_int_into(key, value, 0, kMaxPort, cfg.admin_port, error);
    } else if (key == "admin.serverAddress") {
      cfg.admin_address = value;
    } else if (key == "admin.enableServer") {
      bool enabled = true;
      ok = parse_bool(key, value, enabled, error);
      admin_enabled = enabled;
    } else if (key == "globalOutstandingLimit") {
      ok = parse_int_into(key, value, 1, kMaxInt32, cfg.global_outstanding_limit, error);
    } else if (key == "snapCount") {
      ok = parse_int_into(key, value, 2, std::numeric_limits<int64_t>::max(), cfg.snap_count, error);
    } else if (key == "forceSync") {
      ok = parse_bool(key, value, cfg.fsync, error);
    } else if (key == "reconfigEnabled") {
      ok = parse_bool(key, value, cfg.reconfig_enabled, error);
    } else if (key == "extendedTypesEnabled" || key == "zookeeper.extendedTypesEnabled") {
      ok = parse_bool(key, value, cfg.extended_types_enabled, error);
    } else if (key == "DigestAuthenticationProvider.superDigest" ||
               key == "zookeeper.DigestAuthenticationProvider.superDigest") {
      cfg.super_digest = value;
    } else if (key == "zkraft.joining") {
      ok = parse_bool(key, value, cfg.joining, error);
    } else if (key.rfind("server.", 0) == 0) {
      PeerConfig peer;
      ok = parse_server_line(key, std::string_view(key).substr(7), value, peer, error);
      // java.util.Properties keeps the last of repeated keys (server.1 and server.01 are
      // different keys there, but the same server; the later line wins either way).
      if (ok) peers[peer.id] = peer;
    } else {
      // Like ZooKeeper, which turns unknown keys into system properties and carries on.
      spdlog::debug("zoo.cfg: ignoring unknown key {}", key);
    }
    if (!ok) return false;
  }
  // An ensemble is the list of server.N lines, whatever order they came in.
  if (!peers.empty()) {
    cfg.servers.clear();
    for (auto& [id, p] : peers) cfg.servers.push_back(p);
  }
  // Like a Properties lookup, the key's position in the file does not matter.
  if (admin_enabled.has_value() && !*admin_enabled) cfg.admin_port = 0;
  return true;
}

bool parse_yaml_config(std::string_view text, Config& cfg, std::string* error) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail(error, "YAML: " + std::string(e.what()));
  }
  if (root.IsNull()) return true;  // an empty file changes nothing
  if (!root.IsMap()) return fail(error, "YAML: the top level must be a map of key: value");
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      const YAML::Node& n = kv.second;
      std::string v;
      bool ok = true;
      auto scalar = [&]() { return yaml_scalar(n, key, v, error); };
      if (key == "client_port") {
        ok = scalar() && parse_int_into(key, v, 0, kMaxPort, cfg.client_port, error);
      } else if (key == "client_address") {
        ok = scalar();
        if (ok) cfg.client_address = v;
      } else if (key == "data_dir") {
        ok = scalar();
        if (ok) cfg.data_dir = v;
      } else if (key == "data_log_dir") {
        ok = scalar();
        if (ok) cfg.data_log_dir = v;
      } else if (key == "tick_time_ms") {
        ok = scalar() && parse_int_into(key, v, 1, kMaxInt32, cfg.tick_time_ms, error);
      } else if (key == "min_session_timeout_ms") {
        ok = scalar() && parse_int_into(key, v, -1, kMaxInt32, cfg.min_session_timeout_ms, error);
      } else if (key == "max_session_timeout_ms") {
        ok = scalar() && parse_int_into(key, v, -1, kMaxInt32, cfg.max_session_timeout_ms, error);
      } else if (key == "init_limit") {
        ok = scalar() && parse_int_into(key, v, 1, kMaxInt32, cfg.init_limit, error);
      } else if (key == "sync_limit") {
        ok = scalar() && parse_int_into(key, v, 1, kMaxInt32, cfg.sync_limit, error);
      } else if (key == "max_client_connections") {
        ok = scalar() && parse_int_into(key, v, 0, kMaxInt32, cfg.max_client_cnxns, error);
      } else if (key == "max_buffer") {
        ok = scalar() && parse_int_into(key, v, 1, kMaxInt32, cfg.max_buffer, error);
      } else if (key == "global_outstanding_limit") {
        ok = scalar() && parse_int_into(key, v, 1, kMaxInt32, cfg.global_outstanding_limit, error);
      } else if (key == "max_outstanding_per_connection") {
        ok = scalar() &&
             parse_int_into(key, v, 1, kMaxInt32, cfg.max_outstanding_per_connection, error);
      } else if (key == "max_watches_per_connection") {
        ok = scalar() && parse_int_into(key, v, 0, kMaxInt32, cfg.max_watches_per_connection, error);
      } else if (key == "four_letter_words") {
        if (n.IsSequence()) {
          cfg.four_letter_words.clear();
          for (const auto& item : n) {
            if (!item.IsScalar()) return fail(error, key + ": every item must be a command name");
            std::string w = trim(item.Scalar());
            if (!w.empty()) cfg.four_letter_words.insert(w);
          }
        } else if (n.IsScalar()) {
          cfg.four_letter_words = split_words(n.Scalar());
        } else if (n.IsNull()) {
          cfg.four_letter_words.clear();
        } else {
          return fail(error, key + ": expected a list of command names or \"*\"");
        }
      } else if (key == "server_id") {
        ok = scalar() && parse_int_into(key, v, 0, kMaxServerId, cfg.server_id, error);
      } else if (key == "admin_port") {
        ok = scalar() && parse_int_into(key, v, 0, kMaxPort, cfg.admin_port, error);
      } else if (key == "admin_address") {
        ok = scalar();
        if (ok) cfg.admin_address = v;
      } else if (key == "fsync") {
        ok = scalar() && parse_bool(key, v, cfg.fsync, error);
      } else if (key == "reconfig_enabled") {
        ok = scalar() && parse_bool(key, v, cfg.reconfig_enabled, error);
      } else if (key == "extended_types_enabled") {
        ok = scalar() && parse_bool(key, v, cfg.extended_types_enabled, error);
      } else if (key == "super_digest") {
        ok = scalar();
        if (ok) cfg.super_digest = v;
      } else if (key == "joining") {
        ok = scalar() && parse_bool(key, v, cfg.joining, error);
      } else if (key == "snap_count") {
        ok = scalar() &&
             parse_int_into(key, v, 2, std::numeric_limits<int64_t>::max(), cfg.snap_count, error);
      } else if (key == "servers") {
        if (n.IsNull()) {
          cfg.servers.clear();
          continue;
        }
        if (!n.IsSequence()) return fail(error, "servers: expected a list of servers");
        std::vector<PeerConfig> peers;
        for (size_t i = 0; i < n.size(); ++i) {
          const YAML::Node& s = n[i];
          const std::string where = "servers[" + std::to_string(i) + "]";
          if (!s.IsMap()) return fail(error, where + ": expected a map");
          PeerConfig p;
          bool has_id = false, has_host = false, has_peer = false;
          for (const auto& f : s) {
            const std::string fk = where + "." + f.first.as<std::string>();
            const std::string name = f.first.as<std::string>();
            std::string fv;
            if (!yaml_scalar(f.second, fk, fv, error)) return false;
            bool fok = true;
            if (name == "id") {
              fok = parse_int_into(fk, fv, 0, kMaxServerId, p.id, error);
              has_id = true;
            } else if (name == "host") {
              p.host = trim(fv);
              has_host = !p.host.empty();
            } else if (name == "peer_port") {
              fok = parse_int_into(fk, fv, 1, kMaxPort, p.peer_port, error);
              has_peer = true;
            } else if (name == "election_port") {
              fok = parse_int_into(fk, fv, 1, kMaxPort, p.election_port, error);
            } else if (name == "role") {
              fok = parse_role(fk, fv, p.role, error);
            } else if (name == "client_address") {
              p.client_address = trim(fv);
            } else if (name == "client_port") {
              fok = parse_int_into(fk, fv, 1, kMaxPort, p.client_port, error);
            } else {
              return fail(error, fk + ": unknown key");
            }
            if (!fok) return false;
          }
          if (!has_id) return fail(error, where + ".id: missing");
          if (!has_host) return fail(error, where + ".host: missing");
          if (!has_peer) return fail(error, where + ".peer_port: missing");
          peers.push_back(p);
        }
        cfg.servers = std::move(peers);
      } else {
        return fail(error, key + ": unknown key");
      }
      if (!ok) return false;
    }
  } catch (const YAML::Exception& e) {
    return fail(error, "YAML: " + std::string(e.what()));
  }
  return true;
}

bool load_config_file(const std::string& path, Config& cfg, std::string* error) {
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
  return yaml ? parse_yaml_config(text, cfg, error) : parse_zoo_cfg(text, cfg, error);
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
  if (cfg.max_buffer <= 0) return fail(error, "max_buffer: must be positive");
  if (cfg.global_outstanding_limit <= 0) return fail(error, "global_outstanding_limit: must be positive");
  if (cfg.max_outstanding_per_connection <= 0) {
    return fail(error, "max_outstanding_per_connection: must be positive");
  }
  if (cfg.max_watches_per_connection < 0) return fail(error, "max_watches_per_connection: must be >= 0");
  if (cfg.admin_port < 0 || cfg.admin_port > kMaxPort) {
    return fail(error, "admin_port: " + std::to_string(cfg.admin_port) + " is out of range [0, 65535]");
  }
  if (cfg.server_id < 0 || cfg.server_id > kMaxServerId) {
    return fail(error, "server_id: " + std::to_string(cfg.server_id) + " is out of range [0, 255]");
  }
  if (cfg.snap_count < 2) return fail(error, "snap_count: must be at least 2");
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
  return true;
}

bool parse_command_line(int argc, char** argv, Config& cfg, std::string* error) {
  CLI::App app{"zkraft-server: a ZooKeeper-compatible coordination server replicated with Raft"};
  std::string config_file, client_port, client_address, data_dir, tick_time, server_id, admin_port;
  bool show_version = false;
  app.add_option("-c,--config", config_file, "config file: YAML (.yaml/.yml) or ZooKeeper zoo.cfg")
      ->type_name("FILE");
  app.add_option("--client-port", client_port, "client port (0 = any free port)")->type_name("PORT");
  app.add_option("--client-address", client_address, "address the client port binds to")
      ->type_name("ADDRESS");
  app.add_option("--data-dir", data_dir, "directory for the log, snapshots and myid")
      ->type_name("DIR");
  app.add_option("--tick-time", tick_time, "tick time in milliseconds")->type_name("MS");
  app.add_option("--server-id", server_id, "this server's id (overrides dataDir/myid)")
      ->type_name("ID");
  app.add_option("--admin-port", admin_port, "HTTP admin port (0 = disabled)")->type_name("PORT");
  app.add_flag("--version", show_version, "print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::exit(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    std::exit(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (size_t nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    return fail(error, "command line: " + what);
  }
  if (show_version) {
#ifdef ZKRAFT_VERSION
    std::cout << "zkraft " << ZKRAFT_VERSION << " (ZooKeeper " << ZKRAFT_ZK_COMPAT_VERSION
              << " compatible)" << std::endl;
#endif
    std::exit(0);
  }
  if (!config_file.empty() && !load_config_file(config_file, cfg, error)) return false;
  if (!client_port.empty() &&
      !parse_int_into("--client-port", client_port, 0, kMaxPort, cfg.client_port, error)) {
    return false;
  }
  if (!client_address.empty()) cfg.client_address = client_address;
  if (!data_dir.empty()) cfg.data_dir = data_dir;
  if (!tick_time.empty() &&
      !parse_int_into("--tick-time", tick_time, 1, kMaxInt32, cfg.tick_time_ms, error)) {
    return false;
  }
  if (!admin_port.empty() &&
      !parse_int_into("--admin-port", admin_port, 0, kMaxPort, cfg.admin_port, error)) {
    return false;
  }
  if (!server_id.empty()) {
    if (!parse_int_into("--server-id", server_id, 0, kMaxServerId, cfg.server_id, error)) return false;
  } else if (cfg.data_dir.find("{id}") == std::string::npos && !read_myid(cfg, error)) {
    return false;
  }
  apply_server_identity(cfg, !client_port.empty(), !client_address.empty());
  return validate_config(cfg, error);
}

}  // namespace zkraft::server
