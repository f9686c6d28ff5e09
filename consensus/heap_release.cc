#include "consensus/heap_release.h"

#include <malloc.h>

#include <cstddef>

// jemalloc's control interface (jemalloc(3)); null unless the process runs on jemalloc.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace zkraft::consensus {

std::string_view release_free_heap() {
  if (mallctl != nullptr) {
    // "arena.<MALLCTL_ARENAS_ALL>.purge", MALLCTL_ARENAS_ALL being 4096: every arena's unused
    // dirty pages go back at once, instead of over jemalloc's decay time (10 s by default, and
    // only as allocations happen, since no background thread runs).
    if (mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0) != 0) return "jemalloc purge failed";
    return "jemalloc arenas purged";
  }
  // glibc returns only the free memory at the top of a heap by itself; malloc_trim returns every
  // whole free page.
  malloc_trim(0);
  return "glibc heap trimmed";
}

std::string heap_allocator() {
  if (mallctl == nullptr) return "glibc malloc";
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (mallctl("version", &version, &len, nullptr, 0) != 0 || version == nullptr) return "jemalloc";
  return std::string("jemalloc ") + version;
}

}  // namespace zkraft::consensus
