#pragma once
// The bootstrap membership record of a RaftNode's directory.
//
// RaftCore applies the log's membership changes on top of a base membership: the latest
// snapshot's, or, while no snapshot exists, the cluster's bootstrap membership. That base must
// never change under an existing log, so the first start records it in a small file next to the
// LevelDB files (LevelDB leaves files it does not know alone) and later starts read it back.
//
// Format (text, one line each): "voters <id> <id> ...\n" "learners <id> ...\n".
// The file is written to a temporary name, fsynced and renamed, so it is either absent or whole.

#include <string>

#include "consensus/types.h"

namespace zkraft::consensus {

// If `dir` holds a record, loads it into *out. Otherwise writes `fallback` durably and returns it
// in *out. False + *error if the file is unreadable/malformed or cannot be written.
bool load_or_record_bootstrap_membership(const std::string& dir, const Membership& fallback,
                                         Membership* out, std::string* error);

std::string encode_bootstrap_membership(const Membership& m);
bool decode_bootstrap_membership(const std::string& text, Membership* out);

}  // namespace zkraft::consensus
