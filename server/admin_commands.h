#pragma once
// The HTTP AdminServer's answers, without sockets or threads: which URL means what, the command
// table of ZooKeeper 3.9.4's admin Commands.java (names and aliases), and each command's JSON in
// ZooKeeper's shape (field names, types, nesting, the `command` and `error` fields), rendered
// from a ServerStatus. admin_server.h is the I/O around it.
//
// Routes (as JettyAdminServer maps them, plus zkraft's health endpoints):
//   <commandURL> and <commandURL>/        the list of commands (HTML links, primary names sorted)
//   <commandURL>/<name or alias>          the command's JSON
//   /health                               200 when serving in a quorum, else 503; one text line
//   /ready                                200 when accepting client sessions, else 503
//   anything else                         404
//
// Invariants: every JSON answer is an object with "command" (the primary name, or the name as
// asked when it is unknown or refused) and "error" (null or a message). The status is asked for
// through AdminContext::fetch_status, which may fail (nullopt: the state thread did not answer in
// time); the answer then says so with 503 and nothing is made up.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jute/data.h"
#include "server/config.h"
#include "server/server_status.h"

namespace zkraft::server {

struct AdminCommand {
  std::vector<std::string_view> names;  // names[0] is the primary name
  bool server_required = true;          // answer "not currently serving" when not serving
  bool needs_auth = false;              // ZooKeeper's AuthRequest (ALL on "/")
  bool post = false;                    // a PostCommand (restore); the others are GetCommands
  StatsReset reset = StatsReset::kNone; // side effect, done on the state thread

  std::string_view primary() const { return names.front(); }
};

// Every command, in the order Commands.java registers them.
std::span<const AdminCommand> admin_commands();
// By primary name or alias; nullptr if unknown.
const AdminCommand* find_admin_command(std::string_view name);

struct AdminRequest {
  std::string method;          // "GET", "POST", ...
  std::string target;          // "/commands/stat?x=1" (as sent: not yet decoded)
  std::optional<std::string> authorization;  // the Authorization header, if sent
  std::string remote_address;  // the peer's IP, for the "ip" scheme
  std::string body;            // a POST's body (restore: the state to restore)
};

struct AdminReply {
  AdminReply() = default;
  AdminReply(int status_code, std::string type, std::string text)
      : status(status_code), content_type(std::move(type)), body(std::move(text)) {}

  int status = 200;
  std::string content_type;    // empty: no Content-Type header (as Jetty sends the command list)
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones (snapshot's last_zxid)
};

// What the snapshot command streams: the state in zkraft's own snapshot format (the one
// consensus stores; not ZooKeeper's snapshot file format), as of last_zxid. A forked child
// serialises it, as consensus' snapshots (forked_snapshot.h): the state thread stops only for
// the fork. ZooKeeper's rate limit applies (kSnapshotIntervalMs, 429 when asked sooner).
// SnapshotCommand's RateLimiter(1, zookeeper.admin.rateLimiterIntervalInMS = 300000, MICROSECONDS):
// the unit makes it one snapshot per 300 ms.
inline constexpr int64_t kSnapshotIntervalMs = 300;

struct AdminSnapshot {
  std::string data;
  int64_t last_zxid = 0;
};

// The restore command takes what the snapshot command streams (the body of a POST) and makes it
// the state of the whole ensemble: it is proposed as ONE log entry (ZooKeeper restores only the
// server it is sent to; a Raft member that did so would leave the others' state machines), so
// it must be sent to the leader (another member answers 503 naming it). Once it applies, every
// member closes its client connections. The zxid goes on from the log (the answer's last_zxid);
// the restored znodes keep their stats.
// RestoreCommand's RateLimiter(1, zookeeper.admin.rateLimiterIntervalInMS = 300000,
// MILLISECONDS): one restore per five minutes.
inline constexpr int64_t kRestoreIntervalMs = 300000;
// The largest state it takes, as one log entry: the peer transport (64 MiB messages) and the
// log entry decoder (64 MiB buffers) must carry it with room to spare.
inline constexpr size_t kRestoreMaxBytes = size_t{32} << 20;

struct AdminRestore {
  int64_t zxid = 0;   // the zxid the restore applied at
  std::string error;  // empty: applied
};

struct AdminContext {
  const Config* config = nullptr;
  std::string initial_configuration;  // the config file's text, for initial_configuration
  // The status from the state thread, after the reset asked for; nullopt if it did not answer.
  std::function<std::optional<ServerStatus>(StatsReset)> fetch_status;
  // The same without the per-connection, per-watch and per-session lists (and the directory
  // sizes), for the dashboard's poll every second; unset: fetch_status(kNone) is used.
  std::function<std::optional<ServerStatus>()> fetch_counts;
  // get/set_trace_mask's mask; nullptr (production): the process-wide one of trace_mask.h, which
  // the 4lw gtmk/stmk share.
  int64_t* trace_mask = nullptr;
  // For the commands behind authorisation (snapshot, restore), on the state thread: whether the
  // ids have ALL on "/", and the state; nullopt if it did not answer.
  std::function<std::optional<bool>(const std::vector<jute::Id>&)> authorize;
  std::function<std::optional<AdminSnapshot>()> snapshot;
  // Proposes the (checked) state and waits for it to apply; nullopt if that took too long.
  // Unset: restore is disabled (503, as zookeeper.admin.restore.enabled=false).
  std::function<std::optional<AdminRestore>(std::string state)> restore;
  // The snapshot rate limit's clock and memory (admin thread only); no limit without a clock.
  std::function<int64_t()> monotonic_ms;
  int64_t* last_snapshot_ms = nullptr;  // < 0: none yet
  int64_t* last_restore_ms = nullptr;   // < 0: none yet
  int64_t fetch_timeout_ms = 0;       // for the message when fetch_status fails
};

// The whole answer to one request. HEAD is answered as GET (the caller drops the body).
AdminReply handle_admin_request(const AdminRequest& request, const AdminContext& context);

// The JSON object (pretty-printed, as Jackson's INDENT_OUTPUT) that command `cmd` answers
// with, given the status. `asked` is the name in the URL; `params` the query parameters.
std::string render_admin_command(const AdminCommand& cmd, const ServerStatus& status,
                                 const AdminContext& context,
                                 const std::map<std::string, std::string>& params);

// The plain-text answer of /health and /ready: (status code, one line).
std::pair<int, std::string> health_answer(const std::optional<ServerStatus>& status, bool ready);

// Commands.handleAuthentication: the Authorization header "<scheme> <auth>" (or "<scheme>"
// alone) to ids. "digest user:password" gives the digest id (and super when it is the super
// digest), "ip" the peer's address; anything else (another scheme, a digest without its
// credential, more than two words): nullopt, which ZooKeeper answers 401 "Not authenticated".
std::optional<std::vector<jute::Id>> admin_auth_ids(std::string_view authorization,
                                                    std::string_view remote_address,
                                                    const std::string& super_digest);

// "%2F" -> "/", "+" kept (a path, not a form); invalid escapes are kept as written.
std::string url_decode(std::string_view s);

}  // namespace zkraft::server
