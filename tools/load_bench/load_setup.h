#pragma once
// The tree a zk_load run needs, made before any clock starts: prepare_run once per run (the root,
// the node with `list_children` children that getChildren reads, the node watch fan-out watches),
// setup_worker once per session (its own node, and the nodes a delete run removes).
// Both accept what an earlier run left (NodeExists counts as done).

#include <string>

#include "tools/load_bench/load_worker.h"

namespace zkraft::tools {

bool prepare_run(const LoadOptions& opt, std::string& why);

// False (out.last_error set) when no server could be reached or a create failed.
bool setup_worker(int index, const LoadOptions& opt, WorkerResult& out);

// The node kWatch watches and sets: <root>/watched.
std::string watched_node(const LoadOptions& opt);

// Creates every name in `names` on `c`, keeping up to `window` creates in flight. Success means
// each exists afterwards (kOk or kNodeExists); false on a broken connection or any other error.
bool create_all(ZkConnection& c, const std::vector<std::string>& names, const std::string& data,
                int window, std::string& why);

}  // namespace zkraft::tools
