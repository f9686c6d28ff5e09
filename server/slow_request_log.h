#pragma once
// The slow-request log: one line for each request that took longer than
// slow_request_threshold_ms from the moment its network thread decoded it to the moment its
// reply left the state thread, with the time spent in each stage, so an operator sees where it
// went (ZooKeeper has no such log: ZOOKEEPER-2770). Stages:
//   to the state thread   decoded -> handled (the network-to-state hop, and any backlog there)
//   in consensus          handled (a write is proposed at once) -> its apply here (a sync: its
//                         read point); commit and apply are one stage seen from the state thread
//   waiting to be sent    outcome known (or, for a read, handled) -> replied: earlier requests of
//                         the same session, or a client that does not read its replies
// Pure: the caller supplies the times and writes the line.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jute/request.h"
#include "server/server_stats.h"
#include "server/session_queue.h"

namespace zkraft::server {

// The path a read's record names ("" for records without one).
std::string read_path(const jute::RequestBody& body);
// The path a write's record starts with (create, delete, setData, setACL, check, ...), read
// from its undecoded bytes; "" for multi, reconfig and anything that does not parse.
std::string write_path(int32_t op, std::string_view record);

// The log line for `p`, replied at `replied_ms`, if it took at least `threshold_ms` (> 0).
std::optional<std::string> slow_request_line(const QueuedRequest& p, int64_t session_id,
                                             int64_t replied_ms, int64_t threshold_ms);

// Keeps `line` (the slow_requests-th, already counted) among stats' recent ones.
void remember_slow_request(ServerStats& stats, const std::string& line, int64_t wall_ms);

// The `slow` four-letter word (zkraft's, for zkraft-ctl slow-log): the recent slow-request lines,
// oldest first, one per line as "<seq>\t<epoch ms>\t<line>\n"; "" when there are none. The
// sequence numbers let a poller print only what is new, and see what it missed (a gap).
std::string render_slow_requests(const std::deque<SlowRequestEntry>& entries);

}  // namespace zkraft::server
