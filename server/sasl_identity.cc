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

std::string krb5_default_realm(std::string_view text) {
  bool in_libdefaults = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    line = line.substr(first);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    if (line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      in_libdefaults = line == "[libdefaults]";
      continue;
    }
    if (!in_libdefaults || line.rfind("default_realm", 0) != 0) continue;
    std::string_view rest = line.substr(13);
    const size_t eq = rest.find_first_not_of(" \t");
    if (eq == std::string_view::npos || rest[eq] != '=') continue;
    rest = rest.substr(eq + 1);
    const size_t v = rest.find_first_not_of(" \t");
    return v == std::string_view::npos ? std::string() : std::string(rest.substr(v));
  }
  return {};
}

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
