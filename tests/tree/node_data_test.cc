#include "tree/node_data.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

namespace zkraft::tree {
namespace {

TEST(NodeDataTest, InlineAndHeapSizes) {
  for (size_t n : {0u, 1u, 12u, 13u, 14u, 16u, 17u, 100u, 5000u}) {
    std::string bytes(n, '\0');
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    NodeData d(bytes);
    EXPECT_EQ(d.size(), n);
    EXPECT_EQ(d.view(), bytes);
    EXPECT_EQ(d.str(), bytes);
  }
  // Byte-aligned 14 bytes: Znode packs its kind and null flag right after it (tree/znode.h).
  EXPECT_EQ(sizeof(NodeData), 14u);
  EXPECT_EQ(alignof(NodeData), 1u);
}

TEST(NodeDataTest, AHeapBlocksSizeKeepsAllItsFiveBytes) {
  // The size is stored in 5 bytes (tree/packed_block.h): sizes past 32 bits come back whole.
  char ref[packed_block::kRefBytes];
  char* const block = reinterpret_cast<char*>(uintptr_t{0x123456789ab0});
  for (uint64_t n : {uint64_t{1}, uint64_t{255}, uint64_t{256}, uint64_t{1} << 32, (uint64_t{1} << 32) + 7,
                     packed_block::kMaxSize}) {
    packed_block::store(ref, block, static_cast<size_t>(n));
    EXPECT_EQ(packed_block::size(ref), n);
    EXPECT_EQ(packed_block::pointer(ref), block);
  }
}

TEST(NodeDataTest, CopyMoveAssignClear) {
  const std::string big(40, 'x');
  NodeData a(big);
  NodeData b = a;  // deep copy
  EXPECT_EQ(b.view(), big);
  a.assign("short");
  EXPECT_EQ(a.view(), "short");
  EXPECT_EQ(b.view(), big);
  NodeData c = std::move(b);
  EXPECT_EQ(c.view(), big);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  c = a;
  EXPECT_EQ(c.view(), "short");
  a = NodeData(big);
  EXPECT_EQ(a.view(), big);
  a = std::move(c);
  EXPECT_EQ(a.view(), "short");
  a.assign(a.view());  // self-assignment through a view of itself
  EXPECT_EQ(a.view(), "short");
  NodeData h(big);
  h.assign(h.view().substr(1));  // heap -> heap from its own bytes
  EXPECT_EQ(h.view(), big.substr(1));
  std::string mixed;
  for (char c = 'a'; c <= 'z'; ++c) mixed += c;
  h.assign(mixed);
  h.assign(h.view().substr(2, 16));  // heap -> inline from its own bytes (freed after the copy)
  EXPECT_EQ(h.view(), mixed.substr(2, 16));
  NodeData g(big);
  g.assign(g.view().substr(0, 0));  // heap -> empty
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.view(), "");
  h.clear();
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.view(), "");
}

}  // namespace
}  // namespace zkraft::tree
