// The dashboard's routes and status.json (dashboard.h). The page, script and styles are the bytes
// of server/dashboard/*, embedded by server/dashboard/embed.cmake.
#include "server/dashboard.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <string_view>

#include "dashboard_assets.h"  // generated (build dir): kDashboard_index_html, ...

namespace zkraft::server {

namespace {

using Json = nlohmann::ordered_json;

template <size_t N>
std::string asset(const unsigned char (&bytes)[N]) {
  return std::string(reinterpret_cast<const char*>(bytes), N);
}

AdminReply page_reply(std::string type, std::string body) {
  AdminReply r{200, std::move(type), std::move(body)};
  // The page and its script go together: a new binary's page must not run an old cached script.
  r.headers = {{"Cache-Control", "no-cache"}};
  return r;
}

bool contains(const std::vector<uint64_t>& v, uint64_t id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

Json member(const ServerStatus& s, uint64_t id) {
  const bool standalone = s.mode == "standalone";
  const bool leading = s.mode == "leader";
  const auto* peer = [&]() -> const ServerStatus::PeerFigures* {
    for (const auto& p : s.peers) {
      if (p.id == id) return &p;
    }
    return nullptr;
  }();
  const bool self = id == static_cast<uint64_t>(s.server_id);
  const bool learner = contains(s.learners, id) || (peer != nullptr && peer->learner);
  Json j;
  j["id"] = id;
  if (standalone) {
    j["role"] = "standalone";
  } else if (s.leader_id > 0 && id == static_cast<uint64_t>(s.leader_id)) {
    j["role"] = "leader";
  } else {
    j["role"] = learner ? "observer" : "follower";
  }
  j["voter"] = contains(s.voters, id) || (standalone && self);
  j["self"] = self;
  // Progress is known only where the log is led: on the leader (and a standalone server).
  if ((leading || standalone) && self) {
    j["match"] = s.log.last_index;
    j["lag"] = 0;
    j["active"] = true;
  } else if (leading && peer != nullptr) {
    j["match"] = peer->match;
    j["lag"] = s.log.last_index > peer->match ? s.log.last_index - peer->match : 0;
    j["active"] = peer->recent_active;
  } else {
    j["match"] = nullptr;
    j["lag"] = nullptr;
    j["active"] = nullptr;
  }
  return j;
}

// Term, commit and applied of the members known here: this server's own; on the leader, what
// each member last reported of its own (MemberFigures, twice a second) with the report's age.
Json member_figures(const ServerStatus& s) {
  Json out = Json::array();
  auto add = [&out](uint64_t id, uint64_t term, uint64_t commit, uint64_t applied, int64_t ago) {
    Json f;
    f["id"] = id;
    f["term"] = term;
    f["commit_index"] = commit;
    f["applied_index"] = applied;
    f["reported_ms_ago"] = ago;
    out.push_back(std::move(f));
  };
  if (s.server_id > 0) {
    add(static_cast<uint64_t>(s.server_id), s.raft_term, s.log.commit_index, s.log.applied_index, 0);
  }
  if (s.mode == "leader") {
    for (const auto& p : s.peers) {
      if (p.reported) add(p.id, p.term, p.commit_index, p.applied_index, p.reported_ms_ago);
    }
  }
  return out;
}

}  // namespace

std::string render_dashboard_status(const ServerStatus& s) {
  Json j;
  j["server_id"] = s.server_id;
  j["mode"] = s.mode;
  j["serving"] = s.serving;
  j["read_only"] = s.read_only;
  j["version"] = s.version;
  j["uptime_ms"] = s.uptime_ms;
  j["leader_id"] = s.leader_id;  // 0: none known
  j["term"] = s.raft_term;
  j["commit_index"] = s.log.commit_index;
  j["applied_index"] = s.log.applied_index;
  j["last_index"] = s.log.last_index;
  j["snapshot_index"] = s.log.snapshot_index;
  j["sessions"] = s.global_sessions;
  j["connections"] = s.num_alive_connections;
  j["znodes"] = s.node_count;
  j["ephemerals"] = s.ephemerals_count;
  j["watches"] = s.watch_count;
  j["outstanding_requests"] = s.outstanding_requests;
  j["packets_received"] = s.packets_received;
  j["packets_sent"] = s.packets_sent;
  Json latency;
  latency["avg_ms"] = s.avg_latency_ms;
  latency["min_ms"] = s.min_latency_ms;
  latency["max_ms"] = s.max_latency_ms;
  latency["sum_ms"] = s.latency_sum_ms;
  latency["count"] = s.latency_count;
  j["latency"] = latency;
  Json fsync;
  fsync["count"] = s.fsync_count;
  fsync["micros_total"] = s.fsync_micros_total;
  fsync["micros_max"] = s.fsync_micros_max;
  fsync["threshold_exceeded"] = s.fsync_threshold_exceed_count;
  j["fsync"] = fsync;

  std::set<uint64_t> ids(s.voters.begin(), s.voters.end());
  ids.insert(s.learners.begin(), s.learners.end());
  for (const auto& p : s.peers) ids.insert(p.id);
  if (s.server_id > 0) ids.insert(static_cast<uint64_t>(s.server_id));
  j["lag_known"] = s.mode == "leader" || s.mode == "standalone";
  Json members = Json::array();
  for (uint64_t id : ids) members.push_back(member(s, id));
  j["members"] = std::move(members);
  j["member_figures"] = member_figures(s);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<AdminReply> handle_dashboard_request(const AdminRequest& req,
                                                   const AdminContext& ctx) {
  const std::string path = url_decode(std::string_view(req.target).substr(0, req.target.find('?')));
  enum class Route { kPage, kScript, kStyle, kStatus };
  Route route;
  if (path == "/" || path == "/dashboard" || path == "/dashboard/") {
    route = Route::kPage;
  } else if (path == "/dashboard/dashboard.js") {
    route = Route::kScript;
  } else if (path == "/dashboard/dashboard.css") {
    route = Route::kStyle;
  } else if (path == "/dashboard/status.json") {
    route = Route::kStatus;
  } else {
    return std::nullopt;
  }
  // The command URL is ZooKeeper's and wins, whatever it is configured to.
  const std::string& url = ctx.config->admin_command_url;
  if (path == url || path.rfind(url + "/", 0) == 0) return std::nullopt;
  if (req.method != "GET" && req.method != "HEAD") {
    AdminReply r{405, "text/plain", "HTTP method " + req.method + " is not supported by this URL\n"};
    r.headers = {{"Allow", "GET, HEAD"}};
    return r;
  }
  switch (route) {
    case Route::kPage:
      return page_reply("text/html; charset=utf-8", asset(kDashboard_index_html));
    case Route::kScript:
      return page_reply("text/javascript; charset=utf-8", asset(kDashboard_dashboard_js));
    case Route::kStyle:
      return page_reply("text/css; charset=utf-8", asset(kDashboard_dashboard_css));
    case Route::kStatus:
      break;
  }
  AdminReply r;
  r.content_type = "application/json";
  r.headers = {{"Cache-Control", "no-store"}};
  std::optional<ServerStatus> status =
      ctx.fetch_counts ? ctx.fetch_counts() : ctx.fetch_status(StatsReset::kNone);
  if (!status) {
    Json j;
    j["error"] = "the server's state thread did not answer within " +
                 std::to_string(ctx.fetch_timeout_ms) + " ms";
    r.status = 503;
    r.body = j.dump();
    return r;
  }
  r.body = render_dashboard_status(*status);
  return r;
}

AdminReply handle_admin_port_request(const AdminRequest& request, const AdminContext& context) {
  if (auto r = handle_dashboard_request(request, context)) return std::move(*r);
  return handle_admin_request(request, context);
}

}  // namespace zkraft::server
