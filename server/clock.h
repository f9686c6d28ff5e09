#pragma once
// Clock: the two times a server needs, injected so that every part above the socket layer can be
// tested with a hand-driven clock.
//
//  - monotonic_ms(): liveness. Session expiry, idle connections, request latency, every timeout.
//    It never goes back and a wall-clock step does not move it, so a clock step can never expire
//    a session.
//  - wall_ms(): what ZooKeeper shows as time. A transaction's ctime/mtime (stamped once, by the
//    leader, at proposal), TTL deadlines, connection "established" dates in `cons`.

#include <chrono>
#include <cstdint>

namespace zkraft::server {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t monotonic_ms() const = 0;
  virtual int64_t wall_ms() const = 0;
};

// The process's clocks: steady_clock and system_clock.
class SystemClock final : public Clock {
 public:
  int64_t monotonic_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t wall_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// A clock that moves only when told to (tests). The two times move together unless a test steps
// the wall clock on its own to simulate an NTP jump.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t monotonic = 1'000'000, int64_t wall = 1'700'000'000'000)
      : monotonic_(monotonic), wall_(wall) {}
  int64_t monotonic_ms() const override { return monotonic_; }
  int64_t wall_ms() const override { return wall_; }
  void advance(int64_t ms) { monotonic_ += ms, wall_ += ms; }
  void step_wall(int64_t ms) { wall_ += ms; }

 private:
  int64_t monotonic_;
  int64_t wall_;
};

}  // namespace zkraft::server
