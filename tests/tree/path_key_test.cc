// PathKey: the path index's key keeps 22 bytes inline and longer paths in one exact block.
#include "tree/path_key.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>
#include <utility>

namespace zkraft::tree {
namespace {

TEST(PathKey, KeepsEveryLengthAcrossTheInlineLimit) {
  for (size_t n : {0, 1, 15, 16, 17, 21, 22, 23, 24, 30, 31, 100, 5000}) {
    SCOPED_TRACE(n);
    std::string s;
    for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + i % 26));
    PathKey k(s);
    EXPECT_EQ(k.size(), n);
    EXPECT_EQ(k.view(), s);
    EXPECT_EQ(k.str(), s);
    EXPECT_TRUE(k == s);
    EXPECT_TRUE(k == std::string_view(s));
    EXPECT_EQ(k.empty(), n == 0);
    PathKey copy(k);
    EXPECT_EQ(copy.view(), s);
    if (n > 0) {
      EXPECT_NE(copy.data(), k.data()) << "the copy shares the bytes";
    }
    const char* before = k.data();
    PathKey moved(std::move(k));
    EXPECT_EQ(moved.view(), s);
    if (n > 22) {
      EXPECT_EQ(moved.data(), before);  // the block moves with it
    }
    EXPECT_TRUE(k.empty());                        // NOLINT: the moved-from key is empty
  }
}

// The key's bytes live inside its own 24 bytes (no heap block of their own).
bool inline_in(const PathKey& k) {
  const char* self = reinterpret_cast<const char*>(&k);
  return k.data() >= self && k.data() < self + sizeof k;
}

TEST(PathKey, PathsUpTo22BytesNeedNoHeapBlock) {
  EXPECT_TRUE(inline_in(PathKey("/mem/c-0000012345")));  // 17 bytes: a std::string allocates
  EXPECT_TRUE(inline_in(PathKey("/locks/lock-0000000042")));
  EXPECT_TRUE(inline_in(PathKey(std::string(22, 'p'))));
  EXPECT_FALSE(inline_in(PathKey(std::string(23, 'p'))));
  EXPECT_EQ(sizeof(PathKey), 24u);
}

TEST(PathKey, WorksAsATransparentHashKey) {
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_set<PathKey, Hash, std::equal_to<>> set;
  set.emplace(std::string("/a"));
  set.emplace(std::string(40, 'x'));
  EXPECT_FALSE(set.emplace(std::string("/a")).second);
  EXPECT_NE(set.find(std::string_view("/a")), set.end());
  EXPECT_NE(set.find(std::string_view(std::string(40, 'x'))), set.end());
  EXPECT_EQ(set.find(std::string_view("/b")), set.end());
}

}  // namespace
}  // namespace zkraft::tree
