#pragma once
// What a server's configuration says about SASL and authentication enforcement, checked once at
// start-up (errors are one line, for the start-up log), then used by the request pipeline.
//
// sasl_settings: the DIGEST-MD5 users of the JAAS file's login section, as ZooKeeper 3.9.4's
// ServerCnxnFactory.configureSaslLogin reads them: every DigestLoginModule option user_NAME of the
// section (zookeeper.sasl.serverconfig, default "Server"). A JAAS file that cannot be read, or
// lacks the section, stops the server (ZooKeeper throws an IOException there too). No JAAS file:
// no SASL, and ZooKeeper's answer to a SASL request without a login stays (AuthFailed, close).
//
// AuthEnforcement is ZooKeeper's AuthenticationHelper: sessionRequireClientSASLAuth means
// enforcement with the one scheme sasl; otherwise enforce.auth.enabled with enforce.auth.schemes.
// Enabled with no scheme, or with a scheme the server does not have, is a start-up error. An
// enforced session without an id of one of the schemes gets SessionClosedRequireAuth for any
// request other than auth and sasl, and its connection closes.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jute/data.h"
#include "server/config.h"
#include "server/sasl_server.h"

namespace zkraft::server {

// nullopt with *error empty: no SASL configured; nullopt with *error set: a start-up error.
std::optional<SaslSettings> sasl_settings(const Config& config, std::string* error);

// The ACL schemes this server has besides world, auth, digest and ip (tree::AuthSchemes::extra):
// "x509" when clients use TLS (client_tls_wanted), "sasl" when a JAAS file is configured. Every
// server of an ensemble must agree. Enforcement (enforce.auth.schemes) accepts these too.
std::vector<std::string> extra_auth_schemes(const Config& config);

struct AuthEnforcement {
  bool enabled = false;
  std::set<std::string> schemes;
  bool sasl_required = false;  // enabled with sasl among the schemes: a failed SASL exchange says so

  // False while the session has no id of an enforced scheme (always true when not enabled).
  bool authenticated(const std::vector<jute::Id>& auth) const;
};

std::optional<AuthEnforcement> auth_enforcement(const Config& config, std::string* error);

}  // namespace zkraft::server
