#include "server/resident_prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

namespace zkraft::server {

namespace {

// Larger private anonymous mappings are reservations (a sanitizer's shadow memory), not ours.
constexpr uintptr_t kMaxRegionBytes = uintptr_t{64} << 30;

// Write-faults [from, to) a step at a time.
void populate(char* from, char* to, PrefaultResult& r, size_t page, const std::atomic<bool>& stop) {
  while (from < to && !stop.load(std::memory_order_relaxed)) {
    const size_t n = std::min(static_cast<size_t>(to - from), kPrefaultStepBytes);
    if (::madvise(from, n, MADV_POPULATE_WRITE) == 0) r.pages += n / page;
    from += n;
  }
}

// The resident runs of [start, end), looked up kPrefaultStepBytes at a time.
void populate_resident(uintptr_t start, uintptr_t end, PrefaultResult& r, size_t page,
                       const std::atomic<bool>& stop) {
  std::vector<unsigned char> resident;
  for (uintptr_t window = start; window < end && !stop.load(std::memory_order_relaxed);
       window += kPrefaultStepBytes) {
    const size_t len = std::min<uintptr_t>(end - window, kPrefaultStepBytes);
    resident.assign(len / page, 0);
    if (::mincore(reinterpret_cast<void*>(window), len, resident.data()) != 0) return;  // unmapped meanwhile
    char* base = reinterpret_cast<char*>(window);
    size_t run = 0;  // first page of the current resident run
    for (size_t i = 0; i <= resident.size(); ++i) {
      if (i < resident.size() && (resident[i] & 1)) continue;
      populate(base + run * page, base + i * page, r, page, stop);
      run = i + 1;
    }
  }
}

}  // namespace

PrefaultResult prefault_resident_private_memory(const std::atomic<bool>& stop) {
  PrefaultResult r;
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return r;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  char line[4096];
  while (!stop.load(std::memory_order_relaxed) && std::fgets(line, sizeof line, maps) != nullptr) {
    uintptr_t start = 0, end = 0;
    char perms[8] = {};
    unsigned long long offset = 0, inode = 0;
    char dev[16] = {};
    int path_at = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %15s %llu %n", &start, &end, perms, &offset, dev,
                    &inode, &path_at) < 6) {
      continue;
    }
    // Private, writable, not backed by a file; of the named ones only the heap (not the main
    // thread's stack, nor the kernel's pages).
    if (std::strcmp(perms, "rw-p") != 0 || inode != 0 || end - start > kMaxRegionBytes) continue;
    const char* path = line + path_at;
    if (path[0] == '[' && std::strncmp(path, "[heap]", 6) != 0) continue;
    ++r.regions;
    populate_resident(start, end, r, page, stop);
  }
  std::fclose(maps);
  return r;
}

}  // namespace zkraft::server
