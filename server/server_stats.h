#pragma once
// Counters behind srvr/stat/mntr/cons: latency in ms, packets, per-connection figures.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "consensus/log_buckets.h"

namespace zkraft::server {

struct LatencyStats {
  int64_t min_ms = std::numeric_limits<int64_t>::max();
  int64_t max_ms = 0;
  int64_t sum_ms = 0;
  int64_t count = 0;
  int64_t last_ms = 0;

  void record(int64_t ms) {
    min_ms = std::min(min_ms, ms);
    max_ms = std::max(max_ms, ms);
    sum_ms += ms;
    ++count;
    last_ms = ms;
  }
  int64_t min() const { return count ? min_ms : 0; }
  double avg() const { return count ? static_cast<double>(sum_ms) / count : 0.0; }
  // What srvr, stat and mntr show: ZooKeeper's AvgMinMaxCounter.getAvg, the average rounded
  // half-up to 4 decimals (new BigDecimal(avg).setScale(4, HALF_UP).doubleValue()).
  double zookeeper_avg() const;
  void reset() { *this = LatencyStats{}; }
};

// Observations bucketed as consensus/log_buckets.h, with their count and sum: what a Prometheus
// summary or histogram is rendered from (prometheus_metrics.h). Never reset (ZooKeeper's
// Prometheus provider cannot reset either), so the count only grows.
struct BucketCounts {
  std::vector<uint64_t> buckets;  // kLogBucketCount once anything is recorded
  uint64_t count = 0;
  uint64_t sum = 0;

  void record(uint64_t v) {
    if (buckets.empty()) buckets.resize(consensus::kLogBucketCount);
    ++buckets[consensus::log_bucket(v)];
    ++count;
    sum += v;
  }
};

struct ConnectionStats {
  LatencyStats latency;
  int64_t established_ms = 0;
  int64_t last_cxid = 0;
  int64_t last_zxid = 0;
  int32_t last_op = -99;  // none yet
  int64_t last_response_ms = 0;
};

// One line of the slow-request log, kept for the `slow` four-letter word (zkraft-ctl slow-log).
struct SlowRequestEntry {
  uint64_t seq = 0;     // 1, 2, ...: the slow_requests count when it was logged
  int64_t wall_ms = 0;  // when its reply left
  std::string line;     // slow_request_line's text
};
// The `slow` word keeps this many of the latest lines (the server log has them all).
inline constexpr size_t kRecentSlowRequests = 256;

struct ServerStats {
  LatencyStats latency;
  uint64_t packets_received = 0;
  uint64_t packets_sent = 0;
  uint64_t auth_failed = 0;
  uint64_t connections_rejected = 0;
  uint64_t slow_consumers_closed = 0;  // connections cut off for unsent output (max_client_send_queue_bytes)
  uint64_t slow_requests = 0;  // logged by the slow-request log
  std::string last_slow_request;  // its latest line
  std::deque<SlowRequestEntry> recent_slow_requests;  // the latest kRecentSlowRequests, oldest first
  // ZooKeeper's readlatency / updatelatency (ms): requests without / with a transaction.
  BucketCounts read_latency_ms;
  BucketCounts update_latency_ms;
};

}  // namespace zkraft::server
