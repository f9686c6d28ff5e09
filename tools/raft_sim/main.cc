// raft_sim: runs randomized Raft simulation seeds, or replays one with a full trace.
//
//   raft_sim --seeds N [--start S]     run seeds S..S+N-1, print failures and a summary
//   raft_sim --seed S [--trace]        run (replay) one seed; --trace prints every event
//   --progress                         print each seed on stderr before running it
// Options: --fault-ms MS, --liveness-ms MS. Exit status 1 if any seed failed.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "tests/sim/sim_cluster.h"

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: raft_sim --seeds N [--start S] | --seed S [--trace]"
               " [--fault-ms MS] [--liveness-ms MS]\n");
}

bool parse_u64(const char* s, uint64_t& out) {
  char* end = nullptr;
  out = std::strtoull(s, &end, 10);
  return end && *end == '\0' && end != s;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seeds = 0, start = 1, seed = 0;
  bool single = false;
  bool progress = false;  // name each seed on stderr before running it (to find crashes)
  zkraft::sim::RandomRunOptions ro;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](uint64_t& out) {
      if (i + 1 >= argc || !parse_u64(argv[i + 1], out)) {
        usage();
        std::exit(2);
      }
      ++i;
    };
    if (a == "--seeds") {
      value(seeds);
    } else if (a == "--start") {
      value(start);
    } else if (a == "--seed") {
      value(seed);
      single = true;
    } else if (a == "--progress") {
      progress = true;
    } else if (a == "--trace") {
      ro.trace = true;
    } else if (a == "--fault-ms") {
      value(ro.fault_ms);
    } else if (a == "--liveness-ms") {
      value(ro.liveness_ms);
    } else {
      usage();
      return 2;
    }
  }
  if (single) {
    seeds = 1;
    start = seed;
  }
  if (seeds == 0) {
    usage();
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t failed = 0, events = 0, committed = 0;
  std::map<std::string, uint64_t> counters;
  uint64_t recovery_max = 0, recovery_sum = 0, recovered = 0;
  for (uint64_t s = start; s < start + seeds; ++s) {
    if (progress) std::fprintf(stderr, "seed %llu\n", (unsigned long long)s);
    auto r = zkraft::sim::run_random_seed(s, ro);
    events += r.events;
    committed += r.committed;
    for (auto& [k, v] : r.counters) counters[k] += v;
    if (r.recovery_ms > 1000) {
      std::printf("slow recovery: seed %llu took %llu virtual ms\n", (unsigned long long)s,
                  (unsigned long long)r.recovery_ms);
    }
    if (r.recovery_ms > 0) {
      recovery_max = std::max(recovery_max, r.recovery_ms);
      recovery_sum += r.recovery_ms;
      ++recovered;
    }
    if (!r.ok) {
      ++failed;
      std::printf("FAIL seed %llu trace %016llx: %s\n  replay: raft_sim --seed %llu --trace\n",
                  (unsigned long long)s, (unsigned long long)r.trace_hash, r.failure.c_str(),
                  (unsigned long long)s);
    } else if (single) {
      std::printf("ok seed %llu trace %016llx events %llu committed %llu\n", (unsigned long long)s,
                  (unsigned long long)r.trace_hash, (unsigned long long)r.events,
                  (unsigned long long)r.committed);
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%llu seeds from %llu: %llu failed; %llu events, %llu committed entries; %.2fs\n",
              (unsigned long long)seeds, (unsigned long long)start, (unsigned long long)failed,
              (unsigned long long)events, (unsigned long long)committed, secs);
  if (recovered > 0) {
    std::printf("recovery after faults stop (virtual ms until a leader commits): avg %llu max %llu\n",
                (unsigned long long)(recovery_sum / recovered), (unsigned long long)recovery_max);
  }
  std::printf("coverage:");
  for (auto& [k, v] : counters) std::printf(" %s=%llu", k.c_str(), (unsigned long long)v);
  std::printf("\n");
  return failed ? 1 : 0;
}
