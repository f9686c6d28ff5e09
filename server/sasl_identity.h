#pragma once
// ZooKeeper's identity for a SASL-authenticated client, from the name the mechanism
// authenticated (pure: no Cyrus, no clock).
//
// sasl_authorized_id is SaslServerCallbackHandler.handleAuthorizeCallback of ZooKeeper 3.9.4:
// the authentication id is read as a Kerberos name (KerberosName: "service[/host]@REALM", or a
// plain name without '@'); its short name comes from the DEFAULT auth_to_local rule (the service
// part when the realm is the default realm); then "/host" is appended unless
// kerberos.removeHostFromPrincipal is true, and "@REALM" unless kerberos.removeRealmFromPrincipal
// is true. When the DEFAULT rule does not apply (another realm), ZooKeeper keeps the
// authentication id as it is, and so does this. A DIGEST-MD5 user name ("bob") stays "bob".
// nullopt: a malformed name ("a@b@c", which KerberosName refuses): the exchange fails.
//
// sasl_super_user is ZooKeeperServer.isSaslSuperUser: the id equals zookeeper.superUser.

#include <optional>
#include <string>
#include <string_view>

namespace zkraft::server {

struct PrincipalRules {
  bool remove_host = false;   // zookeeper.kerberos.removeHostFromPrincipal
  bool remove_realm = false;  // zookeeper.kerberos.removeRealmFromPrincipal
  std::string default_realm;  // the Kerberos default realm ("" when there is no krb5.conf)
};

std::optional<std::string> sasl_authorized_id(std::string_view authentication_id,
                                              const PrincipalRules& rules);

// default_realm of krb5.conf's [libdefaults] ("" if none), which ZooKeeper's KerberosName takes
// as the default realm.
std::string krb5_default_realm(std::string_view krb5_conf);

inline bool sasl_super_user(std::string_view id, std::string_view super_user) {
  return !id.empty() && !super_user.empty() && id == super_user;
}

}  // namespace zkraft::server
