// The admin commands' JSON bodies, one function per command, in the shape ZooKeeper 3.9.4's
// Commands.java gives them (Jackson, snake_case, objects in insertion order). Where zkraft has
// no such thing, the field is still there with an honest value and a comment says why.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "server/admin_commands.h"
#include "server/four_letter_words.h"
#include "server/trace_mask.h"

namespace zkraft::server {

namespace {

using Json = nlohmann::ordered_json;

std::string strip_slash(const std::string& remote) {
  return !remote.empty() && remote[0] == '/' ? remote.substr(1) : remote;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string absolute(const std::string& dir) {
  if (dir.empty()) return dir;
  std::error_code ec;
  auto p = std::filesystem::absolute(dir, ec);
  return ec ? dir : p.lexically_normal().string();
}

// ServerCnxn.getConnectionInfo(brief).
Json connection_info(const ConnectionStatus& c, bool brief) {
  Json j;
  j["remote_socket_address"] = strip_slash(c.remote);
  j["interest_ops"] = c.interest_ops;
  j["outstanding_requests"] = c.queued;
  j["packets_received"] = c.received;
  j["packets_sent"] = c.sent;
  if (!brief) {
    j["session_id"] = c.session_id;
    j["last_operation"] = c.last_op;
    j["established"] = c.established_ms;  // a java.util.Date: Jackson writes epoch ms
    j["session_timeout"] = c.timeout_ms;
    j["last_cxid"] = c.last_cxid;
    j["last_zxid"] = c.last_zxid;
    j["last_response_time"] = c.last_response_ms;
    j["last_latency"] = c.last_latency_ms;
    j["min_latency"] = c.min_latency_ms;
    j["avg_latency"] = c.avg_latency_ms;
    j["max_latency"] = c.max_latency_ms;
  }
  return j;
}

Json connections(const ServerStatus& s, bool brief) {
  Json list = Json::array();
  for (const auto& c : s.connections) list.push_back(connection_info(c, brief));
  return list;
}

Json buffer_stats(const ServerStatus& s) {
  Json j;
  j["last_buffer_size"] = s.last_client_response_size;
  j["min_buffer_size"] = s.min_client_response_size;
  j["max_buffer_size"] = s.max_client_response_size;
  return j;
}

// ServerStats as Jackson writes it (its getters, snake_case).
Json server_stats(const ServerStatus& s) {
  Json j;
  j["packets_sent"] = s.packets_sent;
  j["packets_received"] = s.packets_received;
  j["fsync_threshold_exceed_count"] = s.fsync_threshold_exceed_count;
  j["client_response_stats"] = buffer_stats(s);
  j["data_dir_size"] = s.data_dir_size;
  j["log_dir_size"] = s.log_dir_size;
  j["provider_null"] = false;
  j["server_state"] = s.mode;
  j["last_processed_zxid"] = s.last_zxid;
  j["outstanding_requests"] = s.outstanding_requests;
  j["avg_latency"] = s.avg_latency_ms;
  j["max_latency"] = s.max_latency_ms;
  j["min_latency"] = s.min_latency_ms;
  j["num_alive_client_connections"] = s.num_alive_connections;
  j["uptime"] = s.uptime_ms;
  j["auth_failed_count"] = s.auth_failed_count;
  j["non_mtlsremote_conn_count"] = 0;  // no TLS client port in zkraft
  j["non_mtlslocal_conn_count"] = 0;
  return j;
}

// SrvrCommand, and StatCommand's extra connections.
void srvr(Json& j, const ServerStatus& s, bool with_connections) {
  j["version"] = s.version;
  j["read_only"] = s.read_only;
  j["server_stats"] = server_stats(s);
  j["client_response"] = buffer_stats(s);
  if (s.mode == "leader") {
    const auto& p = s.proposal_sizes;
    Json ps;  // Leader.getProposalStats: BufferStats of proposal sizes
    ps["last_buffer_size"] = p && p->size() == 3 ? (*p)[0] : -1;
    ps["min_buffer_size"] = p && p->size() == 3 ? (*p)[1] : -1;
    ps["max_buffer_size"] = p && p->size() == 3 ? (*p)[2] : -1;
    j["proposal_stats"] = ps;
  }
  j["node_count"] = s.node_count;
  if (with_connections) {
    j["connections"] = connections(s, true);
    j["secure_connections"] = Json::array();
  }
}

// Environment.list, values as text (os.memory.* as "<n>MB").
void environment(Json& j, const ServerStatus& s) {
  const EnvironmentStatus& e = s.environment;
  j["zookeeper.version"] = s.version;
  j["host.name"] = e.host_name;
  // No JVM: ZooKeeper prints a missing property as <NA>.
  for (const char* key : {"java.version", "java.vendor", "java.home", "java.class.path",
                          "java.library.path", "java.io.tmpdir", "java.compiler"}) {
    j[key] = "<NA>";
  }
  j["os.name"] = e.os_name;
  j["os.arch"] = e.os_arch;
  j["os.version"] = e.os_version;
  j["user.name"] = e.user_name;
  j["user.home"] = e.user_home;
  j["user.dir"] = e.user_dir;
  j["os.memory.free"] = std::to_string(e.memory_free_mb) + "MB";
  j["os.memory.max"] = std::to_string(e.memory_max_mb) + "MB";
  j["os.memory.total"] = std::to_string(e.memory_total_mb) + "MB";
}

// There is no JVM: the properties that mean something for zkraft (the ones the JVM sets that
// describe the host, and the zookeeper.* properties ZooKeeper makes of zoo.cfg's admin and 4lw
// keys), sorted by name as SystemPropertiesCommand sorts them.
void system_properties(Json& j, const ServerStatus& s, const Config& c) {
  std::map<std::string, std::string> p;
  const EnvironmentStatus& e = s.environment;
  p["file.separator"] = "/";
  p["line.separator"] = "\n";
  p["path.separator"] = ":";
  p["os.arch"] = e.os_arch;
  p["os.name"] = e.os_name;
  p["os.version"] = e.os_version;
  p["user.dir"] = e.user_dir;
  p["user.home"] = e.user_home;
  p["user.name"] = e.user_name;
  p["zookeeper.admin.commandURL"] = c.admin_command_url;
  p["zookeeper.admin.enableServer"] = c.admin_enabled ? "true" : "false";
  p["zookeeper.admin.idleTimeout"] = std::to_string(c.admin_idle_timeout_ms);
  p["zookeeper.admin.serverAddress"] = c.admin_address;
  p["zookeeper.admin.serverPort"] = std::to_string(c.admin_port);
  std::string words;
  for (const auto& w : c.four_letter_words) words += (words.empty() ? "" : ",") + w;
  p["zookeeper.4lw.commands.whitelist"] = words;
  for (const auto& [k, v] : p) j[k] = v;
}

const PeerConfig* peer(const Config& c, int64_t id) {
  for (const auto& p : c.servers) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

std::string host_port(const std::string& host, int32_t port) {
  // QuorumServer.delimitedHostString: IPv6 in brackets.
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

std::string client_address(const PeerConfig& p) {
  if (p.client_port == 0) return "";
  return host_port(p.client_address.empty() ? "0.0.0.0" : p.client_address, p.client_port);
}

bool contains(const std::vector<uint64_t>& v, int64_t id) {
  return std::find(v.begin(), v.end(), static_cast<uint64_t>(id)) != v.end();
}

// VotingViewCommand: the voters in effect (the membership consensus reports), addresses from
// the configuration. ZooKeeper's election address is its second port; zkraft accepts and
// ignores it, and shows what the configuration says.
Json voting_view(const ServerStatus& s, const Config& c) {
  Json view = Json::object();
  if (c.standalone()) return view;
  for (uint64_t id : s.voters) {
    Json v;
    const PeerConfig* p = peer(c, static_cast<int64_t>(id));
    v["server_addresses"] = p ? Json::array({host_port(p->host, p->peer_port)}) : Json::array();
    v["election_addresses"] =
        p ? Json::array({host_port(p->host, p->election_port)}) : Json::array();
    v["client_address"] = p ? client_address(*p) : "";
    v["learner_type"] = "participant";
    view[std::to_string(id)] = v;
  }
  return view;
}

// ZabStateCommand. zkraft runs Raft: the Zab fields keep ZooKeeper's meaning where Raft has
// one (zab_epoch and zab_counter are the zxid's halves, and zkraft's zxid epoch is the Raft
// term of the entry), zabstate is "broadcast" with a known leader and "election" without, and
// `raft` adds what Raft has and Zab does not.
void zabstate(Json& j, const ServerStatus& s, const Config& c) {
  if (c.standalone()) {
    j["voting"] = false;
    j["zabstate"] = "";
    return;
  }
  const PeerConfig* me = peer(c, s.server_id);
  j["myid"] = s.server_id;
  j["is_leader"] = s.mode == "leader";
  j["quorum_address"] = me ? host_port(me->host, me->peer_port) : "";
  j["election_address"] = me ? host_port(me->host, me->election_port) : "";
  j["client_address"] = me ? client_address(*me) : "";
  j["voting"] = contains(s.voters, s.server_id);
  j["last_zxid"] = "0x" + hex(static_cast<uint64_t>(s.last_zxid));
  j["zab_epoch"] = static_cast<int64_t>(static_cast<uint64_t>(s.last_zxid) >> 32);
  j["zab_counter"] = static_cast<int64_t>(static_cast<uint64_t>(s.last_zxid) & 0xffffffffu);
  j["zabstate"] = s.leader_id != 0 ? "broadcast" : "election";
  Json raft;
  raft["term"] = s.raft_term;
  raft["commit_index"] = s.raft_commit_index;
  raft["leader_id"] = s.leader_id;
  raft["role"] = s.mode;
  raft["voters"] = s.voters;
  raft["learners"] = s.learners;
  j["raft"] = raft;
}

Json body(const AdminCommand& cmd, const ServerStatus& s, const AdminContext& ctx,
          const std::map<std::string, std::string>& params) {
  const Config& c = *ctx.config;
  const std::string_view name = cmd.primary();
  Json j = Json::object();
  if (name == "configuration") {
    // ZooKeeperServerConf.toMap
    j["client_port"] = c.client_port;
    j["data_dir"] = absolute(c.data_dir);
    j["data_log_dir"] = c.data_log_dir.empty() ? absolute(c.data_dir) : absolute(c.data_log_dir);
    j["tick_time"] = c.tick_time_ms;
    j["max_client_cnxns"] = c.max_client_cnxns;
    j["min_session_timeout"] = c.min_session_timeout();
    j["max_session_timeout"] = c.max_session_timeout();
    j["server_id"] = s.server_id;
    j["client_port_listen_backlog"] = -1;  // the OS default, as ZooKeeper's -1 means
  } else if (name == "connections") {
    j["connections"] = connections(s, false);
    j["secure_connections"] = Json::array();  // no TLS client port in zkraft
  } else if (name == "dirs") {
    j["datadir_size"] = s.data_dir_size;
    j["logdir_size"] = s.log_dir_size;
  } else if (name == "dump") {
    // Keys are the bucket deadlines: ZooKeeper's are on its elapsed-time clock, zkraft's are
    // wall-clock ms (both are numbers written as JSON object keys).
    Json expiry = Json::object();
    for (const auto& b : s.session_buckets) expiry[std::to_string(b.expire_at_ms)] = b.session_ids;
    Json eph = Json::object();
    for (const auto& [id, paths] : s.ephemerals_by_session) eph[std::to_string(id)] = paths;
    j["expiry_time_to_session_ids"] = expiry;
    j["session_id_to_ephemeral_paths"] = eph;
  } else if (name == "environment") {
    environment(j, s);
  } else if (name == "hash") {
    // DataTree.getDigestLog: ZxidDigest objects, the state machine's digest history (the same
    // pairs the hash four-letter word prints).
    Json list = Json::array();
    for (const auto& [zxid, digest] : s.digests) {
      list.push_back(Json{{"zxid", zxid}, {"digest_version", 2}, {"digest", digest}});
    }
    j["digests"] = list;
  } else if (name == "get_trace_mask") {
    j["tracemask"] = ctx.trace_mask ? *ctx.trace_mask : text_trace_mask();
  } else if (name == "initial_configuration") {
    j["initial_configuration"] = ctx.initial_configuration;
  } else if (name == "is_read_only") {
    j["read_only"] = s.read_only;
  } else if (name == "last_snapshot") {
    // zkraft's snapshots are kept by consensus, which does not report them here yet: the answer
    // ZooKeeper gives before it has any snapshot information.
    j["zxid"] = hex(static_cast<uint64_t>(-1));
    j["timestamp"] = -1;
  } else if (name == "leader") {
    if (c.standalone()) {
      j["error"] = "server is not initialized";
    } else {
      j["is_leader"] = s.mode == "leader";
      j["leader_id"] = s.leader_id != 0 ? s.leader_id : -1;
      const PeerConfig* p = s.leader_id != 0 ? peer(c, s.leader_id) : nullptr;
      j["leader_ip"] = p ? p->host : "";
    }
  } else if (name == "monitor") {
    for (const MonitorValue& v : monitor_values(s)) {
      std::visit([&](const auto& x) { j[v.key] = x; }, v.value);
    }
  } else if (name == "observers") {
    // Leader.getObservingLearnersInfo lists LearnerHandler details zkraft does not keep per
    // observer; the count is the one consensus reports.
    j["synced_observers"] = s.synced_observers;
    j["observers"] = Json::array();
  } else if (name == "server_stats") {
    srvr(j, s, false);
  } else if (name == "stats") {
    srvr(j, s, true);
  } else if (name == "set_trace_mask") {
    auto it = params.find("traceMask");
    if (it == params.end()) {
      j["error"] = "setTraceMask requires long traceMask argument";
    } else {
      int64_t mask = 0;
      const std::string& text = it->second;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), mask);
      if (ec != std::errc() || p != text.data() + text.size() || text.empty()) {
        j["error"] = "setTraceMask requires long traceMask argument, got " + text;
      } else {
        if (ctx.trace_mask) {
          *ctx.trace_mask = mask;
        } else {
          set_text_trace_mask(mask);
        }
        j["tracemask"] = mask;
      }
    }
  } else if (name == "system_properties") {
    system_properties(j, s, c);
  } else if (name == "voting_view") {
    j["current_config"] = voting_view(s, c);
  } else if (name == "watch_summary") {
    j["num_connections"] = s.watch_connections;
    j["num_paths"] = s.watch_paths;
    j["num_total_watches"] = s.watch_total;
  } else if (name == "watches") {
    Json m = Json::object();
    for (const auto& [id, paths] : s.watches_by_session) m[std::to_string(id)] = paths;
    j["session_id_to_watched_paths"] = m;
  } else if (name == "watches_by_path") {
    Json m = Json::object();
    for (const auto& [path, ids] : s.watches_by_path) m[path] = ids;
    j["path_to_session_ids"] = m;
  } else if (name == "zabstate") {
    zabstate(j, s, c);
  }
  // connection_stat_reset, observer_connection_stat_reset, ruok, stat_reset: no data.
  return j;
}

}  // namespace

std::string render_admin_command(const AdminCommand& cmd, const ServerStatus& status,
                                 const AdminContext& context,
                                 const std::map<std::string, std::string>& params) {
  Json data = body(cmd, status, context, params);
  // CommandResponse.toMap: the data, then "command", then "error" (null unless the data set it).
  // Znode paths and config text may hold bytes that are not UTF-8: written as U+FFFD, never
  // thrown (nlohmann's default), so any tree can be shown.
  Json out = data;
  out["command"] = std::string(cmd.primary());
  if (!out.contains("error")) out["error"] = nullptr;
  return out.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace zkraft::server
