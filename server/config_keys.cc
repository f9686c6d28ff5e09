// The configuration key table (config_keys.h): its assembly from the sections
// (config_key_sections.h), the look-ups by each spelling, setting and printing a key's field,
// and the --help text.
#include "server/config_keys.h"

#include <algorithm>
#include <vector>

#include "server/config_key_sections.h"
#include "server/config_values.h"

namespace zkraft::server {

using namespace config_values;

namespace {

// The one table, assembled from its sections in the order --help lists them (and, but for a few
// keys, conf/standalone.yaml documents them). Built once; pointers into it stay valid.
const std::vector<ConfigKey>& table() {
  static const std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> all;
    for (auto section : {server_keys(), sasl_keys(), operation_keys(), quorum_keys(),
                         client_tls_keys(), quorum_tls_keys()}) {
      all.insert(all.end(), section.begin(), section.end());
    }
    return all;
  }();
  return keys;
}

std::string join_words(const std::set<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

}  // namespace

std::span<const ConfigKey> config_keys() { return table(); }

const ConfigKey* find_yaml_key(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& k : table()) {
    if (k.yaml == name) return &k;
  }
  return nullptr;
}

const ConfigKey* find_zoo_key(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& k : table()) {
    if (k.type != KeyType::kServers && (k.zoo == name || k.zoo_alias == name || k.sysprop == name)) {
      return &k;
    }
  }
  return nullptr;
}

const ConfigKey* find_sysprop_key(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& k : table()) {
    if (k.sysprop == name) return &k;
  }
  return nullptr;
}

bool set_key(const ConfigKey& key, const std::string& name, std::string_view text, Config& cfg,
             std::string* error) {
  struct Setter {
    const ConfigKey& key;
    const std::string& name;
    std::string_view text;
    Config& cfg;
    std::string* error;
    bool operator()(std::monostate) const { return fail(error, name + ": not a single value"); }
    bool operator()(int32_t Config::*f) const {
      return parse_int_into(name, text, key.lo, key.hi, cfg.*f, error);
    }
    bool operator()(int64_t Config::*f) const {
      return parse_int_into(name, text, key.lo, key.hi, cfg.*f, error);
    }
    bool operator()(bool Config::*f) const { return parse_bool(name, text, cfg.*f, error); }
    bool operator()(std::string Config::*f) const {
      cfg.*f = std::string(text);
      return true;
    }
    bool operator()(std::set<std::string> Config::*f) const {
      cfg.*f = split_words(text);
      return true;
    }
  };
  return std::visit(Setter{key, name, text, cfg, error}, key.field);
}

std::string key_value_text(const ConfigKey& key, const Config& cfg) {
  struct Text {
    const Config& cfg;
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(int32_t Config::*f) const { return std::to_string(cfg.*f); }
    std::string operator()(int64_t Config::*f) const { return std::to_string(cfg.*f); }
    std::string operator()(bool Config::*f) const { return cfg.*f ? "true" : "false"; }
    std::string operator()(std::string Config::*f) const { return cfg.*f; }
    std::string operator()(std::set<std::string> Config::*f) const { return join_words(cfg.*f); }
  };
  return std::visit(Text{cfg}, key.field);
}

void apply_zoo_defaults(Config& cfg) {
  for (const auto& k : table()) {
    if (k.zoo_default != nullptr) set_key(k, std::string(k.zoo), k.zoo_default, cfg, nullptr);
  }
}

void warn_ignored_keys(const std::vector<std::pair<const ConfigKey*, std::string>>& given,
                       const Config& defaults, Config& cfg) {
  std::set<const ConfigKey*> seen;
  for (const auto& [key, name] : given) {
    if (key->ignored.empty() || !seen.insert(key).second) continue;
    const std::string value = key_value_text(*key, cfg);
    if (value == key_value_text(*key, defaults)) continue;
    cfg.warnings.push_back("config warning: " + name + "=" + value + " is ignored: " +
                           std::string(key->ignored));
  }
}

std::string config_keys_help() {
  const Config yaml_defaults;
  Config zoo_defaults;
  apply_zoo_defaults(zoo_defaults);
  std::string out =
      "Configuration keys (YAML name / zoo.cfg name, -Dsystem.property in SERVER_JVMFLAGS or "
      "JVMFLAGS, flag; type; default):\n";
  for (const auto& k : table()) {
    out += "  " + std::string(k.yaml.empty() ? "-" : k.yaml) + " / " +
           std::string(k.zoo.empty() ? "-" : k.zoo);
    if (!k.zoo_alias.empty()) out += " (or " + std::string(k.zoo_alias) + ")";
    if (!k.sysprop.empty()) out += ", -D" + std::string(k.sysprop);
    if (!k.flag.empty()) out += ", " + std::string(k.flag);
    out += "; ";
    switch (k.type) {
      case KeyType::kInt:
        out += "integer " + std::to_string(k.lo) + ".." + std::to_string(k.hi);
        break;
      case KeyType::kBool: out += "boolean"; break;
      case KeyType::kString: out += "text"; break;
      case KeyType::kWords: out += "list of names"; break;
      case KeyType::kServers: out += "list of servers"; break;
    }
    if (k.type != KeyType::kServers) {
      const std::string def = key_value_text(k, yaml_defaults);
      out += "; default " + (def.empty() ? std::string("empty") : def);
      if (k.zoo_default != nullptr && key_value_text(k, zoo_defaults) != def) {
        out += " (zoo.cfg " + key_value_text(k, zoo_defaults) + ")";
      }
    }
    out += "\n      " + std::string(k.doc) + "\n";
  }
  return out;
}

}  // namespace zkraft::server
