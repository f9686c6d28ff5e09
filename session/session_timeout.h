#pragma once
// Session timeout negotiation: the server clamps what the client asks for into [min, max].

#include <algorithm>
#include <cstdint>
#include <limits>

namespace zkraft::session {

// Bounds in milliseconds. ZooKeeper's defaults: min = 2 * tickTime, max = 20 * tickTime; a
// configured value of -1 (or any value <= 0) means "use the default". The defaults are computed
// in 64 bits and saturate at INT32_MAX: a tick above ~107 s would overflow 20 x tick in 32 bits
// (ZooKeeper's int arithmetic wraps there and its start-up then rejects min > max).
struct TimeoutBounds {
  int32_t min_ms;
  int32_t max_ms;

  static int32_t ticks(int32_t tick_time_ms, int64_t n) {
    return static_cast<int32_t>(
        std::min<int64_t>(n * tick_time_ms, std::numeric_limits<int32_t>::max()));
  }

  static TimeoutBounds from_config(int32_t tick_time_ms, int32_t min_session_timeout_ms,
                                   int32_t max_session_timeout_ms) {
    TimeoutBounds b;
    b.min_ms = min_session_timeout_ms > 0 ? min_session_timeout_ms : ticks(tick_time_ms, 2);
    b.max_ms = max_session_timeout_ms > 0 ? max_session_timeout_ms : ticks(tick_time_ms, 20);
    return b;
  }
};

// The timeout the server grants (ZooKeeperServer.processConnectRequest): requested clamped to the
// bounds. Should min > max ever get past config validation, max wins, as in ZooKeeper (it clamps
// to min first, then to max).
inline int32_t negotiate_timeout(int32_t requested_ms, const TimeoutBounds& b) {
  int32_t t = requested_ms;
  if (t < b.min_ms) t = b.min_ms;
  if (t > b.max_ms) t = b.max_ms;
  return t;
}

}  // namespace zkraft::session
