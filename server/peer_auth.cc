#include "server/peer_auth.h"

#include <map>
#include <memory>

namespace zkraft::server {
namespace {

constexpr std::string_view kDigestModule = "org.apache.zookeeper.server.auth.DigestLoginModule";

// The section's DigestLoginModule, or an error naming what is there instead.
const JaasLoginModule* digest_module(const JaasFile& jaas, const std::string& name, const std::string& key,
                                     std::string* error) {
  const JaasSection* s = jaas.section(name);
  if (s == nullptr) {
    *error = "quorum authentication: the JAAS file has no section '" + name + "' (" + key + ")";
    return nullptr;
  }
  for (const auto& m : s->modules) {
    if (m.class_name == kDigestModule) return &m;
  }
  std::string found = s->modules.empty() ? std::string("no login module") : s->modules.front().class_name;
  *error = "quorum authentication: JAAS section '" + name + "' names " + found + "; zkraft supports " +
           std::string(kDigestModule) + " only for quorum peers (Kerberos between servers is not supported)";
  return nullptr;
}

}  // namespace

std::string check_quorum_auth_switches(const Config& cfg) {
  // The same three rules and messages as ZooKeeper's QuorumPeerConfig.
  if (!cfg.quorum_auth_enable_sasl && cfg.quorum_auth_server_require_sasl) {
    return "quorum.auth.enableSasl is disabled, so cannot enable quorum.auth.serverRequireSasl";
  }
  if (!cfg.quorum_auth_enable_sasl && cfg.quorum_auth_learner_require_sasl) {
    return "quorum.auth.enableSasl is disabled, so cannot enable quorum.auth.learnerRequireSasl";
  }
  if (!cfg.quorum_auth_learner_require_sasl && cfg.quorum_auth_server_require_sasl) {
    return "quorum.auth.learnerRequireSasl is disabled, so cannot enable quorum.auth.serverRequireSasl";
  }
  return {};
}

std::optional<consensus::PeerAuthOptions> peer_auth_from_jaas(const Config& cfg, const JaasFile& jaas,
                                                              std::string* error) {
  consensus::PeerAuthOptions o;
  o.enabled = true;
  o.require_inbound = cfg.quorum_auth_server_require_sasl;
  o.require_outbound = cfg.quorum_auth_learner_require_sasl;
  const JaasLoginModule* learner = digest_module(jaas, cfg.quorum_auth_learner_login_context,
                                                 "quorum.auth.learner.saslLoginContext", error);
  if (learner == nullptr) return std::nullopt;
  auto user = learner->option("username");
  auto password = learner->option("password");
  if (!user || !password) {
    *error = "quorum authentication: JAAS section '" + cfg.quorum_auth_learner_login_context +
             "' needs username=\"...\" and password=\"...\"";
    return std::nullopt;
  }
  o.user = *user;
  o.password = *password;
  const JaasLoginModule* server = digest_module(jaas, cfg.quorum_auth_server_login_context,
                                                "quorum.auth.server.saslLoginContext", error);
  if (server == nullptr) return std::nullopt;
  JaasSection only;
  only.modules.push_back(*server);
  auto users = std::make_shared<std::map<std::string, std::string, std::less<>>>();
  for (auto& [name, pw] : jaas_digest_users(only)) users->emplace(name, pw);
  if (users->empty()) {
    *error = "quorum authentication: JAAS section '" + cfg.quorum_auth_server_login_context +
             "' has no user_NAME=\"password\" entries: no peer could authenticate";
    return std::nullopt;
  }
  o.password_of = [users](std::string_view name) -> std::optional<std::string> {
    auto it = users->find(name);
    if (it == users->end()) return std::nullopt;
    return it->second;
  };
  return o;
}

std::optional<consensus::PeerAuthOptions> peer_auth_options(const Config& cfg, std::string* error) {
  if (std::string e = check_quorum_auth_switches(cfg); !e.empty()) {
    *error = e;
    return std::nullopt;
  }
  if (!cfg.quorum_auth_enable_sasl) return consensus::PeerAuthOptions{};
  if (cfg.jaas_config_file.empty()) {
    *error = "quorum.auth.enableSasl is set but no JAAS file is given (-Djava.security.auth.login.config "
             "in SERVER_JVMFLAGS, or jaas_config_file)";
    return std::nullopt;
  }
  // ${name} in the file: no system properties but the ones the key table read (none here).
  auto jaas = load_jaas_file(cfg.jaas_config_file, [](std::string_view) { return std::nullopt; }, error);
  if (!jaas) return std::nullopt;
  return peer_auth_from_jaas(cfg, *jaas, error);
}

}  // namespace zkraft::server
