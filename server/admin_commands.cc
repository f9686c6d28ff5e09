// The AdminServer's routing and the command table (Commands.java at 3.9.4), the refusals
// ZooKeeper gives (unknown command, not serving, auth missing, wrong method) and /health,
// /ready. The JSON bodies are in admin_json.cc.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "server/admin_commands.h"

namespace zkraft::server {

namespace {

using Json = nlohmann::ordered_json;
using R = StatsReset;

// Commands.java's static block, in its order; the names lists as each constructor gives them.
const AdminCommand kCommands[] = {
    {{"connection_stat_reset", "crst"}, true, false, false, R::kConnections},
    {{"configuration", "conf", "config"}},
    {{"connections", "cons"}},
    {{"hash"}},
    {{"dirs"}},
    {{"dump"}},
    {{"environment", "env", "envi"}, false},
    {{"get_trace_mask", "gtmk"}, false},
    {{"initial_configuration", "icfg"}},
    {{"is_read_only", "isro"}},
    {{"last_snapshot", "lsnp"}},
    {{"leader", "lead"}},
    {{"monitor", "mntr"}, false},
    {{"observer_connection_stat_reset", "orst"}},
    {{"restore", "rest"}, true, true, true},
    {{"ruok"}},
    {{"set_trace_mask", "stmk"}, false},
    {{"snapshot", "snap"}, true, true},
    {{"server_stats", "srvr"}},
    {{"stats", "stat"}},
    {{"stat_reset", "srst"}, true, false, false, R::kServer},
    {{"observers", "obsr"}},
    {{"system_properties", "sysp"}, false},
    {{"voting_view"}},
    {{"watches", "wchc"}},
    {{"watches_by_path", "wchp"}},
    {{"watch_summary", "wchs"}},
    {{"zabstate"}, false},
};

constexpr std::string_view kNotServing = "This ZooKeeper instance is not currently serving requests";

AdminReply json_reply(int status, std::string body) {
  return AdminReply{status, "application/json", std::move(body)};
}

// CommandResponse(cmdName, error, status): the name as asked, then the error.
AdminReply refusal(int status, std::string_view asked, std::string error) {
  Json j;
  j["command"] = std::string(asked);
  j["error"] = std::move(error);
  return json_reply(status, j.dump(2));
}

// JettyAdminServer.commandLinks: primary names sorted, each an <a> line then a <br/> line
// (PrintWriter.println: "\n"). Jetty sets no Content-Type for it.
AdminReply command_links(const std::string& url) {
  std::vector<std::string_view> names;
  for (const auto& c : kCommands) names.push_back(c.primary());
  std::sort(names.begin(), names.end());
  std::string out;
  for (auto n : names) {
    out += "<a href=\"" + url + "/" + std::string(n) + "\">" + std::string(n) + "</a>\n<br/>\n";
  }
  return AdminReply{200, "", out};
}

// request.getParameterMap with the first value of each name.
std::map<std::string, std::string> query_params(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    auto decode = [](std::string_view v) {
      std::string s(v);
      std::replace(s.begin(), s.end(), '+', ' ');  // a form value: '+' is a space
      return url_decode(s);
    };
    std::string key = decode(part.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : decode(part.substr(eq + 1));
    out.emplace(std::move(key), std::move(value));  // the first one wins
  }
  return out;
}

std::string not_answering(const AdminContext& ctx) {
  return "the server's state thread did not answer within " +
         std::to_string(ctx.fetch_timeout_ms) + " ms";
}

AdminReply run_command(const std::string& method, const std::string& asked,
                       const std::map<std::string, std::string>& params,
                       const std::optional<std::string>& authorization, const AdminContext& ctx) {
  const AdminCommand* cmd = find_admin_command(asked);
  // Commands.runCommand answers an unknown name with 200 and the error (for GET and POST).
  if (cmd == nullptr) return refusal(200, asked, "Unknown command: " + asked);
  const bool is_post = method == "POST";
  if (is_post && !cmd->post) {
    // ZooKeeper 3.9.4 runs GetCommand.runPost, gets null and fails with a NullPointerException
    // (Jetty's 500 page); 3.8 has no doPost and answers 405. We answer 405, as 3.8 does.
    return AdminReply{405, "text/plain", "HTTP method POST is not supported by this URL\n"};
  }
  std::optional<ServerStatus> status = ctx.fetch_status(cmd->reset);
  if (!status) return refusal(503, asked, not_answering(ctx));
  if (cmd->server_required && !status->serving) return refusal(200, asked, std::string(kNotServing));
  if (cmd->needs_auth) {
    if (!authorization) return refusal(401, asked, "Auth info is missing for the command");
    // zkraft does not take or restore snapshots through the admin port (yet): with credentials
    // it answers as ZooKeeper does with zookeeper.admin.{snapshot,restore}.enabled=false.
    Json j;
    j["command"] = std::string(cmd->primary());
    j["error"] = nullptr;
    return json_reply(503, j.dump(2));
  }
  if (!is_post && cmd->post) {
    // PostCommand.runGet gives null; ZooKeeper then fails as above. Only reachable for a POST
    // command without auth, which ZooKeeper does not have.
    return AdminReply{405, "text/plain", "HTTP method GET is not supported by this URL\n"};
  }
  return json_reply(200, render_admin_command(*cmd, *status, ctx, params));
}

}  // namespace

std::span<const AdminCommand> admin_commands() { return kCommands; }

const AdminCommand* find_admin_command(std::string_view name) {
  for (const auto& c : kCommands) {
    if (std::find(c.names.begin(), c.names.end(), name) != c.names.end()) return &c;
  }
  return nullptr;
}

std::string url_decode(std::string_view s) {
  auto hexval = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hexval(s[i + 1]);
      const int lo = hexval(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

std::pair<int, std::string> health_answer(const std::optional<ServerStatus>& status, bool ready) {
  if (!status) return {503, "not ready: the state thread does not answer"};
  const ServerStatus& s = *status;
  if (!s.serving) return {503, "no leader known: not in a quorum, not serving clients"};
  const bool read_only = s.read_only || s.mode == "read-only";
  if (ready) return {200, "ready: serving clients as " + s.mode};
  if (read_only) return {503, "read-only: not in a quorum"};
  std::string line = "ok: serving as " + s.mode;
  if (s.mode != "standalone") {
    line += ", leader " + std::to_string(s.leader_id) + ", term " + std::to_string(s.raft_term);
  }
  return {200, line};
}

AdminReply handle_admin_request(const AdminRequest& req, const AdminContext& ctx) {
  const size_t q = req.target.find('?');
  const std::string path = url_decode(std::string_view(req.target).substr(0, q));
  const std::string query = q == std::string::npos ? "" : req.target.substr(q + 1);
  const bool get = req.method == "GET" || req.method == "HEAD";

  if (path == "/health" || path == "/ready") {
    if (!get) return AdminReply{405, "", ""};
    auto [code, line] = health_answer(ctx.fetch_status(StatsReset::kNone), path == "/ready");
    return AdminReply{code, "text/plain", line + "\n"};
  }

  const std::string& url = ctx.config->admin_command_url;
  const bool under_url = path == url || path.rfind(url + "/", 0) == 0;
  if (!under_url) return AdminReply{404, "text/plain", "Not Found\n"};
  // JettyAdminServer.constrainTraceMethod: TRACE needs an authentication nobody has.
  if (req.method == "TRACE") return AdminReply{403, "", ""};
  if (!get && req.method != "POST") return AdminReply{405, "", ""};  // HttpServlet's default
  const std::string cmd = path.size() > url.size() + 1 ? path.substr(url.size() + 1) : "";
  if (cmd.empty()) return command_links(url);
  return run_command(req.method == "POST" ? "POST" : "GET", cmd, query_params(query),
                     req.authorization, ctx);
}

}  // namespace zkraft::server
