#include "server/four_letter_words.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "jute/frame.h"

namespace zkraft::server {

namespace {

constexpr std::string_view kNotServing = "This ZooKeeper instance is not currently serving requests";

// Long.toHexString: two's complement, no leading zeros.
std::string hex(int64_t v) {
  char buf[17];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<uint64_t>(v), 16);
  return std::string(buf, p);
}

std::string str(int64_t v) { return std::to_string(v); }

void line(std::string& out, std::string_view text) {
  out.append(text);
  out.push_back('\n');
}

// ServerCnxn.dumpConnectionInfo
void connection_info(std::string& out, const ConnectionStatus& c, bool brief) {
  out += " " + c.remote + "[" + (c.interest_ops == 0 ? std::string("0") : hex(c.interest_ops)) +
         "](queued=" + str(c.queued) + ",recved=" + str(c.received) + ",sent=" + str(c.sent);
  if (!brief && c.session_id != 0) {
    out += ",sid=0x" + hex(c.session_id) + ",lop=" + c.last_op + ",est=" + str(c.established_ms) +
           ",to=" + str(c.timeout_ms);
    if (c.last_cxid >= 0) out += ",lcxid=0x" + hex(c.last_cxid);
    out += ",lzxid=0x" + hex(c.last_zxid) + ",lresp=" + str(c.last_response_ms) +
           ",llat=" + str(c.last_latency_ms) + ",minlat=" + str(c.min_latency_ms) +
           ",avglat=" + str(c.avg_latency_ms) + ",maxlat=" + str(c.max_latency_ms);
  }
  out += ")";
}

// StatCommand for srvr (with_clients=false) and stat.
std::string render_stat(const ServerStatus& s, bool with_clients) {
  std::string out;
  line(out, "Zookeeper version: " + s.version);
  if (s.read_only) line(out, "READ-ONLY mode; serving only read-only clients");
  if (with_clients) {
    line(out, "Clients:");
    for (const auto& c : s.connections) {
      connection_info(out, c, true);
      out += "\n";
    }
    out += "\n";
  }
  // ServerStats.toString
  line(out, "Latency min/avg/max: " + str(s.min_latency_ms) + "/" + java_double(s.avg_latency_ms) +
                "/" + str(s.max_latency_ms));
  line(out, "Received: " + str(s.packets_received));
  line(out, "Sent: " + str(s.packets_sent));
  line(out, "Connections: " + str(s.num_alive_connections));
  line(out, "Outstanding: " + str(s.outstanding_requests));
  line(out, "Zxid: 0x" + hex(s.last_zxid));
  line(out, "Mode: " + s.mode);
  line(out, "Node count: " + str(s.node_count));
  if (s.mode == "leader" && s.proposal_sizes && s.proposal_sizes->size() == 3) {
    const auto& p = *s.proposal_sizes;
    line(out, "Proposal sizes last/min/max: " + str(p[0]) + "/" + str(p[1]) + "/" + str(p[2]));
  }
  return out;
}

std::string absolute(const std::string& dir) {
  if (dir.empty()) return dir;
  std::error_code ec;
  auto p = std::filesystem::absolute(dir, ec);
  return ec ? dir : p.lexically_normal().string();
}

// ZooKeeperServer.dumpConf, plus QuorumZooKeeperServer.dumpConf in an ensemble.
std::string render_conf(const ServerStatus& s, const Config& c) {
  std::string out;
  const std::string data_dir = absolute(c.data_dir);
  const std::string log_dir = c.data_log_dir.empty() ? data_dir : absolute(c.data_log_dir);
  line(out, "clientPort=" + str(c.client_port));
  line(out, "secureClientPort=-1");
  line(out, "dataDir=" + data_dir);
  line(out, "dataDirSize=" + str(s.data_dir_size));
  line(out, "dataLogDir=" + log_dir);
  line(out, "dataLogSize=" + str(s.log_dir_size));
  line(out, "tickTime=" + str(c.tick_time_ms));
  line(out, "maxClientCnxns=" + str(c.max_client_cnxns));
  line(out, "minSessionTimeout=" + str(c.min_session_timeout()));
  line(out, "maxSessionTimeout=" + str(c.max_session_timeout()));
  line(out, "clientPortListenBacklog=-1");
  line(out, "serverId=" + str(c.server_id));
  if (!c.standalone()) {
    const PeerConfig* me = c.self();
    line(out, "initLimit=" + str(c.init_limit));
    line(out, "syncLimit=" + str(c.sync_limit));
    line(out, "electionAlg=3");
    line(out, "electionPort=" + str(me ? me->election_port : 0));
    line(out, "quorumPort=" + str(me ? me->peer_port : 0));
    line(out, "peerType=" + str(me && me->role == PeerRole::kObserver ? 1 : 0));
    line(out, "membership: ");
    // QuorumMaj.toString: server.N lines, then version=<hex> with no newline.
    for (const auto& p : c.servers) {
      std::string host = p.host.find(':') != std::string::npos ? "[" + p.host + "]" : p.host;
      out += "server." + str(p.id) + "=" + host + ":" + str(p.peer_port) + ":" +
             str(p.election_port) + (p.role == PeerRole::kObserver ? ":observer" : ":participant");
      if (p.client_port != 0) {
        std::string addr = p.client_address.empty() ? "0.0.0.0" : p.client_address;
        if (addr.find(':') != std::string::npos) addr = "[" + addr + "]";
        out += ";" + addr + ":" + str(p.client_port);
      }
      out += "\n";
    }
    out += "version=0";
  }
  return out;
}

// Environment.list
std::string render_envi(const ServerStatus& s) {
  const EnvironmentStatus& e = s.environment;
  std::string out;
  line(out, "Environment:");
  line(out, "zookeeper.version=" + s.version);
  line(out, "host.name=" + e.host_name);
  for (const char* key : {"java.version", "java.vendor", "java.home", "java.class.path",
                          "java.library.path", "java.io.tmpdir", "java.compiler"}) {
    line(out, std::string(key) + "=<NA>");
  }
  line(out, "os.name=" + e.os_name);
  line(out, "os.arch=" + e.os_arch);
  line(out, "os.version=" + e.os_version);
  line(out, "user.name=" + e.user_name);
  line(out, "user.home=" + e.user_home);
  line(out, "user.dir=" + e.user_dir);
  line(out, "os.memory.free=" + str(e.memory_free_mb) + "MB");
  line(out, "os.memory.max=" + str(e.memory_max_mb) + "MB");
  line(out, "os.memory.total=" + str(e.memory_total_mb) + "MB");
  return out;
}

// mntr: monitor_values, one "zk_<key>\t<value>" line each.
std::string render_mntr(const ServerStatus& s) {
  std::string out;
  for (const MonitorValue& v : monitor_values(s)) {
    out += "zk_" + v.key + "\t";
    if (const auto* i = std::get_if<int64_t>(&v.value)) {
      out += str(*i);
    } else if (const auto* d = std::get_if<double>(&v.value)) {
      out += java_double(*d);
    } else {
      out += std::get<std::string>(v.value);
    }
    out += "\n";
  }
  return out;
}

// DumpCommand: SessionTracker dump, ephemerals, connections.
std::string render_dump(const ServerStatus& s) {
  std::string out;
  line(out, "SessionTracker dump:");
  line(out, "Session Sets (" + str(static_cast<int64_t>(s.session_buckets.size())) + ")/(" +
                str(s.tracked_sessions) + "):");
  for (const auto& b : s.session_buckets) {
    line(out, str(static_cast<int64_t>(b.session_ids.size())) + " expire at " +
                  java_date_utc(b.expire_at_ms) + ":");
    for (int64_t id : b.session_ids) line(out, "\t0x" + hex(id));
  }
  line(out, "ephemeral nodes dump:");
  line(out, "Sessions with Ephemerals (" +
                str(static_cast<int64_t>(s.ephemerals_by_session.size())) + "):");
  for (const auto& [id, paths] : s.ephemerals_by_session) {
    line(out, "0x" + hex(id) + ":");
    for (const auto& p : paths) line(out, "\t" + p);
  }
  line(out, "Connections dump:");
  line(out, "Connections Sets (" + str(static_cast<int64_t>(s.connection_buckets.size())) + ")/(" +
                str(s.tracked_connections) + "):");
  for (const auto& b : s.connection_buckets) {
    line(out, str(static_cast<int64_t>(b.connections.size())) + " expire at " +
                  java_date_utc(b.expire_at_ms) + ":");
    for (const auto& [remote, sid] : b.connections) {
      line(out, "\tip: " + remote + " sessionId: 0x" + hex(sid));
    }
  }
  return out;
}

// ClickHouse Keeper's lgif: one "name<TAB>value" line per figure of the Raft log.
std::string render_lgif(const ServerStatus& s) {
  std::string out;
  auto kv = [&out](const char* k, uint64_t v) { out += std::string(k) + "\t" + std::to_string(v) + "\n"; };
  kv("first_log_idx", s.log.first_index);
  kv("first_log_term", s.log.first_term);
  kv("last_log_idx", s.log.last_index);
  kv("last_log_term", s.log.last_term);
  kv("last_committed_log_idx", s.log.applied_index);
  kv("leader_committed_log_idx", s.log.commit_index);
  kv("target_committed_log_idx", s.log.commit_index);
  kv("last_snapshot_idx", s.log.snapshot_index);
  return out;
}

}  // namespace

// MonitorCommand: version and state first, then the gauges of ZooKeeperServer.registerMetrics
// (in a fixed order; ZooKeeper's order is a hash map's and not stable).
std::vector<MonitorValue> monitor_values(const ServerStatus& s) {
  std::vector<MonitorValue> out;
  auto kv = [&out](std::string key, MonitorValue::Value value) {
    out.push_back(MonitorValue{std::move(key), std::move(value)});
  };
  kv("version", s.version);
  kv("server_state", s.mode);
  kv("uptime", s.uptime_ms);
  kv("avg_latency", s.avg_latency_ms);
  kv("max_latency", s.max_latency_ms);
  kv("min_latency", s.min_latency_ms);
  kv("packets_received", s.packets_received);
  kv("packets_sent", s.packets_sent);
  kv("num_alive_connections", s.num_alive_connections);
  kv("outstanding_requests", s.outstanding_requests);
  kv("znode_count", s.node_count);
  kv("watch_count", s.watch_count);
  kv("ephemerals_count", s.ephemerals_count);
  kv("approximate_data_size", s.approximate_data_size);
  kv("global_sessions", s.global_sessions);
  kv("local_sessions", s.local_sessions);
  kv("open_file_descriptor_count", s.open_file_descriptor_count);
  kv("max_file_descriptor_count", s.max_file_descriptor_count);
  kv("connection_drop_probability", 0.0);
  kv("last_client_response_size", s.last_client_response_size);
  kv("max_client_response_size", s.max_client_response_size);
  kv("min_client_response_size", s.min_client_response_size);
  kv("outstanding_tls_handshake", s.outstanding_tls_handshake);
  kv("auth_failed_count", s.auth_failed_count);
  kv("non_mtls_remote_conn_count", int64_t{0});
  kv("non_mtls_local_conn_count", int64_t{0});
  // The extra figures are integers in text; kept as text if one is not.
  for (const auto& [key, value] : s.extra_metrics) {
    int64_t n = 0;
    const char* end = value.data() + value.size();
    auto [p, ec] = std::from_chars(value.data(), end, n);
    if (ec == std::errc() && p == end && !value.empty()) {
      kv(key, n);
    } else {
      kv(key, value);
    }
  }
  return out;
}

bool is_four_letter_word(std::string_view cmd) {
  // The words only: the telnet close sequence jute also accepts gets no answer.
  for (std::string_view w : jute::kFourLetterWords) {
    if (w == cmd) return true;
  }
  return is_raft_four_letter_word(cmd);
}

bool is_raft_four_letter_word(std::string_view cmd) {
  for (std::string_view w : jute::kRaftFourLetterWords) {
    if (w == cmd) return true;
  }
  return false;
}

bool is_whitelisted(std::string_view cmd, const Config& config) {
  if (cmd == "srvr") return true;
  // FourLetterCommands.isEnabled: read-only mode whitelists isro (clients ask it to find a
  // read/write server).
  if (cmd == "isro" && config.read_only_mode) return true;
  if (config.four_letter_words.count("*") != 0) return is_four_letter_word(cmd);
  return config.four_letter_words.count(std::string(cmd)) != 0;
}

std::string not_whitelisted_text(std::string_view cmd) {
  return std::string(cmd) + " is not executed because it is not in the whitelist.\n";
}

std::string render_four_letter_word(std::string_view cmd, const ServerStatus& s,
                                    const Config& config) {
  if (!is_four_letter_word(cmd)) return "";
  if (!is_whitelisted(cmd, config)) return not_whitelisted_text(cmd);

  // Words that answer whether or not the server is serving.
  if (cmd == "ruok") return "imok";
  if (cmd == "envi") return render_envi(s);
  if (cmd == "gtmk" || cmd == "stmk") return str(s.trace_mask);
  if (cmd == "isro") return !s.serving ? "null" : s.read_only ? "ro" : "rw";
  if (cmd == "lgif") return render_lgif(s);
  if (!s.serving) {
    // DigestCommand alone prints it without a newline.
    return cmd == "hash" ? std::string(kNotServing) : std::string(kNotServing) + "\n";
  }

  if (cmd == "srvr") return render_stat(s, false);
  if (cmd == "stat") return render_stat(s, true);
  if (cmd == "conf") return render_conf(s, config);
  if (cmd == "mntr") return render_mntr(s);
  if (cmd == "dump") return render_dump(s);
  if (cmd == "crst") return "Connection stats reset.\n";
  if (cmd == "srst") return "Server stats reset.\n";
  if (cmd == "dirs") {
    return "datadir_size: " + str(s.data_dir_size) + "\nlogdir_size: " + str(s.log_dir_size) + "\n";
  }
  if (cmd == "cons") {
    std::string out;
    for (const auto& c : s.connections) {
      connection_info(out, c, false);
      out += "\n";
    }
    return out + "\n";
  }
  if (cmd == "wchs") {
    return str(s.watch_connections) + " connections watching " + str(s.watch_paths) +
           " paths\nTotal watches:" + str(s.watch_total) + "\n";
  }
  if (cmd == "wchc") {
    std::string out;
    for (const auto& [sid, paths] : s.watches_by_session) {
      line(out, "0x" + hex(sid));
      for (const auto& p : paths) line(out, "\t" + p);
    }
    return out + "\n";
  }
  if (cmd == "wchp") {
    std::string out;
    for (const auto& [path, sids] : s.watches_by_path) {
      line(out, path);
      for (int64_t sid : sids) line(out, "\t0x" + hex(sid));
    }
    return out + "\n";
  }
  if (cmd == "hash") {
    std::string out;
    for (const auto& [zxid, digest] : s.digests) line(out, hex(zxid) + ": " + str(digest));
    return out;
  }
  return "";
}

std::string java_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits and the decimal exponent: "d.ddde[+-]xx".
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, end);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits.push_back(sci[i]);
  }
  const int exp = std::stoi(sci.substr(e + 1));
  const double mag = std::fabs(v);
  if (mag >= 1e-3 && mag < 1e7) {
    std::string out;
    if (exp >= 0) {
      // Integer part: the first exp+1 digits, padded with zeros.
      std::string int_part = digits.substr(0, std::min(digits.size(), static_cast<size_t>(exp) + 1));
      while (int_part.size() < static_cast<size_t>(exp) + 1) int_part.push_back('0');
      std::string frac = digits.size() > static_cast<size_t>(exp) + 1 ? digits.substr(exp + 1) : "0";
      out = int_part + "." + frac;
    } else {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
    return sign + out;
  }
  // Computerized scientific notation: d.dddE-n, at least one fractional digit.
  std::string frac = digits.size() > 1 ? digits.substr(1) : "0";
  return sign + digits.substr(0, 1) + "." + frac + "E" + std::to_string(exp);
}

std::string java_date_utc(int64_t epoch_ms) {
  std::time_t t = static_cast<std::time_t>(epoch_ms / 1000);
  if (epoch_ms < 0 && epoch_ms % 1000 != 0) --t;  // floor, like java.util.Date
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S UTC %Y", &tm);
  return buf;
}

}  // namespace zkraft::server
