// ZooKeeper's settings as Java system properties: the `-Dname=value` words of SERVER_JVMFLAGS and
// JVMFLAGS, which zkServer.sh puts on the java command line. A rig that starts ZooKeeper with
// such flags starts zkraft the same way; the names are the table's ConfigKey::sysprop.

#include <utility>

#include "server/config.h"
#include "server/config_keys.h"
#include "server/config_values.h"

namespace zkraft::server {

std::vector<std::string> jvm_flag_words(const char* server_jvmflags, const char* jvmflags) {
  // zkServer.sh: JVMFLAGS="$SERVER_JVMFLAGS $JVMFLAGS", then `java ... $JVMFLAGS`: unquoted, so
  // the shell splits on blanks and keeps quote characters as they are.
  std::vector<std::string> words;
  for (const char* var : {server_jvmflags, jvmflags}) {
    if (var == nullptr) continue;
    std::string word;
    for (const char* p = var;; ++p) {
      const bool blank = *p == ' ' || *p == '\t' || *p == '\n';
      if (*p == '\0' || blank) {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
        if (*p == '\0') break;
      } else {
        word += *p;
      }
    }
  }
  return words;
}

bool apply_system_properties(const std::vector<std::string>& words, Config& cfg, std::string* error,
                             const std::set<const ConfigKey*>& skip) {
  // The JVM keeps the last -D of a name; only that one is parsed, so an earlier bad value that a
  // later word replaces does not matter (java would never have seen it either).
  std::vector<std::pair<const ConfigKey*, std::pair<std::string, std::string>>> last;
  for (const std::string& w : words) {
    if (w.size() < 3 || w.compare(0, 2, "-D") != 0) continue;
    const size_t eq = w.find('=');
    const std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const ConfigKey* k = find_sysprop_key(name);
    if (k == nullptr) continue;  // -Dlog4j..., -Dzookeeper.log.dir, or one zkraft does not implement
    std::string value = eq == std::string::npos ? "" : w.substr(eq + 1);
    bool replaced = false;
    for (auto& [key, nv] : last) {
      if (key == k) {
        nv = {"-D" + name, std::move(value)};
        replaced = true;
        break;
      }
    }
    if (!replaced) last.push_back({k, {"-D" + name, std::move(value)}});
  }
  std::vector<std::pair<const ConfigKey*, std::string>> set;
  for (const auto& [k, nv] : last) {
    if (skip.count(k)) continue;  // the config file decided it
    if (!set_key(*k, nv.first, nv.second, cfg, error)) return false;
    set.emplace_back(k, nv.first);
  }
  if (!cfg.admin_enabled) cfg.admin_port = 0;  // as parse_zoo_cfg does
  warn_ignored_keys(set, Config{}, cfg);
  return true;
}

}  // namespace zkraft::server
