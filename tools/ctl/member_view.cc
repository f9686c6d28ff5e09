#include "tools/ctl/member_view.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

namespace zkraft::tools {

void parse_srvr(const std::string& srvr, MemberView& m) {
  std::istringstream in(srvr);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Mode: ", 0) == 0) {
      m.mode = line.substr(6);
      m.serving = true;
    } else if (line.rfind("Zxid: ", 0) == 0) {
      m.zxid = line.substr(6);
    }
  }
}

std::optional<std::map<std::string, uint64_t>> parse_lgif(const std::string& text) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) return std::nullopt;
    uint64_t v = 0;
    const char* b = line.data() + tab + 1;
    const char* e = line.data() + line.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e) return std::nullopt;
    out[line.substr(0, tab)] = v;
  }
  if (!out.count("last_log_idx") || !out.count("last_committed_log_idx")) return std::nullopt;
  return out;
}

const MemberView* find_leader(const std::vector<MemberView>& members) {
  for (const auto& m : members) {
    if (m.mode == "leader" || m.mode == "standalone") return &m;
  }
  return nullptr;
}

std::optional<int64_t> lag_of(const MemberView& m, const MemberView* leader) {
  if (!leader || leader->log.empty() || m.log.empty()) return std::nullopt;
  // The figures come from two servers at two moments: a member polled after the leader may be
  // ahead of what the leader said; that is no lag.
  return std::max<int64_t>(0, static_cast<int64_t>(leader->log.at("last_log_idx")) -
                                  static_cast<int64_t>(m.log.at("last_committed_log_idx")));
}

namespace {
std::string figure(const MemberView& m, const char* key) {
  auto it = m.log.find(key);
  return it == m.log.end() ? "-" : std::to_string(it->second);
}
}  // namespace

std::string members_table(const std::vector<MemberView>& members) {
  const MemberView* leader = find_leader(members);
  size_t width = 8;
  for (const auto& m : members) width = std::max(width, m.endpoint.size());
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s  %-11s  %-10s  %8s  %8s  %8s  %8s  %6s\n", static_cast<int>(width),
                "ENDPOINT", "MODE", "ZXID", "APPLIED", "COMMIT", "LAST", "SNAPSHOT", "LAG");
  std::string out = buf;
  for (const auto& m : members) {
    const std::string mode = !m.reachable ? "unreachable" : m.serving ? m.mode : "not serving";
    const auto lag = lag_of(m, leader);
    std::snprintf(buf, sizeof buf, "%-*s  %-11s  %-10s  %8s  %8s  %8s  %8s  %6s\n", static_cast<int>(width),
                  m.endpoint.c_str(), mode.c_str(), m.zxid.value_or("-").c_str(),
                  figure(m, "last_committed_log_idx").c_str(), figure(m, "leader_committed_log_idx").c_str(),
                  figure(m, "last_log_idx").c_str(), figure(m, "last_snapshot_idx").c_str(),
                  lag ? std::to_string(*lag).c_str() : "-");
    out += buf;
  }
  return out;
}

nlohmann::json members_json(const std::vector<MemberView>& members) {
  const MemberView* leader = find_leader(members);
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& m : members) {
    nlohmann::json j;
    j["endpoint"] = m.endpoint;
    j["reachable"] = m.reachable;
    if (!m.reachable) j["error"] = m.error;
    j["serving"] = m.serving;
    j["mode"] = m.mode;
    if (m.zxid) j["zxid"] = *m.zxid;
    if (!m.log.empty()) j["log"] = m.log;
    if (auto lag = lag_of(m, leader)) j["lag"] = *lag;
    j["leader"] = leader == &m;
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace zkraft::tools
