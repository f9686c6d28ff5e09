#include "server/sasl_config.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "server/jaas_file.h"
#include "server/sasl_identity.h"
#include "server/tls_options.h"
#include "tree/acl.h"

namespace zkraft::server {

std::optional<SaslSettings> sasl_settings(const Config& config, std::string* error) {
  if (config.jaas_config_file.empty()) return std::nullopt;
  // ${name} in the file: the system properties zkraft knows are in Config; the JVM's own
  // (user.home, ...) have their environment counterparts at most.
  auto lookup = [](std::string_view name) -> std::optional<std::string> {
    if (name == "user.home") {
      if (const char* h = std::getenv("HOME")) return std::string(h);
    }
    if (name == "user.name") {
      if (const char* u = std::getenv("USER")) return std::string(u);
    }
    return std::nullopt;
  };
  auto file = load_jaas_file(config.jaas_config_file, lookup, error);
  if (!file) return std::nullopt;
  const JaasSection* section = file->section(config.sasl_login_context);
  if (section == nullptr) {
    // ZooKeeper (ServerCnxnFactory.configureSaslLogin, 3.9.4) stops only when the file cannot be
    // read; a readable file without the section means no SASL, silently (checked against 3.8: it
    // starts and serves). A file with only quorum sections is a common rig.
    return std::nullopt;
  }
  SaslSettings s;
  for (auto& [user, password] : jaas_digest_users(*section)) s.users[user] = password;
  // A Kerberos login (Krb5LoginModule with a principal) gives the server a JAAS subject, and
  // ZooKeeper then serves GSSAPI only, as the principal's service on the principal's host.
  for (const auto& m : section->modules) {
    if (m.class_name != "com.sun.security.auth.module.Krb5LoginModule") continue;
    const auto principal = m.option("principal");
    const size_t slash = principal ? principal->find('/') : std::string::npos;
    const size_t at = principal ? principal->find('@', slash) : std::string::npos;
    if (slash == std::string::npos || at == std::string::npos) {
      *error = "JAAS section '" + config.sasl_login_context +
               "': Krb5LoginModule needs principal=\"service/host@REALM\"";
      return std::nullopt;
    }
    s.mechanism = "GSSAPI";
    s.protocol = principal->substr(0, slash);
    s.server_name = principal->substr(slash + 1, at - slash - 1);
    s.keytab = m.option("keyTab").value_or("");
  }
  {
    const char* krb5 = std::getenv("KRB5_CONFIG");
    std::ifstream in(krb5 && *krb5 ? krb5 : "/etc/krb5.conf");
    std::stringstream text;
    text << in.rdbuf();
    s.default_realm = krb5_default_realm(text.str());
  }
  s.remove_host = config.kerberos_remove_host;
  s.remove_realm = config.kerberos_remove_realm;
  return s;
}

std::vector<std::string> extra_auth_schemes(const Config& config) {
  std::vector<std::string> schemes;
  if (client_tls_wanted(config)) schemes.push_back("x509");
  if (!config.jaas_config_file.empty()) schemes.push_back("sasl");
  return schemes;
}

bool AuthEnforcement::authenticated(const std::vector<jute::Id>& auth) const {
  if (!enabled) return true;
  return std::any_of(auth.begin(), auth.end(),
                     [&](const jute::Id& id) { return schemes.count(id.scheme) > 0; });
}

std::optional<AuthEnforcement> auth_enforcement(const Config& config, std::string* error) {
  AuthEnforcement e;
  if (config.session_require_client_sasl_auth) {
    e.enabled = true;
    e.schemes = {"sasl"};
  } else {
    e.enabled = config.enforce_auth_enabled;
    e.schemes = config.enforce_auth_schemes;
  }
  if (e.enabled) {
    if (e.schemes.empty()) {
      *error = "zookeeper.enforce.auth.enabled is true zookeeper.enforce.auth.schemes must be "
               "configured.";
      return std::nullopt;
    }
    const tree::AuthSchemes have{extra_auth_schemes(config)};
    for (const auto& scheme : e.schemes) {
      if (!have.known(scheme)) {
        *error = "Authentication scheme " + scheme + " is not available." +
                 (scheme == "sasl" ? " (SASL needs java.security.auth.login.config)" : "");
        return std::nullopt;
      }
    }
  }
  e.sasl_required = e.enabled && e.schemes.count("sasl") > 0;
  return e;
}

}  // namespace zkraft::server
