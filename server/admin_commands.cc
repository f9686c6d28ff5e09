// The AdminServer's routing and the command table (Commands.java at 3.9.4), the refusals
// ZooKeeper gives (unknown command, not serving, auth missing, wrong method) and /health,
// /ready. The JSON bodies are in admin_json.cc.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "server/admin_commands.h"
#include "server/digest_auth.h"
#include "server/zk_state_machine.h"

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
  return json_reply(status, j.dump(2, ' ', false, Json::error_handler_t::replace));
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

// CommandResponse with no data: {"command": <primary>, "error": null}.
std::string empty_response(const AdminCommand& cmd) {
  Json j;
  j["command"] = std::string(cmd.primary());
  j["error"] = nullptr;
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

// A rate limit of one per `interval_ms` (ZooKeeper's RateLimiter(1, ...)); no clock: no limit.
bool rate_allows(const AdminContext& ctx, int64_t* last_ms, int64_t interval_ms) {
  if (!ctx.monotonic_ms || last_ms == nullptr) return true;
  const int64_t now = ctx.monotonic_ms();
  if (*last_ms >= 0 && now - *last_ms < interval_ms) return false;
  *last_ms = now;
  return true;
}

// RestoreCommand.runPost, with zkraft's restore through the log (kRestoreIntervalMs's comment).
AdminReply run_restore(const AdminCommand& cmd, const std::string& body, const AdminContext& ctx) {
  if (!ctx.restore) return json_reply(503, empty_response(cmd));
  if (body.empty()) return refusal(400, cmd.primary(), "the body must be the state to restore");
  if (!rate_allows(ctx, ctx.last_restore_ms, kRestoreIntervalMs)) return json_reply(429, empty_response(cmd));
  if (body.size() > kRestoreMaxBytes) {
    return refusal(413, cmd.primary(), "a restore takes at most " + std::to_string(kRestoreMaxBytes) +
                                           " bytes, not " + std::to_string(body.size()));
  }
  // ZooKeeper answers an input that does not deserialise with 500.
  if (!ZkStateMachine::valid_state(body)) {
    return refusal(500, cmd.primary(), "the body is not a zkraft state (what the snapshot command streams)");
  }
  std::optional<AdminRestore> done = ctx.restore(body);
  if (!done) return refusal(503, cmd.primary(), "the restore did not apply in time: check the tree");
  if (!done->error.empty()) return refusal(503, cmd.primary(), done->error);
  Json j;
  j["command"] = std::string(cmd.primary());
  j["error"] = nullptr;
  j["last_zxid"] = done->zxid;
  return json_reply(200, j.dump(2, ' ', false, Json::error_handler_t::replace));
}

// snapshot and restore, once the caller has ALL on "/".
AdminReply run_authorized(const AdminCommand& cmd, bool is_post, const std::string& body,
                          const std::map<std::string, std::string>& params, const AdminContext& ctx) {
  if (cmd.primary() == "restore") {
    // GET restore: ZooKeeper fails (PostCommand.runGet gives null); 405 says it plainly.
    if (!is_post) return AdminReply{405, "text/plain", "HTTP method GET is not supported by this URL\n"};
    return run_restore(cmd, body, ctx);
  }
  if (!rate_allows(ctx, ctx.last_snapshot_ms, kSnapshotIntervalMs)) return json_reply(429, empty_response(cmd));
  std::optional<AdminSnapshot> snap = ctx.snapshot ? ctx.snapshot() : std::nullopt;
  if (!snap) return refusal(503, cmd.primary(), not_answering(ctx));
  // SnapshotCommand: the zxid and size as headers; the bytes as the body unless streaming=false
  // (Boolean.parseBoolean: only "true", any case, is true).
  bool streaming = true;
  if (auto it = params.find("streaming"); it != params.end()) {
    std::string v = it->second;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    streaming = v == "true";
  }
  char zxid[24];
  std::snprintf(zxid, sizeof zxid, "0x%llx", static_cast<unsigned long long>(snap->last_zxid));
  AdminReply r;
  r.headers = {{"last_zxid", zxid}, {"snapshot_size", std::to_string(snap->data.size())}};
  if (streaming) {
    r.content_type = "application/octet-stream";
    r.body = std::move(snap->data);
  } else {
    r.content_type = "application/json";
    r.body = empty_response(cmd);
  }
  return r;
}

AdminReply run_command(const std::string& method, const std::string& asked,
                       const std::map<std::string, std::string>& params,
                       const std::optional<std::string>& authorization,
                       const std::string& remote_address, const std::string& body,
                       const AdminContext& ctx) {
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
    auto ids = admin_auth_ids(*authorization, remote_address, ctx.config->super_digest);
    if (!ids) return refusal(401, asked, "Not authenticated");
    std::optional<bool> allowed = ctx.authorize ? ctx.authorize(*ids) : std::nullopt;
    if (!allowed) return refusal(503, asked, not_answering(ctx));
    if (!*allowed) return refusal(403, asked, "Not authorized");
    return run_authorized(*cmd, is_post, body, params, ctx);
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

std::optional<std::vector<jute::Id>> admin_auth_ids(std::string_view authorization,
                                                    std::string_view remote_address,
                                                    const std::string& super_digest) {
  // String.split(" "): empty parts inside count, trailing empty parts are dropped.
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t sp = authorization.find(' ', start);
    parts.push_back(authorization.substr(start, sp == std::string_view::npos ? sp : sp - start));
    if (sp == std::string_view::npos) break;
    start = sp + 1;
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  if (parts.size() != 1 && parts.size() != 2) return std::nullopt;
  if (parts[0] == "digest" && parts.size() == 2) {
    std::vector<jute::Id> ids;
    std::string id = digest_id(parts[1]);
    if (!super_digest.empty() && id == super_digest) ids.push_back(jute::Id{"super", ""});
    ids.push_back(jute::Id{"digest", std::move(id)});
    return ids;
  }
  if (parts[0] == "ip" && !remote_address.empty()) {
    return std::vector<jute::Id>{jute::Id{"ip", std::string(remote_address)}};
  }
  return std::nullopt;
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
                     req.authorization, req.remote_address, req.body, ctx);
}

}  // namespace zkraft::server
