#pragma once
// LoadWorker: the body of one load thread. It owns one session (re-opened on the next server
// after any failure), keeps `inflight` requests outstanding, and records what completed inside the
// measuring window. Workers share only LoadShared (atomics and fixed times).
//
// A run has two phases: setup_worker (load_setup.h; before any clock starts) and run_worker
// (warm-up, then the measured window). Churn and watch fan-out have their own bodies
// (churn_worker.h, watch_fanout.h) and fill the same WorkerResult.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "tools/load_bench/load_ops.h"
#include "tools/load_bench/zk_connection.h"

namespace zkraft::tools {

struct LoadOptions {
  std::vector<HostPort> servers;
  int sessions = 1;
  int inflight = 1;
  LoadOp op = LoadOp::kSet;
  Mix mix;                // kMixed only
  int data_size = 100;
  double warmup_s = 2;
  double duration_s = 10;
  std::string root = "/zk_load";
  std::string run_tag = "r";  // in every name a run creates, so runs on one tree do not collide
  int delete_pool = 2000;     // kDelete: nodes created per session before the run
  int list_children = 100;    // kList: children of <root>/list
  int parents = 0;            // createseq: 0 = under the root; P = spread over <root>/g0..g(P-1)
  uint64_t max_ops = 0;  // 0: no limit; otherwise stop after this many requests in total
  bool failover = false;  // record the time of every successful write (for the largest gap)
  bool timeline = false;  // record the completion time of every success in the window
  int io_timeout_ms = 5000;
  int session_timeout_ms = 30000;
};

using Clock = std::chrono::steady_clock;

struct LoadShared {
  Clock::time_point measure_from;
  Clock::time_point measure_until;
  std::atomic<uint64_t> issued{0};
  // Steady-clock nanoseconds at which a delete worker ran out of nodes (0: none has). The window
  // ends there for everyone, so no session's idle tail dilutes ops/s.
  std::atomic<int64_t> exhausted_at_ns{0};

  Clock::time_point window_end() const;
};

struct WorkerResult {
  std::vector<uint32_t> latency_us;      // successful replies inside the window
  std::vector<int64_t> done_unix_us;     // timeline mode: completion time of each of those
  std::vector<int64_t> write_success_unix_us;  // failover mode: every successful write
  uint64_t ok = 0;                       // successful replies inside the window
  uint64_t error_replies = 0;            // replies with err != 0 inside the window
  std::map<int32_t, uint64_t> error_codes;
  uint64_t connection_failures = 0;      // failed opens and broken sessions (whole run)
  std::string last_error;
  std::deque<std::string> existing;      // nodes this session created that delete may remove
};

// Runs until the window ends (or max_ops). `index` picks the first server and the node name.
void run_worker(int index, const LoadOptions& opt, LoadShared& shared, WorkerResult& out);

// The znode a worker's setData/getData/exists use: <root>/n<index>.
std::string worker_node(const LoadOptions& opt, int index);
// The parent of a createseq: the root, or one of `parents` groups taken in turn over all sessions.
std::string createseq_parent(const LoadOptions& opt, int index, uint64_t nth);
// The node whose children kList reads.
std::string list_node(const LoadOptions& opt);

int64_t unix_us_now();

}  // namespace zkraft::tools
