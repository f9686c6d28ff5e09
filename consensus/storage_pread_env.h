#pragma once
// PreadEnv: a LevelDB environment that reads table files with pread(2) where LevelDB's own
// (Env::Default) maps them with mmap(2); everything else goes to the environment it wraps.
//
// Why: LevelDB maps up to 1,000 table files, and every page it reads through a mapping (each
// table's index block, the blocks a Get or the start-up scan reads, and the kernel's fault-around
// of up to 64 KiB each time) counts in the server's resident memory for as long as the table stays
// open. With the log's v2 layout (storage_codec.h) LevelDB merges tables rarely, so they stay open
// longer: at 1,000,000 znodes 59 mapped tables held 15 MB of the server's RSS (docs/benchmarks.md,
// 2026-12-07). Read with pread, a block LevelDB keeps lives in its block cache (bounded by
// StorageOptions::block_cache_bytes) and the rest stays in the page cache, which the kernel owns.
//
// Invariant: a file is read only through pread at the offsets LevelDB asks for; the result may
// point into `scratch` (LevelDB copies blocks it keeps from such files).

#include <leveldb/env.h>

#include <string>

namespace zkraft::consensus {

class PreadEnv final : public leveldb::EnvWrapper {
 public:
  // `base` is not owned and must outlive this environment.
  explicit PreadEnv(leveldb::Env* base) : leveldb::EnvWrapper(base) {}

  leveldb::Status NewRandomAccessFile(const std::string& fname, leveldb::RandomAccessFile** result) override;
};

}  // namespace zkraft::consensus
