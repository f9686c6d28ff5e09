#pragma once
// Session churn: each worker repeats connect, create an ephemeral node, close the session, one
// cycle at a time (in-flight depth does not apply). One completed cycle is one op; its latency
// is the whole cycle, from connect() to the closeSession reply.

#include "tools/load_bench/load_worker.h"

namespace zkraft::tools {

void run_churn_worker(int index, const LoadOptions& opt, LoadShared& shared, WorkerResult& out);

}  // namespace zkraft::tools
