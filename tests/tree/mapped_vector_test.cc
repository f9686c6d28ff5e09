// MappedVector: a growable array that keeps its elements through every growth, from operator new
// into a mapping and within mappings, and frees what it took.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tree/block_pool.h"
#include "tree/mapped_vector.h"

namespace zkraft::tree {
namespace {

using V = MappedVector<uint64_t>;
constexpr size_t kMappedAt = V::kMappedBytes / sizeof(uint64_t);

TEST(MappedVectorTest, ElementsSurviveEveryGrowthPastTheMappedSize) {
  V v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.data(), nullptr);
  const size_t n = 4 * kMappedAt + 3;  // operator new, then three growths of a mapping
  bool saw_mapped = false;
  for (size_t i = 0; i < n; ++i) {
    v.push_back(i * 7 + 1);
    ASSERT_LE(v.size(), v.capacity());
    saw_mapped = saw_mapped || V::mapped(v.capacity());
    if (i % 65536 == 0 || i + 1 == n) {
      // Every element written so far is still there, the first ones included.
      for (size_t j = 0; j <= i; j += 997) ASSERT_EQ(v[j], j * 7 + 1) << i;
      ASSERT_EQ(v.back(), i * 7 + 1);
    }
  }
  EXPECT_EQ(saw_mapped, !BlockPool::address_sanitizer_build());
  EXPECT_EQ(v.size(), n);
  uint64_t sum = 0;
  for (uint64_t x : v) sum += x;
  EXPECT_EQ(sum, 7 * (n - 1) * n / 2 + n);
  std::vector<uint64_t> reversed(v.rbegin(), v.rend());
  EXPECT_EQ(reversed.front(), (n - 1) * 7 + 1);
  EXPECT_EQ(reversed.back(), 1u);
  for (size_t i = 0; i < n / 2; ++i) v.pop_back();
  EXPECT_EQ(v.size(), n - n / 2);
  EXPECT_EQ(v.back(), (n - n / 2 - 1) * 7 + 1);
  v.release();
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), 0u);
  EXPECT_EQ(v.data(), nullptr);
  v.push_back(5);  // usable again after a release
  EXPECT_EQ(v[0], 5u);
}

TEST(MappedVectorTest, MovesTakeTheBufferAndReserveKeepsTheElements) {
  for (size_t n : {size_t{3}, kMappedAt + 10}) {
    SCOPED_TRACE(n);
    V a;
    for (size_t i = 0; i < n; ++i) a.push_back(i);
    const uint64_t* buffer = a.data();
    V b(std::move(a));
    EXPECT_EQ(b.data(), buffer);
    EXPECT_EQ(b.size(), n);
    EXPECT_EQ(a.size(), 0u);  // NOLINT: a moved-from MappedVector is empty
    EXPECT_EQ(a.data(), nullptr);
    V c;
    c.push_back(99);
    c = std::move(b);
    EXPECT_EQ(c.data(), buffer);
    EXPECT_EQ(c[n - 1], n - 1);
    c.reserve(3 * kMappedAt);
    EXPECT_GE(c.capacity(), 3 * kMappedAt);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], i);
    const uint64_t* reserved = c.data();
    for (size_t i = n; i < 3 * kMappedAt; ++i) c.push_back(i);
    EXPECT_EQ(c.data(), reserved);  // no growth on the way
  }
}

}  // namespace
}  // namespace zkraft::tree
