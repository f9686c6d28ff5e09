#include "tools/ctl/slow_log.h"

#include <cstdio>
#include <ctime>
#include <regex>

namespace zkraft::tools {

namespace {

bool parse_u64(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

void parse_line(SlowRequest& r) {
  // The path may hold spaces: it is whatever lies between the op and " took ".
  static const std::regex form(
      R"(^slow request: session (0x[0-9a-f]+) xid (-?\d+) (\S+)(?: (.*))? took (\d+) ms: (\d+) ms to the state thread, (\d+) ms in consensus, (\d+) ms waiting to be sent$)");
  std::smatch m;
  if (!std::regex_match(r.line, m, form)) return;
  r.parsed = true;
  r.session = m[1];
  r.xid = std::stoll(m[2]);
  r.op = m[3];
  r.path = m[4].matched ? std::string(m[4]) : "";
  r.total_ms = std::stoll(m[5]);
  r.to_state_ms = std::stoll(m[6]);
  r.consensus_ms = std::stoll(m[7]);
  r.waiting_ms = std::stoll(m[8]);
}

}  // namespace

std::optional<std::vector<SlowRequest>> parse_slow_requests(const std::string& text,
                                                            const std::string& endpoint) {
  std::vector<SlowRequest> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    if (line.empty()) continue;
    size_t t1 = line.find('\t');
    size_t t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    uint64_t seq = 0, wall = 0;
    if (t2 == std::string::npos || !parse_u64(line.substr(0, t1), seq) ||
        !parse_u64(line.substr(t1 + 1, t2 - t1 - 1), wall)) {
      return std::nullopt;  // not the slow word's answer
    }
    SlowRequest r;
    r.endpoint = endpoint;
    r.seq = seq;
    r.wall_ms = static_cast<int64_t>(wall);
    r.line = line.substr(t2 + 1);
    parse_line(r);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<SlowRequest> newer_than(const std::vector<SlowRequest>& all, uint64_t after) {
  std::vector<SlowRequest> out;
  for (const auto& r : all) {
    if (r.seq > after) out.push_back(r);
  }
  return out;
}

static std::string utc_time(int64_t wall_ms) {
  const std::time_t secs = static_cast<std::time_t>(wall_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(wall_ms % 1000));
  return out;
}

std::string slow_request_text(const SlowRequest& r) {
  return r.endpoint + " " + utc_time(r.wall_ms) + " #" + std::to_string(r.seq) + " " + r.line;
}

nlohmann::json slow_request_json(const SlowRequest& r) {
  nlohmann::json j{{"endpoint", r.endpoint}, {"seq", r.seq}, {"time_ms", r.wall_ms},
                   {"time", utc_time(r.wall_ms)}, {"line", r.line}};
  if (r.parsed) {
    j["session"] = r.session;
    j["xid"] = r.xid;
    j["op"] = r.op;
    j["path"] = r.path.empty() ? nlohmann::json() : nlohmann::json(r.path);
    j["total_ms"] = r.total_ms;
    j["stages_ms"] = {{"to_state_thread", r.to_state_ms}, {"consensus", r.consensus_ms},
                      {"waiting_to_be_sent", r.waiting_ms}};
  } else {
    for (const char* k : {"session", "xid", "op", "path", "total_ms", "stages_ms"}) j[k] = nullptr;
  }
  return j;
}

}  // namespace zkraft::tools
