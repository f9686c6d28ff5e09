#pragma once
// release_free_heap(): gives the heap's free pages back to the system, whichever malloc the process
// runs on. RaftNode calls it at the first pause in the writes after a snapshot (raft_node.cc),
// when the in-memory log up to the snapshot and the compaction's batches are gone.
//
// zkraft-server is linked with jemalloc (CMakeLists.txt, ZKRAFT_JEMALLOC); the unit tests, the
// sanitized builds and a build without libjemalloc-dev run on glibc's malloc. Which one this
// process has is decided at run time (jemalloc's mallctl is a weak reference here), so this
// library needs no jemalloc header and links into either.

#include <string>
#include <string_view>

namespace zkraft::consensus {

// Returns what it did, for the log line: "jemalloc arenas purged" or "glibc heap trimmed", or
// why nothing was released.
std::string_view release_free_heap();

// The malloc this process runs on, for the start-up log: "jemalloc <version>" or "glibc malloc".
std::string heap_allocator();

}  // namespace zkraft::consensus
