// release_free_heap() and heap_allocator() pick the malloc the process runs on. The unit tests
// are linked without jemalloc (CMakeLists.txt links it into zkraft-server only), so here they take
// glibc's path; zkraft-server names its malloc in its start-up log ("malloc: jemalloc ...").
#include "consensus/heap_release.h"

#include <gtest/gtest.h>

namespace zkraft::consensus {
namespace {

TEST(HeapRelease, WithoutJemallocTheGlibcHeapIsTrimmed) {
  EXPECT_EQ(heap_allocator(), "glibc malloc");
  EXPECT_EQ(release_free_heap(), "glibc heap trimmed");
}

}  // namespace
}  // namespace zkraft::consensus
