#pragma once
// Quorum authentication settings for the peer transport, from ZooKeeper's configuration: the
// quorum.auth.* keys and the JAAS file's DigestLoginModule sections, e.g.
//
//     QuorumServer  { org.apache.zookeeper.server.auth.DigestLoginModule required user_test="secret"; };
//     QuorumLearner { org.apache.zookeeper.server.auth.DigestLoginModule required
//                     username="test" password="secret"; };
//
// The learner section is what this server dials with; the server section's users are whom it
// lets in. Between zkraft servers the credentials drive the transport's HMAC challenge-response
// (consensus/peer_transport_auth.h), not SASL: the same file and keys, another exchange.
// Kerberos (Krb5LoginModule) quorum authentication is refused at start-up with a line saying so.
//
// Errors are one line, for the start-up log (exit 2 as any bad configuration).

#include <optional>
#include <string>

#include "consensus/peer_transport_auth.h"
#include "server/config.h"
#include "server/jaas_file.h"

namespace zkraft::server {

// ZooKeeper's consistency rules for the three switches (QuorumPeerConfig): "" if they hold.
std::string check_quorum_auth_switches(const Config& cfg);

// Pure: the transport options from the config and a parsed JAAS file.
std::optional<consensus::PeerAuthOptions> peer_auth_from_jaas(const Config& cfg, const JaasFile& jaas,
                                                              std::string* error);

// Reads cfg.jaas_config_file when quorum authentication is enabled; disabled options otherwise.
std::optional<consensus::PeerAuthOptions> peer_auth_options(const Config& cfg, std::string* error);

}  // namespace zkraft::server
