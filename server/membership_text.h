#pragma once
// The ensemble membership as text, in ZooKeeper's dynamic-config format: the data of
// /zookeeper/config and of reconfig replies.
//
//   server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181
//   ...
//   version=<hex zxid of the reconfig that made it, 0 for the static config>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/config.h"

namespace zkraft::server {

std::string membership_text(const std::vector<PeerConfig>& servers, int64_t version);
// False if a server line does not parse. Servers come back sorted by id.
bool parse_membership_text(std::string_view text, std::vector<PeerConfig>& servers,
                           int64_t* version);

// The membership an ensemble server starts from: every server.N line, except this server's own
// when it is joining an existing ensemble (a reconfig adds it).
std::vector<PeerConfig> bootstrap_servers(const Config& config);

}  // namespace zkraft::server
