#include "tools/load_bench/latency_stats.h"

#include <algorithm>
#include <cmath>

namespace zkraft::tools {

namespace {
double at_rank(const std::vector<uint32_t>& sorted, double q) {
  // Nearest rank: the smallest sample with at least q of all samples at or below it.
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1] / 1000.0;
}
}  // namespace

LatencySummary summarize(std::vector<uint32_t>& samples_us) {
  LatencySummary s;
  if (samples_us.empty()) return s;
  std::sort(samples_us.begin(), samples_us.end());
  s.count = samples_us.size();
  s.p50_ms = at_rank(samples_us, 0.50);
  s.p99_ms = at_rank(samples_us, 0.99);
  s.p999_ms = at_rank(samples_us, 0.999);
  s.max_ms = samples_us.back() / 1000.0;
  double sum = 0;
  for (uint32_t v : samples_us) sum += v;
  s.mean_ms = sum / static_cast<double>(samples_us.size()) / 1000.0;
  return s;
}

Gap largest_gap(std::vector<int64_t>& unix_us) {
  Gap g;
  std::sort(unix_us.begin(), unix_us.end());
  for (size_t i = 1; i < unix_us.size(); ++i) {
    double d = static_cast<double>(unix_us[i] - unix_us[i - 1]) / 1000.0;
    if (d > g.length_ms) {
      g.length_ms = d;
      g.from_unix_us = unix_us[i - 1];
      g.to_unix_us = unix_us[i];
    }
  }
  return g;
}

}  // namespace zkraft::tools
