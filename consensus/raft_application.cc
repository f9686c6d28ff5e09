#include "consensus/raft_application.h"

#include <cstdio>
#include <cstdlib>

namespace zkraft::consensus {

void RaftApplication::request_snapshot(Index index, SnapshotReply reply) { reply(index, take_snapshot()); }

void RaftApplication::request_snapshot_file(Index index, const SnapshotFileTarget&, SnapshotReply reply,
                                            SnapshotFileReply) {
  request_snapshot(index, std::move(reply));
}

void RaftApplication::on_fatal_error(const std::string& what) {
  std::fprintf(stderr, "raft: fatal storage error: %s\n", what.c_str());
  std::abort();
}

}  // namespace zkraft::consensus
