#pragma once
// Helpers shared by the jute tests: hex conversion and generic round-trip / truncation checks.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "jute/archive.h"

namespace zkraft::jute::testing {

inline std::string from_hex(std::string_view hex) {
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    int hi = nib(hex[i]);
    int lo = nib(hex[i + 1]);
    if (hi < 0 || lo < 0) ADD_FAILURE() << "bad hex at " << i;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  if (hex.size() % 2 != 0) ADD_FAILURE() << "odd hex length";
  return out;
}

inline std::string to_hex(std::string_view bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

template <class T>
std::string encoded(const T& v) {
  Writer w;
  encode(w, v);
  return w.take();
}

// Decodes `bytes` from a heap copy of exactly bytes.size() (so a sanitizer build sees any read
// past the end). Returns whether decode succeeded and consumed everything.
template <class T>
bool decode_exact(std::string_view bytes, T& out, const Limits& limits = Limits{}) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size() + 1]);
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  Reader r(std::span<const uint8_t>(copy.get(), bytes.size()), limits);
  return decode(r, out) && r.ok() && r.at_end();
}

// encode -> decode gives back an equal value, and re-encoding gives the same bytes.
template <class T>
void expect_round_trip(const T& v) {
  std::string bytes = encoded(v);
  T back{};
  ASSERT_TRUE(decode_exact(bytes, back)) << to_hex(bytes);
  EXPECT_TRUE(back == v);
  EXPECT_EQ(to_hex(encoded(back)), to_hex(bytes));
}

// Every strict prefix of a valid encoding must fail to decode (and must not read past its end).
template <class T>
void expect_every_truncation_fails(const T& v) {
  std::string bytes = encoded(v);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[n + 1]);
    std::memcpy(copy.get(), bytes.data(), n);
    Reader r(std::span<const uint8_t>(copy.get(), n));
    T out{};
    EXPECT_FALSE(decode(r, out) && r.ok()) << "prefix of " << n << " of " << bytes.size()
                                           << " bytes decoded";
  }
}

}  // namespace zkraft::jute::testing
