// Our YAML config reader: a map of key: value, keys from the table in config_keys.cc, plus the
// `servers` list of maps.

#include <yaml-cpp/yaml.h>

#include "server/config.h"
#include "server/config_keys.h"
#include "server/config_values.h"
#include "server/membership_text.h"

namespace zkraft::server {

using namespace config_values;

namespace {

// YAML scalar as text; error if it is a map or sequence.
bool yaml_scalar(const YAML::Node& n, const std::string& key, std::string& out, std::string* error) {
  if (!n.IsScalar()) return fail(error, key + ": expected a single value");
  out = n.Scalar();
  return true;
}

bool parse_words(const YAML::Node& n, const std::string& key, std::set<std::string>& out,
                 std::string* error) {
  if (n.IsSequence()) {
    out.clear();
    for (const auto& item : n) {
      if (!item.IsScalar()) return fail(error, key + ": every item must be a command name");
      std::string w = trim(item.Scalar());
      if (!w.empty()) out.insert(w);
    }
  } else if (n.IsScalar()) {
    out = split_words(n.Scalar());
  } else if (n.IsNull()) {
    out.clear();
  } else {
    return fail(error, key + ": expected a list of command names or \"*\"");
  }
  return true;
}

// One `servers` item: {id, host, peer_port, election_port?, role?, client_address?, client_port?}.
bool parse_server_map(const YAML::Node& s, const std::string& where, PeerConfig& p,
                      std::string* error) {
  if (!s.IsMap()) return fail(error, where + ": expected a map");
  bool has_id = false, has_host = false, has_peer = false;
  for (const auto& f : s) {
    const std::string name = f.first.as<std::string>();
    const std::string fk = where + "." + name;
    std::string fv;
    if (!yaml_scalar(f.second, fk, fv, error)) return false;
    bool ok = true;
    if (name == "id") {
      ok = parse_int_into(fk, fv, 0, kMaxServerId, p.id, error);
      has_id = true;
    } else if (name == "host") {
      p.host = trim(fv);
      has_host = !p.host.empty();
    } else if (name == "peer_port") {
      ok = parse_int_into(fk, fv, 1, kMaxPort, p.peer_port, error);
      has_peer = true;
    } else if (name == "election_port") {
      ok = parse_int_into(fk, fv, 1, kMaxPort, p.election_port, error);
    } else if (name == "role") {
      ok = parse_peer_role(fk, fv, p.role, error);
    } else if (name == "client_address") {
      p.client_address = trim(fv);
    } else if (name == "client_port") {
      ok = parse_int_into(fk, fv, 1, kMaxPort, p.client_port, error);
    } else {
      return fail(error, fk + ": unknown key");
    }
    if (!ok) return false;
  }
  if (!has_id) return fail(error, where + ".id: missing");
  if (!has_host) return fail(error, where + ".host: missing");
  if (!has_peer) return fail(error, where + ".peer_port: missing");
  return true;
}

bool parse_servers(const YAML::Node& n, Config& cfg, std::string* error) {
  if (n.IsNull()) {
    cfg.servers.clear();
    return true;
  }
  if (!n.IsSequence()) return fail(error, "servers: expected a list of servers");
  std::vector<PeerConfig> peers;
  for (size_t i = 0; i < n.size(); ++i) {
    PeerConfig p;
    if (!parse_server_map(n[i], "servers[" + std::to_string(i) + "]", p, error)) return false;
    peers.push_back(p);
  }
  cfg.servers = std::move(peers);
  return true;
}

bool parse_entry(const ConfigKey& k, const std::string& key, const YAML::Node& n, Config& cfg,
                 std::string* error) {
  switch (k.type) {
    case KeyType::kServers:
      return parse_servers(n, cfg, error);
    case KeyType::kWords:
      return parse_words(n, key, cfg.*std::get<std::set<std::string> Config::*>(k.field), error);
    default: {
      std::string v;
      return yaml_scalar(n, key, v, error) && set_key(k, key, v, cfg, error);
    }
  }
}

}  // namespace

bool parse_yaml_config(std::string_view text, Config& cfg, std::string* error,
                       std::set<const ConfigKey*>* given_keys) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail(error, "YAML: " + std::string(e.what()));
  }
  if (root.IsNull()) return true;  // an empty file changes nothing
  if (!root.IsMap()) return fail(error, "YAML: the top level must be a map of key: value");
  std::vector<std::pair<const ConfigKey*, std::string>> given;
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      const ConfigKey* k = find_yaml_key(key);
      if (k == nullptr) return fail(error, key + ": unknown key");
      if (!parse_entry(*k, key, kv.second, cfg, error)) return false;
      given.emplace_back(k, key);
    }
  } catch (const YAML::Exception& e) {
    return fail(error, "YAML: " + std::string(e.what()));
  }
  if (given_keys != nullptr) {
    for (const auto& [k, name] : given) given_keys->insert(k);
  }
  if (!cfg.admin_enabled) cfg.admin_port = 0;  // as zoo.cfg's admin.enableServer=false
  warn_ignored_keys(given, Config{}, cfg);
  return true;
}

}  // namespace zkraft::server
