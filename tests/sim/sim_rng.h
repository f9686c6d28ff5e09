#pragma once
// Seeded PRNG for the simulation: SplitMix64, whose output is fixed by its definition (unlike
// std:: distributions), so a seed replays identically everywhere.

#include <cstdint>

namespace zkraft::sim {

class SimRng {
 public:
  explicit SimRng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n > 0); the modulo bias is irrelevant here.
  uint64_t below(uint64_t n) { return next() % n; }
  // Uniform in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
  // True with probability per_mille / 1000.
  bool chance(uint64_t per_mille) { return below(1000) < per_mille; }
  // A child generator with an independent stream (e.g. one per node).
  SimRng fork() { return SimRng(next()); }

 private:
  uint64_t state_;
};

}  // namespace zkraft::sim
