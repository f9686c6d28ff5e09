// The client SASL keys (config_keys.h; server/sasl_config.h): the JAAS file and its section,
// the SASL super user, Kerberos principal rules and authentication enforcement.
#include "server/config_key_sections.h"

#include "server/config_values.h"

namespace zkraft::server {

using namespace config_values;

namespace {

constinit const ConfigKey kSaslKeys[] = {
    // SASL (server/sasl_config.h). ZooKeeper reads these as system properties only; a zoo.cfg
    // key X becomes zookeeper.X there, which is the zoo.cfg spelling here too.
    {.yaml = "jaas_config_file", .zoo = "java.security.auth.login.config",
     .sysprop = "java.security.auth.login.config", .type = KeyType::kString,
     .doc = "JAAS file whose Server section lists the SASL DIGEST-MD5 users; empty = no SASL.",
     .field = &Config::jaas_config_file},
    {.yaml = "sasl_login_context", .zoo = "sasl.serverconfig",
     .sysprop = "zookeeper.sasl.serverconfig", .type = KeyType::kString,
     .doc = "The JAAS file's section that holds the server's SASL users.",
     .field = &Config::sasl_login_context},
    {.yaml = "sasl_super_user", .zoo = "superUser", .sysprop = "zookeeper.superUser",
     .type = KeyType::kString,
     .doc = "A SASL name (sasl:NAME) that bypasses ACLs as super; empty = none.",
     .field = &Config::sasl_super_user},
    {.yaml = "kerberos_remove_host_from_principal", .zoo = "kerberos.removeHostFromPrincipal",
     .sysprop = "zookeeper.kerberos.removeHostFromPrincipal", .type = KeyType::kBool,
     .doc = "Drop the /host part of a Kerberos principal in its sasl id.",
     .field = &Config::kerberos_remove_host},
    {.yaml = "kerberos_remove_realm_from_principal", .zoo = "kerberos.removeRealmFromPrincipal",
     .sysprop = "zookeeper.kerberos.removeRealmFromPrincipal", .type = KeyType::kBool,
     .doc = "Drop the @REALM part of a Kerberos principal in its sasl id.",
     .field = &Config::kerberos_remove_realm},
    {.yaml = "enforce_auth_enabled", .zoo = "enforce.auth.enabled",
     .sysprop = "zookeeper.enforce.auth.enabled", .type = KeyType::kBool,
     .doc = "Refuse requests of sessions not authenticated with one of enforce_auth_schemes.",
     .field = &Config::enforce_auth_enabled},
    {.yaml = "enforce_auth_schemes", .zoo = "enforce.auth.schemes",
     .sysprop = "zookeeper.enforce.auth.schemes", .type = KeyType::kWords,
     .doc = "The schemes (digest, sasl, ...) that count as authenticated for enforce_auth_enabled.",
     .field = &Config::enforce_auth_schemes},
    {.yaml = "session_require_client_sasl_auth", .zoo = "sessionRequireClientSASLAuth",
     .sysprop = "zookeeper.sessionRequireClientSASLAuth", .type = KeyType::kBool,
     .doc = "Refuse requests of sessions not authenticated with SASL (enforcement with sasl).",
     .field = &Config::session_require_client_sasl_auth},
};

}  // namespace

std::span<const ConfigKey> sasl_keys() { return kSaslKeys; }

}  // namespace zkraft::server
