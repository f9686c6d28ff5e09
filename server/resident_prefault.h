#pragma once
// Write-faults, from the calling thread, every page of this process's private anonymous memory
// that is resident now: after a fork, so that the threads that serve clients do not take those
// faults one page at a time.
//
// Why: fork() write-protects every private page in the parent as well as the child; the parent's
// first write to each page afterwards faults, even once the child has exited and the page is the
// parent's alone again. On the development machine (a virtual machine) each such fault costs
// ~36 us, and after each snapshot's fork the state, Raft and network threads took thousands of
// them while serving (standalone 16x32 setData: p99 15 -> 35 ms once the Raft thread no longer
// stalled 240 ms on them, docs/benchmarks.md). MADV_POPULATE_WRITE takes the same faults in one
// system call per run of resident pages, on a thread that serves nobody.
//
// Call it only when no child shares the pages any more: while one does, each page written here
// is copied (the memory doubles). Pages not resident are left alone; a page only ever read
// counts as resident (it maps the kernel's shared zero page) and gets a page of its own, the one
// memory this adds (the memory part's idle RSS read 234.6 / 234.9 MiB without it, 237.9 with it,
// within the spread of runs). Regions mapped or unmapped meanwhile are skipped (every error is
// ignored: this is an optimisation only, and it never changes a page's contents).

#include <atomic>
#include <cstddef>

namespace zkraft::server {

struct PrefaultResult {
  size_t regions = 0;  // private anonymous writable regions looked at
  size_t pages = 0;    // resident pages write-faulted
};

// Stops early (between system calls, each over at most kPrefaultStepBytes) once `stop` is true.
inline constexpr size_t kPrefaultStepBytes = size_t{4} << 20;
PrefaultResult prefault_resident_private_memory(const std::atomic<bool>& stop);

}  // namespace zkraft::server
