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
  // LevelDB memtable size (LevelDB's own default). Up to two are resident (one being flushed),
  // and a 170 MB snapshot passes through them; 16 MiB cost ~20 MB of RSS at 1,000,000 znodes
  // for no measured write gain (docs/benchmarks.md, "LevelDB's memory").
  size_t write_buffer_size = 4 << 20;
  // LevelDB block cache (0 = LevelDB's 8 MB default). In steady state nothing reads through it:
  // the Raft core holds the log since the last compaction in memory, start-up reads the log
  // tail once in order and the snapshot with fill_cache off; 1 MiB serves the odd term lookup.
  size_t block_cache_bytes = 1 << 20;
  // A snapshot's file is synced every this many bytes as it is written: a whole snapshot of dirty
  // pages (~200 MB at 1,000,000 znodes) flushed at once would hold up the log's fsyncs on the same
  // disk (ext4 commits its journal for both). Tests make it small to cross many sync points.
  size_t snapshot_sync_bytes = 4 << 20;
};

}  // namespace zkraft::consensus
