#pragma once
// Log-linear buckets for counting non-negative integer measurements (microseconds of an fsync,
// milliseconds of a request) in a fixed, small array that any thread can bump and any reader can
// turn into quantiles or Prometheus histogram buckets.
//
// Scale: values 0..15 have a bucket each (exact); above, every power of two is split into 8
// equal buckets, so a bucket's width is at most 1/8 of its lower bound (a quantile read from it
// is within 12.5% of the truth). Every power of two is a bucket boundary, which is what
// histograms with power-of-two `le` bounds rely on. Pure: no clock, no thread.

#include <bit>
#include <cstddef>
#include <cstdint>

namespace zkraft::consensus {

inline constexpr size_t kLogBucketCount = 16 + 60 * 8;  // up to 2^64

// The bucket holding v.
constexpr size_t log_bucket(uint64_t v) {
  if (v < 16) return static_cast<size_t>(v);
  const int e = 63 - std::countl_zero(v);  // 2^e <= v < 2^(e+1), e >= 4
  const uint64_t sub = (v >> (e - 3)) & 7;
  return 16 + static_cast<size_t>(e - 4) * 8 + static_cast<size_t>(sub);
}

// The smallest value in bucket i (i < kLogBucketCount).
constexpr uint64_t log_bucket_lower(size_t i) {
  if (i < 16) return i;
  const size_t e = 4 + (i - 16) / 8;
  const uint64_t sub = (i - 16) % 8;
  return (uint64_t{1} << e) + sub * (uint64_t{1} << (e - 3));
}

// One past the largest value in bucket i (saturates at UINT64_MAX for the last bucket).
constexpr uint64_t log_bucket_upper(size_t i) {
  return i + 1 < kLogBucketCount ? log_bucket_lower(i + 1) : UINT64_MAX;
}

}  // namespace zkraft::consensus
