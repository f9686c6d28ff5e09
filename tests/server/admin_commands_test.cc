// admin_commands: the AdminServer's answers without sockets. The command table against
// ZooKeeper 3.9.4's Commands.java (names, aliases), each command's JSON shape (keys, types,
// nesting, "command" and "error"), ZooKeeper's refusals (unknown command, not serving, auth
// missing, wrong method), the statistics resets asked of the state thread, and /health, /ready.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

#include "server/admin_commands.h"
#include "server/digest_auth.h"
#include "server/zk_state_machine.h"

namespace zkraft::server {
namespace {

using Json = nlohmann::json;

ServerStatus sample_status() {
  ServerStatus s;
  s.version = "3.9.4-zkraft-0.1.0, built on 12/01/2026 09:00 UTC";
  s.mode = "standalone";
  s.serving = true;
  s.avg_latency_ms = 1.5;
  s.max_latency_ms = 7;
  s.packets_received = 5;
  s.packets_sent = 4;
  s.num_alive_connections = 1;
  s.last_zxid = 3;
  s.node_count = 7;
  ConnectionStatus c;
  c.remote = "/127.0.0.1:40094";
  c.received = 5;
  c.sent = 4;
  c.session_id = 72058087411875840;
  c.last_op = "GETD";
  c.established_ms = 1796117167724;
  c.timeout_ms = 10000;
  c.last_cxid = 3;
  c.last_zxid = 3;
  s.connections.push_back(c);
  s.watch_connections = 1;
  s.watch_paths = 1;
  s.watch_total = 1;
  s.watches_by_session = {{72058087411875840, {"/a"}}};
  s.watches_by_path = {{"/a", {72058087411875840}}};
  s.ephemerals_by_session = {{72058087411875840, {"/e"}}};
  s.session_buckets = {SessionExpiryBucket{1796117170000, {72058087411875840}}};
  s.extra_metrics = {{"fsync_count", "3"}};
  s.server_id = 1;
  s.leader_id = 1;
  return s;
}

class AdminCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config.data_dir = "/tmp/zk-admin-test";
    context.config = &config;
    context.initial_configuration = "tickTime=500\n";
    context.trace_mask = &trace_mask;
    context.fetch_timeout_ms = 2000;
    context.fetch_status = [this](StatsReset reset) -> std::optional<ServerStatus> {
      resets.push_back(reset);
      if (!answering) return std::nullopt;
      return status;
    };
    context.authorize = [this](const std::vector<jute::Id>& ids) -> std::optional<bool> {
      authorized_ids = ids;
      if (!answering) return std::nullopt;
      return allow;
    };
    context.snapshot = []() -> std::optional<AdminSnapshot> {
      return AdminSnapshot{"SNAPSHOT-BYTES", 0x100000002};
    };
  }

  AdminReply get(const std::string& target, const std::string& method = "GET",
                 std::optional<std::string> auth = std::nullopt) {
    return handle_admin_request(AdminRequest{method, target, std::move(auth), "192.0.2.9", ""}, context);
  }
  Json json(const std::string& target) {
    AdminReply r = get(target);
    EXPECT_EQ(r.status, 200) << target;
    EXPECT_EQ(r.content_type, "application/json") << target;
    return Json::parse(r.body);
  }

  Config config;
  AdminContext context;
  ServerStatus status = sample_status();
  bool answering = true;
  int64_t trace_mask = 306;
  std::vector<StatsReset> resets;
  bool allow = true;
  std::vector<jute::Id> authorized_ids;
};

TEST(AdminCommandTable, HasZooKeeper394sCommandsAndAliases) {
  std::set<std::string_view> primaries, all;
  for (const AdminCommand& c : admin_commands()) {
    EXPECT_TRUE(primaries.insert(c.primary()).second) << c.primary();
    for (auto n : c.names) EXPECT_TRUE(all.insert(n).second) << n;
  }
  EXPECT_EQ(primaries,
            (std::set<std::string_view>{
                "configuration", "connection_stat_reset", "connections", "dirs", "dump",
                "environment", "get_trace_mask", "hash", "initial_configuration", "is_read_only",
                "last_snapshot", "leader", "monitor", "observer_connection_stat_reset",
                "observers", "restore", "ruok", "server_stats", "set_trace_mask", "snapshot",
                "stat_reset", "stats", "system_properties", "voting_view", "watch_summary",
                "watches", "watches_by_path", "zabstate"}));
  const std::map<std::string_view, std::string_view> aliases = {
      {"stat", "stats"},        {"srvr", "server_stats"}, {"mntr", "monitor"},
      {"cons", "connections"},  {"conf", "configuration"}, {"config", "configuration"},
      {"env", "environment"},   {"envi", "environment"},  {"crst", "connection_stat_reset"},
      {"srst", "stat_reset"},   {"gtmk", "get_trace_mask"}, {"stmk", "set_trace_mask"},
      {"isro", "is_read_only"}, {"icfg", "initial_configuration"}, {"lsnp", "last_snapshot"},
      {"lead", "leader"},       {"orst", "observer_connection_stat_reset"},
      {"obsr", "observers"},    {"sysp", "system_properties"}, {"wchc", "watches"},
      {"wchp", "watches_by_path"}, {"wchs", "watch_summary"}, {"snap", "snapshot"},
      {"rest", "restore"}};
  for (const auto& [alias, primary] : aliases) {
    const AdminCommand* c = find_admin_command(alias);
    ASSERT_NE(c, nullptr) << alias;
    EXPECT_EQ(c->primary(), primary) << alias;
  }
  EXPECT_EQ(find_admin_command("nosuch"), nullptr);
  EXPECT_TRUE(find_admin_command("snapshot")->needs_auth);
  EXPECT_TRUE(find_admin_command("restore")->post);
  EXPECT_FALSE(find_admin_command("monitor")->server_required);
  EXPECT_TRUE(find_admin_command("stats")->server_required);
}

TEST_F(AdminCommandsTest, CommandUrlListsThePrimaryNamesSortedAsLinks) {
  for (const char* target : {"/commands", "/commands/"}) {
    AdminReply r = get(target);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.content_type, "");  // Jetty sends the list without a Content-Type
    EXPECT_EQ(r.body.rfind("<a href=\"/commands/configuration\">configuration</a>\n<br/>\n"
                           "<a href=\"/commands/connection_stat_reset\">",
                           0),
              0u)
        << r.body;
    EXPECT_NE(r.body.find("<a href=\"/commands/zabstate\">zabstate</a>\n<br/>\n"), std::string::npos);
    EXPECT_EQ(r.body.find("\"/commands/stat\""), std::string::npos);  // aliases are not listed
  }
  EXPECT_TRUE(resets.empty());  // the list needs no status
}

TEST_F(AdminCommandsTest, TheCommandUrlIsConfigurable) {
  config.admin_command_url = "/zk";
  EXPECT_EQ(get("/commands/ruok").status, 404);
  EXPECT_NE(get("/zk").body.find("<a href=\"/zk/ruok\">ruok</a>"), std::string::npos);
  EXPECT_EQ(json("/zk/ruok")["command"], "ruok");
}

TEST_F(AdminCommandsTest, UnknownCommandIs200WithTheNameAsAskedAndAnError) {
  AdminReply r = get("/commands/nosuch");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Json::parse(r.body), (Json{{"command", "nosuch"}, {"error", "Unknown command: nosuch"}}));
  // 3.9.4 answers a POST of an unknown name the same way.
  EXPECT_EQ(Json::parse(get("/commands/nosuch", "POST").body)["error"], "Unknown command: nosuch");
}

TEST_F(AdminCommandsTest, AnAliasAnswersWithThePrimaryName) {
  Json j = json("/commands/stat");
  EXPECT_EQ(j["command"], "stats");
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_EQ(json("/commands/mntr")["command"], "monitor");
}

TEST_F(AdminCommandsTest, NotServingRefusesServerCommandsButNotTheOthers) {
  status.serving = false;
  AdminReply r = get("/commands/stat");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Json::parse(r.body),
            (Json{{"command", "stat"},
                  {"error", "This ZooKeeper instance is not currently serving requests"}}));
  Json m = json("/commands/monitor");  // MonitorCommand: serverRequired false
  EXPECT_TRUE(m["error"].is_null());
  EXPECT_EQ(m["server_state"], "standalone");
}

TEST_F(AdminCommandsTest, AStateThreadThatDoesNotAnswerIs503AndSaysSo) {
  answering = false;
  AdminReply r = get("/commands/stats");
  EXPECT_EQ(r.status, 503);
  Json j = Json::parse(r.body);
  EXPECT_EQ(j["command"], "stats");
  EXPECT_EQ(j["error"], "the server's state thread did not answer within 2000 ms");
  EXPECT_EQ(get("/health").status, 503);
  EXPECT_EQ(get("/ready").status, 503);
}

TEST_F(AdminCommandsTest, StatsHasZooKeepersShape) {
  Json j = json("/commands/stats");
  for (const char* k : {"version", "read_only", "server_stats", "client_response", "node_count",
                        "connections", "secure_connections", "command", "error"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j.size(), 9u);  // no proposal_stats: not a leader
  EXPECT_TRUE(j["read_only"].is_boolean());
  EXPECT_EQ(j["node_count"], 7);
  const Json& ss = j["server_stats"];
  EXPECT_EQ(ss.size(), 18u);  // ServerStats as ZooKeeper 3.8 writes it
  EXPECT_TRUE(ss["avg_latency"].is_number_float());
  EXPECT_TRUE(ss["max_latency"].is_number_integer());
  EXPECT_EQ(ss["server_state"], "standalone");
  EXPECT_EQ(ss["last_processed_zxid"], 3);
  EXPECT_EQ(ss["client_response_stats"],
            (Json{{"last_buffer_size", -1}, {"min_buffer_size", -1}, {"max_buffer_size", -1}}));
  // stats lists connections briefly (five fields), connections fully.
  ASSERT_EQ(j["connections"].size(), 1u);
  EXPECT_EQ(j["connections"][0],
            (Json{{"remote_socket_address", "127.0.0.1:40094"}, {"interest_ops", 1},
                  {"outstanding_requests", 0}, {"packets_received", 5}, {"packets_sent", 4}}));
  Json full = json("/commands/cons")["connections"][0];
  EXPECT_EQ(full.size(), 16u);
  EXPECT_EQ(full["session_id"], 72058087411875840);
  EXPECT_EQ(full["last_operation"], "GETD");
  EXPECT_EQ(full["established"], 1796117167724);

  Json srvr = json("/commands/srvr");
  EXPECT_EQ(srvr["command"], "server_stats");
  EXPECT_FALSE(srvr.contains("connections"));

  status.mode = "leader";
  status.proposal_sizes = std::vector<int64_t>{10, 5, 20};
  EXPECT_EQ(json("/commands/srvr")["proposal_stats"],
            (Json{{"last_buffer_size", 10}, {"min_buffer_size", 5}, {"max_buffer_size", 20}}));
}

TEST_F(AdminCommandsTest, ResetsAreAskedOfTheStateThread) {
  json("/commands/crst");
  json("/commands/stat_reset");
  json("/commands/ruok");
  EXPECT_EQ(resets, (std::vector<StatsReset>{StatsReset::kConnections, StatsReset::kServer,
                                             StatsReset::kNone}));
  EXPECT_EQ(json("/commands/connection_stat_reset"),
            (Json{{"command", "connection_stat_reset"}, {"error", nullptr}}));
}

TEST_F(AdminCommandsTest, TraceMaskIsSetAndRead) {
  EXPECT_EQ(json("/commands/gtmk")["tracemask"], 306);
  Json missing = json("/commands/stmk");
  EXPECT_EQ(missing, (Json{{"error", "setTraceMask requires long traceMask argument"},
                           {"command", "set_trace_mask"}}));
  EXPECT_EQ(json("/commands/stmk?traceMask=abc")["error"],
            "setTraceMask requires long traceMask argument, got abc");
  Json set = json("/commands/set_trace_mask?traceMask=%31%32&traceMask=99");
  EXPECT_EQ(set["tracemask"], 12);  // decoded, and the first value wins
  EXPECT_EQ(json("/commands/get_trace_mask")["tracemask"], 12);
}

TEST_F(AdminCommandsTest, WatchesAndDumpAreKeyedByIdAsText) {
  EXPECT_EQ(json("/commands/wchc")["session_id_to_watched_paths"],
            (Json{{"72058087411875840", {"/a"}}}));
  EXPECT_EQ(json("/commands/wchp")["path_to_session_ids"], (Json{{"/a", {72058087411875840}}}));
  Json wchs = json("/commands/wchs");
  EXPECT_EQ(wchs["num_connections"], 1);
  EXPECT_EQ(wchs["num_paths"], 1);
  EXPECT_EQ(wchs["num_total_watches"], 1);
  Json dump = json("/commands/dump");
  EXPECT_EQ(dump["expiry_time_to_session_ids"], (Json{{"1796117170000", {72058087411875840}}}));
  EXPECT_EQ(dump["session_id_to_ephemeral_paths"], (Json{{"72058087411875840", {"/e"}}}));
}

TEST_F(AdminCommandsTest, PathsThatAreNotUtf8AreShownNotThrown) {
  status.watches_by_path = {{std::string("/bad\xff\xfe"), {1}}};
  Json j = json("/commands/wchp");
  EXPECT_EQ(j["path_to_session_ids"].begin().key(), "/bad\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(AdminCommandsTest, MonitorIsMntrWithoutThePrefixAndTyped) {
  Json m = json("/commands/monitor");
  EXPECT_EQ(m["version"], status.version);
  EXPECT_TRUE(m["avg_latency"].is_number_float());
  EXPECT_EQ(m["znode_count"], 7);
  EXPECT_EQ(m["fsync_count"], 3);  // an extra figure, as an integer
  EXPECT_FALSE(m.contains("zk_version"));
}

TEST_F(AdminCommandsTest, StandaloneLeaderAndZabstateAreZooKeepersStandaloneAnswers) {
  Json leader = json("/commands/leader");
  EXPECT_EQ(leader, (Json{{"error", "server is not initialized"}, {"command", "leader"}}));
  EXPECT_EQ(json("/commands/zabstate"),
            (Json{{"voting", false}, {"zabstate", ""}, {"command", "zabstate"}, {"error", nullptr}}));
  EXPECT_EQ(json("/commands/voting_view")["current_config"], Json::object());
}

TEST_F(AdminCommandsTest, EnsembleLeaderZabstateAndVotingViewShowRaft) {
  config.server_id = 2;
  config.servers = {PeerConfig{1, "192.0.2.1", 2888, 3888, PeerRole::kParticipant, "192.0.2.1", 2181},
                    PeerConfig{2, "192.0.2.2", 2888, 3888, PeerRole::kParticipant, "", 2181}};
  status.mode = "follower";
  status.server_id = 2;
  status.leader_id = 1;
  status.raft_term = 4;
  status.last_zxid = (int64_t{4} << 32) | 9;
  status.voters = {1, 2};
  Json leader = json("/commands/leader");
  EXPECT_EQ(leader, (Json{{"is_leader", false}, {"leader_id", 1}, {"leader_ip", "192.0.2.1"},
                          {"command", "leader"}, {"error", nullptr}}));
  Json z = json("/commands/zabstate");
  EXPECT_EQ(z["myid"], 2);
  EXPECT_EQ(z["quorum_address"], "192.0.2.2:2888");
  EXPECT_EQ(z["election_address"], "192.0.2.2:3888");
  EXPECT_EQ(z["client_address"], "0.0.0.0:2181");
  EXPECT_EQ(z["voting"], true);
  EXPECT_EQ(z["last_zxid"], "0x400000009");
  EXPECT_EQ(z["zab_epoch"], 4);
  EXPECT_EQ(z["zab_counter"], 9);
  EXPECT_EQ(z["zabstate"], "broadcast");
  EXPECT_EQ(z["raft"]["term"], 4);
  Json view = json("/commands/voting_view")["current_config"];
  ASSERT_EQ(view.size(), 2u);
  EXPECT_EQ(view["1"], (Json{{"server_addresses", {"192.0.2.1:2888"}},
                             {"election_addresses", {"192.0.2.1:3888"}},
                             {"client_address", "192.0.2.1:2181"},
                             {"learner_type", "participant"}}));
  status.leader_id = 0;
  EXPECT_EQ(json("/commands/zabstate")["zabstate"], "election");
  EXPECT_EQ(json("/commands/leader")["leader_id"], -1);
}

TEST_F(AdminCommandsTest, TheOtherReadOnlyCommandsHaveZooKeepersKeys) {
  const std::map<std::string, std::set<std::string>> keys = {
      {"configuration", {"client_port", "data_dir", "data_log_dir", "tick_time", "max_client_cnxns",
                         "min_session_timeout", "max_session_timeout", "server_id",
                         "client_port_listen_backlog"}},
      {"dirs", {"datadir_size", "logdir_size"}},
      {"hash", {"digests"}},
      {"initial_configuration", {"initial_configuration"}},
      {"is_read_only", {"read_only"}},
      {"last_snapshot", {"zxid", "timestamp"}},
      {"observers", {"synced_observers", "observers"}},
      {"ruok", {}},
      {"observer_connection_stat_reset", {}},
  };
  for (const auto& [name, expected] : keys) {
    Json j = json("/commands/" + name);
    std::set<std::string> got;
    for (auto it = j.begin(); it != j.end(); ++it) got.insert(it.key());
    std::set<std::string> want = expected;
    want.insert("command");
    want.insert("error");
    EXPECT_EQ(got, want) << name;
  }
  EXPECT_EQ(json("/commands/icfg")["initial_configuration"], "tickTime=500\n");
  EXPECT_EQ(json("/commands/conf")["data_dir"], "/tmp/zk-admin-test");
  EXPECT_EQ(json("/commands/lsnp")["zxid"], "ffffffffffffffff");
  Json env = json("/commands/envi");
  EXPECT_EQ(env["zookeeper.version"], status.version);
  EXPECT_EQ(env["java.version"], "<NA>");
  Json sysp = json("/commands/sysp");
  EXPECT_EQ(sysp["zookeeper.admin.commandURL"], "/commands");
}

TEST_F(AdminCommandsTest, WrongMethodsAreAnsweredAsZooKeeperDoes) {
  EXPECT_EQ(get("/commands/ruok", "POST").status, 405);
  EXPECT_EQ(get("/commands/ruok", "PUT").status, 405);
  EXPECT_EQ(get("/commands/ruok", "DELETE").status, 405);
  EXPECT_EQ(get("/commands/ruok", "TRACE").status, 403);
  AdminReply head = get("/commands/ruok", "HEAD");  // the caller drops the body
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.content_type, "application/json");
  EXPECT_EQ(get("/", "GET").status, 404);
  EXPECT_EQ(get("/commandsX", "GET").status, 404);
  EXPECT_EQ(get("/health", "POST").status, 405);
}

TEST_F(AdminCommandsTest, SnapshotAndRestoreAreRefusedWithoutCredentials) {
  AdminReply r = get("/commands/snapshot");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Json::parse(r.body),
            (Json{{"command", "snapshot"}, {"error", "Auth info is missing for the command"}}));
  EXPECT_EQ(get("/commands/restore", "POST").status, 401);
  // Credentials that name no identity (Commands.handleAuthentication).
  for (const char* bad : {"digest", "sasl bob", "digest a b", ""}) {
    AdminReply n = get("/commands/snap", "GET", bad);
    EXPECT_EQ(n.status, 401) << bad;
    EXPECT_EQ(Json::parse(n.body), (Json{{"command", "snap"}, {"error", "Not authenticated"}})) << bad;
  }
  EXPECT_TRUE(authorized_ids.empty());  // none of them reached the ACL check
  // An identity without ALL on "/".
  allow = false;
  AdminReply denied = get("/commands/snapshot", "GET", "digest bob:secret");
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(Json::parse(denied.body)["error"], "Not authorized");
  EXPECT_EQ(authorized_ids, (std::vector<jute::Id>{{"digest", digest_id("bob:secret")}}));
  EXPECT_EQ(get("/commands/restore", "POST", "digest bob:secret").status, 403);
  // The state thread does not answer: said so, nothing taken.
  answering = false;
  EXPECT_EQ(get("/commands/snapshot", "GET", "digest bob:secret").status, 503);
}

TEST_F(AdminCommandsTest, SnapshotWithCredentialsStreamsTheStateWithItsZxid) {
  AdminReply r = get("/commands/snapshot", "GET", "digest bob:secret");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/octet-stream");
  EXPECT_EQ(r.body, "SNAPSHOT-BYTES");
  using Headers = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(r.headers, (Headers{{"last_zxid", "0x100000002"}, {"snapshot_size", "14"}}));
  AdminReply meta = get("/commands/snapshot?streaming=FALSE", "GET", "ip");
  EXPECT_EQ(authorized_ids, (std::vector<jute::Id>{{"ip", "192.0.2.9"}}));
  EXPECT_EQ(meta.status, 200);
  EXPECT_EQ(Json::parse(meta.body), (Json{{"command", "snapshot"}, {"error", nullptr}}));
  EXPECT_EQ(meta.headers, (Headers{{"last_zxid", "0x100000002"}, {"snapshot_size", "14"}}));
  // Restore is not offered: ZooKeeper's answer with it switched off.
  AdminReply restore = get("/commands/restore", "POST", "digest bob:secret");
  EXPECT_EQ(restore.status, 503);
  EXPECT_EQ(Json::parse(restore.body), (Json{{"command", "restore"}, {"error", nullptr}}));
  EXPECT_EQ(get("/commands/restore", "GET", "digest bob:secret").status, 405);
}

TEST_F(AdminCommandsTest, SnapshotsAreRateLimitedAsZooKeepersAre) {
  int64_t now = 1000, last = -1;
  context.monotonic_ms = [&now] { return now; };
  context.last_snapshot_ms = &last;
  EXPECT_EQ(get("/commands/snapshot", "GET", "digest bob:pw").status, 200);
  now += kSnapshotIntervalMs - 1;
  AdminReply limited = get("/commands/snapshot", "GET", "digest bob:pw");
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(Json::parse(limited.body), (Json{{"command", "snapshot"}, {"error", nullptr}}));
  now += 1;
  EXPECT_EQ(get("/commands/snapshot", "GET", "digest bob:pw").status, 200);
  EXPECT_EQ(get("/commands/snapshot", "GET", "sasl x").status, 401);  // refused before the limit
  now += kSnapshotIntervalMs;
  EXPECT_EQ(get("/commands/snapshot", "GET", "digest bob:pw").status, 200);
}

TEST_F(AdminCommandsTest, RestoreChecksItsInputIsRateLimitedAndAnswersWithTheZxid) {
  int64_t now = 1000, last = -1;
  context.monotonic_ms = [&now] { return now; };
  context.last_restore_ms = &last;
  std::vector<std::string> proposed;
  std::optional<AdminRestore> outcome = AdminRestore{42, ""};
  context.restore = [&](std::string state) {
    proposed.push_back(std::move(state));
    return outcome;
  };
  auto post = [&](std::string body, std::optional<std::string> auth = "digest bob:pw") {
    return handle_admin_request(AdminRequest{"POST", "/commands/restore", std::move(auth),
                                             "192.0.2.9", std::move(body)},
                                context);
  };
  ZkStateMachine sm;
  const std::string state = sm.serialize();
  EXPECT_EQ(post(state, std::nullopt).status, 401);
  EXPECT_EQ(post("").status, 400);  // nothing to restore; the limit is not used up
  AdminReply bad = post("not a state");
  EXPECT_EQ(bad.status, 500);  // as ZooKeeper answers a stream that does not deserialise
  EXPECT_EQ(Json::parse(bad.body)["command"], "restore");
  EXPECT_TRUE(proposed.empty());
  now += kRestoreIntervalMs - 1;
  EXPECT_EQ(post(state).status, 429);  // one per five minutes, as RestoreCommand's RateLimiter
  now += 1;
  AdminReply ok = post(state);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(Json::parse(ok.body), (Json{{"command", "restore"}, {"error", nullptr}, {"last_zxid", 42}}));
  EXPECT_EQ(proposed, std::vector<std::string>{state});
  // The pipeline's refusal (a follower names the leader) and a restore that did not apply in time.
  now += kRestoreIntervalMs;
  outcome = AdminRestore{0, "send it to the leader (server 3)"};
  AdminReply follower = post(state);
  EXPECT_EQ(follower.status, 503);
  EXPECT_EQ(Json::parse(follower.body)["error"], "send it to the leader (server 3)");
  now += kRestoreIntervalMs;
  outcome = std::nullopt;
  EXPECT_EQ(post(state).status, 503);
}

TEST(AdminAuth, DigestIpAndSuperAsZooKeepersProviders) {
  using Ids = std::vector<jute::Id>;
  EXPECT_EQ(admin_auth_ids("digest bob:pw", "1.2.3.4", ""), (Ids{{"digest", digest_id("bob:pw")}}));
  const std::string super = digest_id("super:pw");
  EXPECT_EQ(admin_auth_ids("digest super:pw", "1.2.3.4", super),
            (Ids{{"super", ""}, {"digest", super}}));
  EXPECT_EQ(admin_auth_ids("ip", "1.2.3.4", ""), (Ids{{"ip", "1.2.3.4"}}));
  EXPECT_EQ(admin_auth_ids("digest bob:pw ", "1.2.3.4", ""),  // split drops the trailing empty part
            (Ids{{"digest", digest_id("bob:pw")}}));
  EXPECT_EQ(admin_auth_ids("digest", "1.2.3.4", ""), std::nullopt);
  EXPECT_EQ(admin_auth_ids("x509 cn", "1.2.3.4", ""), std::nullopt);
  EXPECT_EQ(admin_auth_ids("digest  bob:pw", "1.2.3.4", ""), std::nullopt);  // three parts
}

TEST_F(AdminCommandsTest, HealthAndReady) {
  AdminReply h = get("/health");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "ok: serving as standalone\n");
  EXPECT_EQ(get("/ready").status, 200);

  status.mode = "follower";
  status.leader_id = 3;
  status.raft_term = 7;
  EXPECT_EQ(get("/health").body, "ok: serving as follower, leader 3, term 7\n");

  status.serving = false;
  h = get("/health");
  EXPECT_EQ(h.status, 503);
  EXPECT_EQ(h.body, "no leader known: not in a quorum, not serving clients\n");
  EXPECT_EQ(get("/ready").status, 503);

  status.serving = true;
  status.read_only = true;
  EXPECT_EQ(get("/health").status, 503);  // not in a quorum
  EXPECT_EQ(get("/ready").status, 200);   // but serving (read-only) clients
}

TEST(AdminUrlDecode, DecodesEscapesAndKeepsInvalidOnes) {
  EXPECT_EQ(url_decode("/commands/%73tat"), "/commands/stat");
  EXPECT_EQ(url_decode("100%"), "100%");
  EXPECT_EQ(url_decode("%zz%4"), "%zz%4");
  EXPECT_EQ(url_decode("a+b"), "a+b");
}

}  // namespace
}  // namespace zkraft::server
