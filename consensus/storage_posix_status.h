#pragma once
// posix_status: an errno as the leveldb::Status LevelDB's own POSIX environment gives for it
// (NotFound for ENOENT, which its callers test for; IOError otherwise, with strerror's text, which
// LogStorage reads to tell a full disk). For this folder's environments that open files
// themselves (storage_pread_env.h, storage_prealloc_env.h).

#include <leveldb/status.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace zkraft::consensus {

inline leveldb::Status posix_status(const std::string& context, int err) {
  if (err == ENOENT) return leveldb::Status::NotFound(context, std::strerror(err));
  return leveldb::Status::IOError(context, std::strerror(err));
}

}  // namespace zkraft::consensus
