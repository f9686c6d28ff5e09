#pragma once
// Tuning and test hooks for LogStorage. Defaults suit a server; tests inject an Env to simulate
// crashes.

#include <cstddef>
#include <cstdint>

namespace leveldb {
class Env;
}

namespace zkraft::consensus {

struct StorageOptions {
  // LevelDB environment; nullptr means leveldb::Env::Default(). Not owned; must outlive the storage.
  leveldb::Env* env = nullptr;
  bool create_if_missing = true;
  // LevelDB memtable size: bigger batches fewer level-0 files.
  size_t write_buffer_size = 16 << 20;
  // LevelDB block cache for reads of older entries (0 = LevelDB's 8 MB default).
  size_t block_cache_bytes = 0;
  // Snapshot data is stored as chunks of this many bytes.
  size_t snapshot_chunk_bytes = 1 << 20;
};

}  // namespace zkraft::consensus
