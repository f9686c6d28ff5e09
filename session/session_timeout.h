#pragma once
// Session timeout negotiation: the server clamps what the client asks for into [min, max].

#include <cstdint>

namespace zkraft::session {

// Bounds in milliseconds. ZooKeeper's defaults: min = 2 * tickTime, max = 20 * tickTime; a
// configured value of -1 (or any value <= 0) means "use the default".
struct TimeoutBounds {
  int32_t min_ms;
  int32_t max_ms;

  static TimeoutBounds from_config(int32_t tick_time_ms, int32_t min_session_timeout_ms,
                                   int32_t max_session_timeout_ms) {
    TimeoutBounds b;
    b.min_ms = min_session_timeout_ms > 0 ? min_session_timeout_ms : 2 * tick_time_ms;
    b.max_ms = max_session_timeout_ms > 0 ? max_session_timeout_ms : 20 * tick_time_ms;
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
