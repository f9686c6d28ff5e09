#include "server/slow_request_log.h"

#include <fmt/format.h>

#include "jute/archive.h"
#include "jute/opcodes.h"

namespace zkraft::server {

std::string read_path(const jute::RequestBody& body) {
  return std::visit(
      [](const auto& r) -> std::string {
        if constexpr (requires { r.path; }) {
          return std::string(r.path);
        } else {
          return {};
        }
      },
      body);
}

std::string write_path(int32_t op, std::string_view record) {
  namespace op_ = jute::op;
  if (op == op_::kMulti || op == op_::kReconfig || op == op_::kCloseSession) return {};
  jute::Reader r(record);
  std::string path;
  if (!r.read_string(path)) return {};
  return path;
}

std::optional<std::string> slow_request_line(const QueuedRequest& p, int64_t session_id,
                                             int64_t replied_ms, int64_t threshold_ms) {
  const int64_t total = replied_ms - p.received_ms;
  if (threshold_ms <= 0 || total < threshold_ms) return std::nullopt;
  std::string path = p.path;
  if (const auto* read = std::get_if<QueuedRequest::Read>(&p.state)) path = read_path(read->body);
  const int64_t handled = p.handled_ms ? p.handled_ms : p.received_ms;
  const int64_t outcome = p.answered_ms ? p.answered_ms : handled;
  std::string line = fmt::format("slow request: session 0x{:x} xid {} {}", session_id, p.xid,
                                 jute::op_name(p.op));
  if (!path.empty()) line += " " + path;
  line += fmt::format(" took {} ms: {} ms to the state thread, {} ms in consensus, {} ms waiting to be sent",
                      total, handled - p.received_ms, outcome - handled, replied_ms - outcome);
  return line;
}

void remember_slow_request(ServerStats& stats, const std::string& line, int64_t wall_ms) {
  stats.recent_slow_requests.push_back(SlowRequestEntry{stats.slow_requests, wall_ms, line});
  while (stats.recent_slow_requests.size() > kRecentSlowRequests) stats.recent_slow_requests.pop_front();
}

std::string render_slow_requests(const std::deque<SlowRequestEntry>& entries) {
  std::string out;
  for (const auto& e : entries) out += fmt::format("{}\t{}\t{}\n", e.seq, e.wall_ms, e.line);
  return out;
}

}  // namespace zkraft::server
