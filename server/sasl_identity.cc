#include "server/sasl_identity.h"

namespace zkraft::server {

namespace {

struct KerberosName {
  std::string service;
  std::optional<std::string> host;
  std::optional<std::string> realm;
};

// KerberosName's pattern "([^/@]*)(/([^/@]*))?@([^/@]*)", matched against the whole name.
std::optional<KerberosName> parse_kerberos_name(std::string_view name) {
  const size_t at = name.find('@');
  if (at == std::string_view::npos) return KerberosName{std::string(name), {}, {}};
  const std::string_view before = name.substr(0, at), realm = name.substr(at + 1);
  if (realm.find_first_of("/@") != std::string_view::npos) return std::nullopt;
  const size_t slash = before.find('/');
  KerberosName k;
  k.realm = std::string(realm);
  if (slash == std::string_view::npos) {
    k.service = std::string(before);
  } else {
    if (before.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
    k.service = std::string(before.substr(0, slash));
    k.host = std::string(before.substr(slash + 1));
  }
  return k;
}

}  // namespace

std::optional<std::string> sasl_authorized_id(std::string_view authentication_id,
                                              const PrincipalRules& rules) {
  auto k = parse_kerberos_name(authentication_id);
  if (!k) return std::nullopt;
  if (!k->host && !k->realm) return k->service;  // already simple
  // The DEFAULT rule: the short name is the service part for the default realm; any other realm
  // matches no rule, and ZooKeeper then leaves the authorized id as the client's.
  if (*k->realm != rules.default_realm) return std::string(authentication_id);
  std::string id = k->service;
  if (!rules.remove_host && k->host) id += "/" + *k->host;
  if (!rules.remove_realm) id += "@" + *k->realm;
  return id;
}

}  // namespace zkraft::server
