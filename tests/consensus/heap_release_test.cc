// release_free_heap() and heap_allocator() pick the malloc the process runs on. The unit tests
// are linked without jemalloc (CMakeLists.txt links it into zkraft-server only), so here they take
// glibc's path; zkraft-server names its malloc in its start-up log ("malloc: jemalloc ...").
#include "consensus/heap_release.h"

#include <gtest/gtest.h>

#include <vector>

namespace zkraft::consensus {
namespace {

TEST(HeapRelease, WithoutJemallocTheGlibcHeapIsTrimmed) {
  EXPECT_EQ(heap_allocator(), "glibc malloc");
  {
    std::vector<std::vector<char>> blocks;
    for (int i = 0; i < 64; ++i) blocks.emplace_back(64 * 1024, 'x');
  }
  EXPECT_EQ(release_free_heap(), "glibc heap trimmed");
}

}  // namespace
}  // namespace zkraft::consensus
