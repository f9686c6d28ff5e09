#include "tree/block_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace zkraft::tree {
namespace {

bool aligned8(const void* p) { return reinterpret_cast<uintptr_t>(p) % 8 == 0; }

TEST(BlockPoolTest, BlocksTakeTheirClassSizeFromSharedSlabs) {
  BlockPool pool;
  std::vector<char*> blocks;
  for (int i = 0; i < 1000; ++i) {
    char* p = static_cast<char*>(pool.allocate(100));  // class 104
    ASSERT_TRUE(aligned8(p));
    std::memset(p, i & 0xFF, 100);
    blocks.push_back(p);
  }
  // 1000 blocks of 104 bytes, packed back to back in one slab: no per-block header.
  EXPECT_EQ(pool.stats().pooled_bytes, 1000u * 104);
  EXPECT_EQ(pool.stats().slab_bytes, BlockPool::kSlabBytes);
  for (size_t i = 1; i < blocks.size(); ++i) EXPECT_EQ(blocks[i] - blocks[i - 1], 104);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(static_cast<unsigned char>(blocks[i][99]), i & 0xFF);
  for (char* p : blocks) pool.deallocate(p, 100);
  EXPECT_EQ(pool.stats().pooled_bytes, 0u);
}

TEST(BlockPoolTest, FreedBlocksAreReusedWithinTheirClassOnly) {
  BlockPool pool;
  void* a = pool.allocate(136);
  void* b = pool.allocate(17);  // class 24
  pool.deallocate(a, 136);
  EXPECT_NE(pool.allocate(24), a);      // another class: not the freed 136-byte block
  EXPECT_EQ(pool.allocate(130), a);     // 130 rounds to 136: the freed block comes back
  pool.deallocate(b, 17);
  EXPECT_EQ(pool.allocate(20), b);
  EXPECT_EQ(pool.stats().slab_bytes, 2 * BlockPool::kSlabBytes);  // classes 24 and 136
}

TEST(BlockPoolTest, ByteBlocksTakeExactlyTheirSizeFromOneSharedSlab) {
  BlockPool pool;
  std::vector<char*> blocks;
  size_t expected = 0;
  for (int i = 0; i < 1000; ++i) {
    const size_t n = i % 2 ? 100 : 37;  // two sizes, one slab, back to back
    char* p = pool.allocate_bytes(n);
    std::memset(p, i & 0xFF, n);
    if (!blocks.empty()) {
      EXPECT_EQ(static_cast<size_t>(p - blocks.back()), i % 2 ? 37u : 100u);
    }
    blocks.push_back(p);
    expected += n;
  }
  EXPECT_EQ(pool.stats().pooled_bytes, static_cast<int64_t>(expected));
  EXPECT_EQ(pool.stats().slab_bytes, static_cast<int64_t>(BlockPool::kSlabBytes));
  for (int i = 0; i < 1000; ++i) {
    const size_t n = i % 2 ? 100 : 37;
    EXPECT_EQ(static_cast<unsigned char>(blocks[i][n - 1]), i & 0xFF);
  }
  for (int i = 0; i < 1000; ++i) pool.deallocate_bytes(blocks[i], i % 2 ? 100 : 37);
  EXPECT_EQ(pool.stats().pooled_bytes, 0);
}

TEST(BlockPoolTest, FreedByteBlocksAreReusedByTheirExactSizeOnly) {
  BlockPool pool;
  char* a = pool.allocate_bytes(100);
  char* b = pool.allocate_bytes(101);
  char* tiny = pool.allocate_bytes(3);  // takes kMinBytes
  EXPECT_EQ(tiny - b, 101);
  pool.deallocate_bytes(a, 100);
  pool.deallocate_bytes(b, 101);
  char* c = pool.allocate_bytes(99);
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
  EXPECT_EQ(c - tiny, static_cast<ptrdiff_t>(BlockPool::kMinBytes));
  EXPECT_EQ(pool.allocate_bytes(101), b);  // last freed of its size first
  EXPECT_EQ(pool.allocate_bytes(100), a);
  pool.deallocate_bytes(tiny, 3);
  EXPECT_EQ(pool.allocate_bytes(8), tiny);
  // Aligned blocks do not come from the byte slab or its free lists.
  pool.deallocate_bytes(a, 100);
  void* aligned = pool.allocate(100);
  EXPECT_NE(aligned, a);
  EXPECT_TRUE(aligned8(aligned));
  EXPECT_EQ(pool.stats().slab_bytes, static_cast<int64_t>(2 * BlockPool::kSlabBytes));
}

TEST(BlockPoolTest, AFullByteSlabLeavesItsRestAsAFreeBlock) {
  BlockPool pool;
  const size_t n = 250, fit = BlockPool::kSlabBytes / n, rest = BlockPool::kSlabBytes - fit * n;  // 76
  char* first = pool.allocate_bytes(n);
  for (size_t i = 1; i < fit; ++i) ASSERT_EQ(pool.allocate_bytes(n), first + i * n);
  char* next = pool.allocate_bytes(n);
  EXPECT_EQ(pool.stats().slab_bytes, static_cast<int64_t>(2 * BlockPool::kSlabBytes));
  EXPECT_NE(next, first + fit * n);
  EXPECT_EQ(pool.allocate_bytes(rest), first + fit * n);  // the first slab's last 76 bytes
}

TEST(BlockPoolTest, ANewSlabWhenOneIsFull) {
  BlockPool pool;
  const size_t per_slab = BlockPool::kSlabBytes / 256;
  std::set<void*> seen;
  for (size_t i = 0; i < per_slab + 1; ++i) ASSERT_TRUE(seen.insert(pool.allocate(256)).second);
  EXPECT_EQ(pool.stats().slab_bytes, 2 * BlockPool::kSlabBytes);
  EXPECT_EQ(pool.stats().pooled_bytes, (per_slab + 1) * 256);
}

TEST(BlockPoolTest, LargeBlocksBypassTheSlabs) {
  BlockPool pool;
  void* p = pool.allocate(BlockPool::kMaxPooled + 1);
  std::memset(p, 1, BlockPool::kMaxPooled + 1);
  EXPECT_EQ(pool.stats().slab_bytes, 0u);
  EXPECT_EQ(pool.stats().large_bytes, BlockPool::kMaxPooled + 1);
  pool.deallocate(p, BlockPool::kMaxPooled + 1);
  EXPECT_EQ(pool.stats().large_bytes, 0u);
}

TEST(BlockPoolTest, PassThroughUsesNoSlabs) {
  BlockPool pool(/*pass_through=*/true);
  void* p = pool.allocate(40);
  std::memset(p, 1, 40);
  pool.deallocate(p, 40);
  char* b = pool.allocate_bytes(3);
  std::memset(b, 1, 3);
  pool.deallocate_bytes(b, 3);
  EXPECT_EQ(pool.stats().slab_bytes, 0u);
  EXPECT_EQ(pool.stats().pooled_bytes, 0u);
}

TEST(BlockPoolTest, EachThreadHasItsOwnPoolAndTakesBlocksFreedOnIt) {
  if (BlockPool::tree().pass_through()) GTEST_SKIP() << "AddressSanitizer build: one pass-through pool";
  BlockPool* mine = &BlockPool::tree();
  BlockPool* theirs = nullptr;
  void* block = nullptr;
  std::thread([&] {
    theirs = &BlockPool::tree();
    block = theirs->allocate(64);  // allocated on that thread ...
  }).join();
  EXPECT_NE(mine, theirs);
  EXPECT_EQ(mine, &BlockPool::tree());
  mine->deallocate(block, 64);  // ... freed on this one (a tree handed on): it joins this pool
  EXPECT_EQ(mine->allocate(60), block);
  mine->deallocate(block, 60);
}

TEST(BlockPoolTest, TreeAllocatorServesNodeContainers) {
  std::set<int, std::less<>, TreeAllocator<int>> s;
  for (int i = 0; i < 1000; ++i) s.insert(i);
  EXPECT_EQ(s.size(), 1000u);
  EXPECT_EQ(*s.rbegin(), 999);
}

}  // namespace
}  // namespace zkraft::tree
