#pragma once
// LoadWorker: the body of one load thread. It owns one session (re-opened on the next server
// after any failure), keeps `inflight` requests outstanding, and records what completed inside the
// measuring window. Workers share only LoadShared (atomics and fixed times).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/load_bench/zk_connection.h"

namespace zkraft::tools {

enum class LoadOp { kCreate, kSet, kGet, kMixed };

struct LoadOptions {
  std::vector<HostPort> servers;
  int sessions = 1;
  int inflight = 1;
  LoadOp op = LoadOp::kSet;
  int data_size = 100;
  int read_percent = 50;  // kMixed only: share of getData, the rest setData
  double warmup_s = 2;
  double duration_s = 10;
  std::string root = "/zk_load";
  uint64_t max_ops = 0;  // 0: no limit; otherwise stop after this many requests in total
  bool failover = false;  // record the time of every successful write (for the largest gap)
  int io_timeout_ms = 5000;
  int session_timeout_ms = 30000;
};

using Clock = std::chrono::steady_clock;

struct LoadShared {
  Clock::time_point measure_from;
  Clock::time_point measure_until;
  std::atomic<uint64_t> issued{0};
};

struct WorkerResult {
  std::vector<uint32_t> latency_us;      // successful replies inside the window
  std::vector<int64_t> write_success_unix_us;  // failover mode: every successful write
  uint64_t ok = 0;                       // successful replies inside the window
  uint64_t error_replies = 0;            // replies with err != 0 inside the window
  std::map<int32_t, uint64_t> error_codes;
  uint64_t connection_failures = 0;      // failed opens and broken sessions (whole run)
  std::string last_error;
};

// Runs until measure_until (or max_ops). `index` picks the first server and the node name.
void run_worker(int index, const LoadOptions& opt, LoadShared& shared, WorkerResult& out);

// The znode a worker's setData/getData use: <root>/n<index>.
std::string worker_node(const LoadOptions& opt, int index);

}  // namespace zkraft::tools
