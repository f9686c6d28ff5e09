#pragma once
// LatencyStats: summary of a set of latency samples (microseconds): count, percentiles, max.
// Percentiles use the nearest-rank method on the sorted samples.

#include <cstdint>
#include <vector>

namespace zkraft::tools {

struct LatencySummary {
  uint64_t count = 0;
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0, mean_ms = 0;
};

// Sorts `samples_us` in place and summarises it (all zeros when empty).
LatencySummary summarize(std::vector<uint32_t>& samples_us);

// Largest gap between consecutive time points (sorted in place), with where it starts and ends.
struct Gap {
  double length_ms = 0;
  int64_t from_unix_us = 0;  // last success before the gap
  int64_t to_unix_us = 0;    // first success after it
};
Gap largest_gap(std::vector<int64_t>& unix_us);

}  // namespace zkraft::tools
