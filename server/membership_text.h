#pragma once
// The ensemble membership as text, in ZooKeeper's dynamic-config format: the data of
// /zookeeper/config and of reconfig replies.
//
//   server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181
//   ...
//   version=<hex zxid of the reconfig that made it, 0 for the static config>
//
// Pure (no I/O, no clock): the deterministic state machine parses reconfig specs with it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/config.h"

namespace zkraft::server {

// One "server.N=host:peer:election[:role][;[addr:]port]" line (zoo.cfg and reconfig syntax).
// Errors are one line; a spec that is not a server.N=... line gets no "config error: " prefix.
bool parse_server_spec(std::string_view spec, PeerConfig& peer, std::string* error);
// The same, with the key already split off: `key` ("server.3") names the line in errors and
// id_text ("3") is the part after "server.".
bool parse_server_entry(const std::string& key, std::string_view id_text, std::string_view value,
                        PeerConfig& peer, std::string* error);
// "participant" or "observer", any case.
bool parse_peer_role(const std::string& key, std::string_view text, PeerRole& role,
                     std::string* error);

std::string membership_text(const std::vector<PeerConfig>& servers, int64_t version);
// False if a server line does not parse. Servers come back sorted by id.
bool parse_membership_text(std::string_view text, std::vector<PeerConfig>& servers,
                           int64_t* version);

// The membership an ensemble server starts from: every server.N line, except this server's own
// when it is joining an existing ensemble (a reconfig adds it).
std::vector<PeerConfig> bootstrap_servers(const Config& config);

}  // namespace zkraft::server
