#pragma once
// How a zkraft server's Config becomes the options of its Raft node: the ensemble from the
// server.N lines (observers as learners, a joining server outside the membership), the election
// timeout from tickTime and syncLimit, snapshots from snapCount. A standalone server is a
// one-voter cluster with the same log, snapshots and compaction.

#include <optional>
#include <string>

#include "consensus/raft_node.h"
#include "server/config.h"

namespace zkraft::server {

// nullopt + *error when the server.N lines have no entry for this server's id.
std::optional<consensus::RaftNodeOptions> raft_options(const Config& config, std::string* error);

// True when this server is an observer (zoo.cfg `server.N=...:observer`).
bool is_observer(const Config& config);

}  // namespace zkraft::server
