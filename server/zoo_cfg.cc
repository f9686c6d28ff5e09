// ZooKeeper's zoo.cfg reader: java.util.Properties lines, keys from the table in config_keys.cc.

#include <map>
#include <sstream>

#include "server/config.h"
#include "server/config_keys.h"
#include "server/config_values.h"
#include "server/membership_text.h"

namespace zkraft::server {

using namespace config_values;

bool parse_zoo_cfg(std::string_view text, Config& cfg, std::string* error,
                   std::set<const ConfigKey*>* given_keys) {
  // zoo.cfg defaults that differ from our YAML defaults, as QuorumPeerConfig has them: all
  // interfaces, and tickTime 3000 (ZooKeeperServer.DEFAULT_TICK_TIME) when the file gives none.
  apply_zoo_defaults(cfg);
  std::istringstream in{std::string(text)};
  std::string raw;
  std::map<int64_t, PeerConfig> peers;
  std::vector<std::pair<const ConfigKey*, std::string>> given;
  std::string unknown;
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
    if (key.rfind("server.", 0) == 0) {
      PeerConfig peer;
      if (!parse_server_entry(key, std::string_view(key).substr(7), value, peer, error)) return false;
      // java.util.Properties keeps the last of repeated keys (server.1 and server.01 are
      // different keys there, but the same server; the later line wins either way).
      peers[peer.id] = peer;
    } else if (const ConfigKey* k = find_zoo_key(key)) {
      if (!set_key(*k, key, value, cfg, error)) return false;
      given.emplace_back(k, key);
    } else {
      // ZooKeeper turns unknown keys into system properties and carries on; so do we, saying so.
      unknown += (unknown.empty() ? "" : ", ") + key;
    }
  }
  // An ensemble is the list of server.N lines, whatever order they came in.
  if (given_keys != nullptr) {
    for (const auto& [k, name] : given) given_keys->insert(k);
  }
  if (!peers.empty()) {
    cfg.servers.clear();
    for (auto& [id, p] : peers) cfg.servers.push_back(p);
  }
  // Like a Properties lookup, the key's position in the file does not matter.
  if (!cfg.admin_enabled) cfg.admin_port = 0;
  if (!unknown.empty()) {
    cfg.warnings.push_back("config warning: zoo.cfg keys unknown to zkraft, ignored (ZooKeeper "
                           "reads them as system properties): " + unknown);
  }
  Config defaults;
  apply_zoo_defaults(defaults);
  warn_ignored_keys(given, defaults, cfg);
  return true;
}

}  // namespace zkraft::server
