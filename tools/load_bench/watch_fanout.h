#pragma once
// Watch fan-out: `sessions` watcher sessions (spread over the servers) each set a data watch on
// one node (getData with watch), then one writer session sets that node; a round's latency is
// from the setData being written to the last of the W notifications read. Rounds repeat until
// the window ends; one round is one op. A single thread drives every connection with poll(), so
// arrival times are not skewed by thread scheduling on the client side.
//
// Invariant: a round is counted only when all W watchers saw their NodeDataChanged event; a round
// that times out (io timeout) counts as a connection failure and all sessions are re-opened.

#include "tools/load_bench/load_worker.h"

namespace zkraft::tools {

void run_watch_fanout(const LoadOptions& opt, LoadShared& shared, WorkerResult& out);

}  // namespace zkraft::tools
