// The ensemble keys (config_keys.h): quorum authentication (quorum.auth.*, server/peer_auth.h)
// and the members themselves (servers / server.N, which the file readers parse).
#include "server/config_key_sections.h"

#include "server/config_values.h"

namespace zkraft::server {

using namespace config_values;

namespace {

constinit const ConfigKey kQuorumKeys[] = {
    // Quorum authentication (server/peer_auth.h), ZooKeeper's quorum.auth.* keys and defaults.
    {.yaml = "quorum_auth_enable_sasl", .zoo = "quorum.auth.enableSasl", .type = KeyType::kBool,
     .doc = "Authenticate peers with the JAAS file's quorum credentials (dial with them, check them).",
     .field = &Config::quorum_auth_enable_sasl},
    {.yaml = "quorum_auth_learner_require_sasl", .zoo = "quorum.auth.learnerRequireSasl",
     .type = KeyType::kBool,
     .doc = "Send Raft messages only to peers that prove they hold the quorum credentials.",
     .field = &Config::quorum_auth_learner_require_sasl},
    {.yaml = "quorum_auth_server_require_sasl", .zoo = "quorum.auth.serverRequireSasl",
     .type = KeyType::kBool,
     .doc = "Refuse peers that do not authenticate (else, while upgrading, they are let in and logged).",
     .field = &Config::quorum_auth_server_require_sasl},
    {.yaml = "quorum_auth_learner_login_context", .zoo = "quorum.auth.learner.saslLoginContext",
     .type = KeyType::kString,
     .doc = "JAAS section with this server's username and password for dialling peers.",
     .field = &Config::quorum_auth_learner_login_context},
    {.yaml = "quorum_auth_server_login_context", .zoo = "quorum.auth.server.saslLoginContext",
     .type = KeyType::kString,
     .doc = "JAAS section whose user_NAME entries are the peers' usernames and passwords.",
     .field = &Config::quorum_auth_server_login_context},
    {.yaml = "servers", .zoo = "server.N", .type = KeyType::kServers,
     .doc = "The ensemble members; empty (or only this server) = standalone."},
};

}  // namespace

std::span<const ConfigKey> quorum_keys() { return kQuorumKeys; }

}  // namespace zkraft::server
