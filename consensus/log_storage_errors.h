#pragma once
// LevelDB statuses as LogStorage reports them (log_storage.cc, log_storage_snapshot.cc).
// Internal to consensus/ storage.

#include <leveldb/status.h>

#include <string>

#include "consensus/status.h"

namespace zkraft::consensus {

inline std::string describe(const leveldb::Status& s) { return s.ToString(); }

// LevelDB's PosixEnv reports errno as strerror text; ENOSPC is the one failure worth waiting out.
inline bool is_no_space(const leveldb::Status& s) {
  return s.IsIOError() && s.ToString().find("No space left on device") != std::string::npos;
}

// `what` failed: kNoSpace for a full disk, else an I/O error, naming `what` and LevelDB's reason.
inline Status leveldb_error(const std::string& what, const leveldb::Status& s) {
  const std::string m = what + ": " + describe(s);
  return is_no_space(s) ? Status::error(Status::Code::kNoSpace, m) : Status::io_error(m);
}

}  // namespace zkraft::consensus
