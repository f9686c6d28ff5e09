#pragma once
// Storage-only benchmark: GroupCommitLog append throughput with N closed-loop submitter threads
// (each keeps one single-entry submission in flight), real LevelDB fsync.

#include <cstddef>
#include <string>

namespace zkraft::tools {

struct StorageBenchConfig {
  std::string dir;  // a fresh LevelDB is created here
  size_t entry_size = 100;
  int submitters = 1;
  double seconds = 3.0;
  bool fsync = true;
  size_t write_buffer_bytes = 0;  // LevelDB memtable size; 0 = StorageOptions' default
};

// Runs one configuration and returns its result as a JSON object string.
std::string run_storage_bench(const StorageBenchConfig& cfg);

}  // namespace zkraft::tools
