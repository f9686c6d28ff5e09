#include "server/server_stats.h"

#include <cmath>

namespace zkraft::server {

// HALF_UP at 4 decimals of the double's exact value, as Java's BigDecimal(double) sees it: the
// double is mantissa * 2^exp exactly, so mantissa * 10000 (at most 67 bits) shifted right by
// -exp gives the scaled value and the remainder decides the rounding, with no error of our own.
double LatencyStats::zookeeper_avg() const {
  if (count == 0) return 0.0;
  const double avg = static_cast<double>(sum_ms) / static_cast<double>(count);
  if (avg <= 0) return 0.0;
  int exp = 0;
  const double frac = std::frexp(avg, &exp);  // avg = frac * 2^exp, frac in [0.5, 1)
  const auto mantissa = static_cast<__int128>(std::ldexp(frac, 53));
  exp -= 53;
  const __int128 scaled = mantissa * 10000;
  if (exp >= 0) return std::ldexp(static_cast<double>(scaled), exp) / 10000.0;
  if (exp < -120) return 0.0;  // below 2^-67: far under half a unit of the 4th decimal
  const __int128 q = scaled >> -exp;
  const __int128 rem = scaled - (q << -exp);
  const __int128 half = static_cast<__int128>(1) << (-exp - 1);
  return static_cast<double>(q + (rem >= half ? 1 : 0)) / 10000.0;
}

}  // namespace zkraft::server
