#pragma once
// The table of configuration keys: each key zkraft reads is named here once, with its YAML name,
// its zoo.cfg name(s), the Java system property ZooKeeper reads for it, its command-line flag,
// its type and bounds, a line of documentation and the Config field it fills. The zoo.cfg and
// YAML parsers, the -D words of SERVER_JVMFLAGS/JVMFLAGS, the flags, --help and the key list in
// conf/standalone.yaml (checked by a test) all follow this table.
//
// Defaults are the Config member initializers (one place: code elsewhere builds a Config{}); the
// table only records where zoo.cfg's default differs (ZooKeeper's own defaults).
// Invariants (tested): every YAML name, zoo.cfg name, system property and flag appears at most
// once (a key's zoo.cfg name may equal its own system property); every key but `servers` has a
// field of the type its KeyType says.

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "server/config.h"

namespace zkraft::server {

enum class KeyType {
  kInt,      // an integer in [lo, hi]
  kBool,     // true/false/yes/no/on/off/1/0
  kString,   // taken as written
  kWords,    // a set of names: "a,b,c" (both formats) or a YAML list
  kServers,  // the ensemble: YAML `servers` list, zoo.cfg server.N lines (parsed by the readers)
};

using KeyField = std::variant<std::monostate, int32_t Config::*, int64_t Config::*, bool Config::*,
                              std::string Config::*, std::set<std::string> Config::*>;

struct ConfigKey {
  std::string_view yaml = {};       // "" = zoo.cfg only
  std::string_view zoo = {};        // "" = YAML only
  std::string_view zoo_alias = {};  // a second zoo.cfg spelling, "" = none
  // The Java system property ZooKeeper reads for this setting ("zookeeper.enforceQuota"), "" =
  // none (ZooKeeper reads it from zoo.cfg only, e.g. tickTime). Accepted as a -D word and, as a
  // zkraft extension, as a zoo.cfg key. ZooKeeper's own zoo.cfg spelling of a "zookeeper.X"
  // property is X (QuorumPeerConfig sets "zookeeper." + key for keys it does not know); that is
  // `zoo`. Properties without the prefix (znode.container.*, jute.maxbuffer) have no zoo.cfg
  // spelling in ZooKeeper; zkraft takes the property name there too.
  std::string_view sysprop = {};
  std::string_view flag = {};       // "--client-port", "" = no flag
  std::string_view flag_arg = {};   // what the flag takes, for --help ("PORT")
  KeyType type = KeyType::kString;
  int64_t lo = 0, hi = 0;      // kInt only
  std::string_view doc = {};        // one line
  KeyField field = {};
  const char* zoo_default = nullptr;  // zoo.cfg's default where it differs from Config{}
  // Non-empty: accepted, but zkraft does not act on it yet (why). A non-default value is
  // reported in Config::warnings.
  std::string_view ignored = {};

  // The name a message uses: YAML name, else zoo.cfg name.
  std::string_view name() const { return yaml.empty() ? zoo : yaml; }
};

std::span<const ConfigKey> config_keys();
const ConfigKey* find_yaml_key(std::string_view name);
const ConfigKey* find_zoo_key(std::string_view name);  // also by zoo_alias and sysprop; not server.N
const ConfigKey* find_sysprop_key(std::string_view name);

// Parses `text` into the key's field (not for kServers). `name` is what an error names: the
// spelling the user wrote (zoo.cfg key, YAML key or flag).
bool set_key(const ConfigKey& key, const std::string& name, std::string_view text, Config& cfg,
             std::string* error);

// The field's value as a config file would spell it ("2181", "true", "srvr,stat").
std::string key_value_text(const ConfigKey& key, const Config& cfg);

// Config{} with zoo.cfg's defaults applied (what parse_zoo_cfg starts from).
void apply_zoo_defaults(Config& cfg);

// For each key in `given` (spelled `names[i]`) that the table marks ignored: a warning line in
// cfg.warnings if its value differs from `defaults`.
void warn_ignored_keys(const std::vector<std::pair<const ConfigKey*, std::string>>& given,
                       const Config& defaults, Config& cfg);

// The "Configuration keys" section of --help: every key, both names, type, bounds, default, doc.
std::string config_keys_help();

}  // namespace zkraft::server
