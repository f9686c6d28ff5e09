#pragma once
// Status collection: one ServerStatus from the parts of a running server, for the four-letter
// words now and the admin and metrics pages to come. A pure function of what it is given (the
// caller passes in the process figures it read, and the times), so it is unit-tested with plain
// values and renders the same thing twice.

#include <cstdint>
#include <utility>

#include "server/client_table.h"
#include "server/replicated_log.h"
#include "server/server_stats.h"
#include "server/server_status.h"
#include "server/zk_state_machine.h"
#include "session/session_expiry_tracker.h"
#include "session/watch_registry.h"

namespace zkraft::server {

struct StatusSources {
  const ClientTable* clients = nullptr;
  const session::WatchRegistry* watches = nullptr;
  const ZkStateMachine* state = nullptr;
  const session::SessionExpiryTracker* expiry = nullptr;  // deadlines on the monotonic clock
  const ServerStats* stats = nullptr;
  ReplicationStatus replication;
  bool serving = false;       // in contact with a quorum, or serving read-only (ServingGate)
  bool read_only = false;     // read-only mode: only read-only clients
  uint64_t fsyncs = 0;
  size_t outstanding = 0;     // queued requests, all clients
  size_t pending_syncs = 0;
  int64_t monotonic_ms = 0;   // now
  int64_t wall_ms = 0;        // now
  int64_t started_monotonic_ms = 0;
  std::pair<int64_t, int64_t> file_descriptors;  // open, max
  EnvironmentStatus environment;
  // false: the counts only, without the per-connection, per-watch and per-session lists (and the
  // caller need not fill environment or file_descriptors): what the dashboard polls every second.
  bool lists = true;
};

ServerStatus collect_status(const StatusSources& s);

}  // namespace zkraft::server
