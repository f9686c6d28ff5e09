// dashboard: the routes in front of the AdminServer's (the page, its script and styles, the
// status.json it polls), that ZooKeeper's paths still reach handle_admin_request, that the
// embedded bytes are the files in server/dashboard/ and ask nothing of any other origin, and
// status.json's members, roles and lag on a leader, a follower, a learner and a standalone server.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "server/dashboard.h"

namespace zkraft::server {
namespace {

using Json = nlohmann::json;

std::string source_file(const std::string& name) {
  std::ifstream in(std::string(ZKRAFT_SOURCE_DIR) + "/server/dashboard/" + name, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A leader (1) of voters 1..3 and a learner 4; last index 100.
ServerStatus leader_status() {
  ServerStatus s;
  s.mode = "leader";
  s.serving = true;
  s.server_id = 1;
  s.leader_id = 1;
  s.raft_term = 7;
  s.log.last_index = 100;
  s.log.commit_index = 99;
  s.log.applied_index = 98;
  s.voters = {1, 2, 3};
  s.learners = {4};
  s.peers = {{3, 60, false, false}, {2, 100, false, true}, {4, 97, true, true}};
  s.global_sessions = 5;
  s.node_count = 42;
  s.watch_count = 9;
  s.packets_received = 1000;
  s.packets_sent = 990;
  s.avg_latency_ms = 1.25;
  s.latency_sum_ms = 125;
  s.latency_count = 100;
  s.fsync_count = 50;
  s.fsync_micros_total = 25000;
  s.fsync_micros_max = 3000;
  s.fsync_threshold_exceed_count = 1;
  return s;
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context.config = &config;
    context.fetch_timeout_ms = 2000;
    context.fetch_status = [this](StatsReset reset) -> std::optional<ServerStatus> {
      resets.push_back(reset);
      if (!answering) return std::nullopt;
      return status;
    };
  }
  AdminReply get(const std::string& target, const std::string& method = "GET") {
    return handle_admin_port_request(AdminRequest{method, target, std::nullopt, "192.0.2.9", ""}, context);
  }

  Config config;
  AdminContext context;
  ServerStatus status = leader_status();
  bool answering = true;
  std::vector<StatsReset> resets;
};

TEST_F(DashboardTest, ThePageScriptAndStylesAreTheEmbeddedFiles) {
  const struct {
    std::string target, file, type;
  } assets[] = {{"/", "index.html", "text/html; charset=utf-8"},
                {"/dashboard/", "index.html", "text/html; charset=utf-8"},
                {"/dashboard", "index.html", "text/html; charset=utf-8"},
                {"/dashboard/dashboard.js", "dashboard.js", "text/javascript; charset=utf-8"},
                {"/dashboard/dashboard.css", "dashboard.css", "text/css; charset=utf-8"}};
  for (const auto& a : assets) {
    AdminReply r = get(a.target);
    EXPECT_EQ(r.status, 200) << a.target;
    EXPECT_EQ(r.content_type, a.type) << a.target;
    const std::string want = source_file(a.file);
    ASSERT_FALSE(want.empty()) << a.file;
    EXPECT_EQ(r.body, want) << a.target;  // byte for byte
    AdminReply head = get(a.target, "HEAD");
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.body.size(), want.size());  // the server drops the body of a HEAD
  }
  EXPECT_TRUE(resets.empty());  // serving the page asks nothing of the state thread
  const std::string page = get("/").body;
  EXPECT_NE(page.find("src=\"/dashboard/dashboard.js\""), std::string::npos);
  EXPECT_NE(page.find("href=\"/dashboard/dashboard.css\""), std::string::npos);
  EXPECT_NE(page.find("<canvas id=\"chart-rps\""), std::string::npos);
  EXPECT_NE(page.find("<canvas id=\"chart-latency\""), std::string::npos);
}

TEST_F(DashboardTest, TheAssetsAskNothingOfAnotherOrigin) {
  for (const char* file : {"index.html", "dashboard.js", "dashboard.css"}) {
    const std::string text = source_file(file);
    EXPECT_EQ(text.find("http://"), std::string::npos) << file;
    EXPECT_EQ(text.find("https://"), std::string::npos) << file;
    EXPECT_EQ(text.find("@import"), std::string::npos) << file;
    EXPECT_EQ(text.find("url("), std::string::npos) << file;
  }
  const std::string js = source_file("dashboard.js");
  // One request, to this server's own JSON.
  const std::string own = "fetch(\"/dashboard/status.json\"";
  size_t fetches = 0;
  for (size_t at = js.find("fetch("); at != std::string::npos; at = js.find("fetch(", at + 1)) {
    ++fetches;
    EXPECT_EQ(js.compare(at, own.size(), own), 0) << js.substr(at, 40);
  }
  EXPECT_EQ(fetches, 1u);
  EXPECT_EQ(js.find("XMLHttpRequest"), std::string::npos);
  EXPECT_EQ(js.find("WebSocket"), std::string::npos);
}

TEST_F(DashboardTest, ZooKeeperPathsAreAnsweredAsBefore) {
  for (const std::string target : {"/commands", "/commands/ruok", "/commands/stat", "/health",
                                   "/ready", "/commandsX", "/nope", "/dashboard/other"}) {
    AdminReply want = handle_admin_request(AdminRequest{"GET", target, std::nullopt, "192.0.2.9", ""}, context);
    AdminReply got = get(target);
    EXPECT_EQ(got.status, want.status) << target;
    EXPECT_EQ(got.content_type, want.content_type) << target;
    EXPECT_EQ(got.body, want.body) << target;
  }
  EXPECT_EQ(get("/nope").status, 404);
  EXPECT_EQ(get("/commands/ruok").status, 200);
  EXPECT_FALSE(handle_dashboard_request(AdminRequest{"GET", "/commands/ruok", {}, "", ""}, context));
  EXPECT_FALSE(handle_dashboard_request(AdminRequest{"GET", "/health", {}, "", ""}, context));
}

TEST_F(DashboardTest, TheCommandUrlWinsWhenConfiguredOverADashboardPath) {
  config.admin_command_url = "/dashboard";
  EXPECT_FALSE(handle_dashboard_request(AdminRequest{"GET", "/dashboard/status.json", {}, "", ""}, context));
  AdminReply r = get("/dashboard/status.json");  // a command named "status.json": unknown
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Json::parse(r.body)["error"], "Unknown command: status.json");
  EXPECT_EQ(get("/").status, 200);  // the page is still at /
}

TEST_F(DashboardTest, OnlyGetAndHead) {
  for (const std::string method : {"POST", "PUT", "DELETE", "TRACE"}) {
    for (const std::string target : {"/", "/dashboard/status.json", "/dashboard/dashboard.js"}) {
      AdminReply r = get(target, method);
      EXPECT_EQ(r.status, 405) << method << " " << target;
    }
  }
  EXPECT_TRUE(resets.empty());
}

TEST_F(DashboardTest, StatusJsonIsFetchedWithoutAResetAndSaysWhenTheServerDoesNotAnswer) {
  AdminReply r = get("/dashboard/status.json?t=1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(resets, std::vector<StatsReset>{StatsReset::kNone});
  EXPECT_EQ(Json::parse(r.body)["server_id"], 1);
  answering = false;
  r = get("/dashboard/status.json");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(Json::parse(r.body)["error"], "the server's state thread did not answer within 2000 ms");
}

TEST_F(DashboardTest, StatusJsonOnTheLeaderHasEveryMemberWithMatchAndLag) {
  Json j = Json::parse(render_dashboard_status(leader_status()));
  EXPECT_EQ(j["server_id"], 1);
  EXPECT_EQ(j["mode"], "leader");
  EXPECT_EQ(j["serving"], true);
  EXPECT_EQ(j["leader_id"], 1);
  EXPECT_EQ(j["term"], 7);
  EXPECT_EQ(j["commit_index"], 99);
  EXPECT_EQ(j["applied_index"], 98);
  EXPECT_EQ(j["last_index"], 100);
  EXPECT_EQ(j["sessions"], 5);
  EXPECT_EQ(j["znodes"], 42);
  EXPECT_EQ(j["watches"], 9);
  EXPECT_EQ(j["packets_received"], 1000);
  EXPECT_EQ(j["packets_sent"], 990);
  EXPECT_EQ(j["latency"]["avg_ms"], 1.25);
  EXPECT_EQ(j["latency"]["sum_ms"], 125);
  EXPECT_EQ(j["latency"]["count"], 100);
  EXPECT_EQ(j["fsync"]["count"], 50);
  EXPECT_EQ(j["fsync"]["micros_total"], 25000);
  EXPECT_EQ(j["fsync"]["micros_max"], 3000);
  EXPECT_EQ(j["fsync"]["threshold_exceeded"], 1);
  EXPECT_EQ(j["lag_known"], true);
  const Json& m = j["members"];
  ASSERT_EQ(m.size(), 4u);
  // Sorted by id, whatever order consensus listed its peers in.
  EXPECT_EQ(m[0], Json::parse(R"({"id":1,"role":"leader","voter":true,"self":true,"match":100,"lag":0,"active":true})"));
  EXPECT_EQ(m[1], Json::parse(R"({"id":2,"role":"follower","voter":true,"self":false,"match":100,"lag":0,"active":true})"));
  EXPECT_EQ(m[2], Json::parse(R"({"id":3,"role":"follower","voter":true,"self":false,"match":60,"lag":40,"active":false})"));
  EXPECT_EQ(m[3], Json::parse(R"({"id":4,"role":"observer","voter":false,"self":false,"match":97,"lag":3,"active":true})"));
}

TEST_F(DashboardTest, AMatchAheadOfTheReportedLastIndexIsNoNegativeLag) {
  ServerStatus s = leader_status();
  s.peers = {{2, 101, false, true}};
  Json j = Json::parse(render_dashboard_status(s));
  EXPECT_EQ(j["members"][1]["lag"], 0);
}

TEST_F(DashboardTest, OnAFollowerEveryMemberIsListedWithTheLeaderMarkedAndLagUnknown) {
  ServerStatus s = leader_status();
  s.mode = "follower";
  s.server_id = 3;
  s.leader_id = 2;
  s.peers.clear();  // consensus tracks progress on the leader only
  Json j = Json::parse(render_dashboard_status(s));
  EXPECT_EQ(j["lag_known"], false);
  const Json& m = j["members"];
  ASSERT_EQ(m.size(), 4u);
  std::vector<std::string> roles;
  for (const auto& x : m) {
    roles.push_back(x["role"]);
    EXPECT_TRUE(x["match"].is_null()) << x;
    EXPECT_TRUE(x["lag"].is_null()) << x;
    EXPECT_TRUE(x["active"].is_null()) << x;
  }
  EXPECT_EQ(roles, (std::vector<std::string>{"follower", "leader", "follower", "observer"}));
  EXPECT_EQ(m[2]["self"], true);
  EXPECT_EQ(m[1]["self"], false);
}

TEST_F(DashboardTest, WithoutALeaderNobodyIsMarkedLeader) {
  ServerStatus s = leader_status();
  s.mode = "follower";
  s.serving = false;
  s.leader_id = 0;
  s.peers.clear();
  Json j = Json::parse(render_dashboard_status(s));
  EXPECT_EQ(j["serving"], false);
  EXPECT_EQ(j["leader_id"], 0);
  for (const auto& x : j["members"]) EXPECT_NE(x["role"], "leader") << x;
}

TEST_F(DashboardTest, AStandaloneServerIsItsOnlyMember) {
  ServerStatus s;
  s.mode = "standalone";
  s.server_id = 1;
  s.leader_id = 1;
  s.voters = {1};
  s.log.last_index = 12;
  Json j = Json::parse(render_dashboard_status(s));
  EXPECT_EQ(j["lag_known"], true);
  ASSERT_EQ(j["members"].size(), 1u);
  EXPECT_EQ(j["members"][0], Json::parse(R"({"id":1,"role":"standalone","voter":true,"self":true,"match":12,"lag":0,"active":true})"));
}

TEST_F(DashboardTest, TextThatIsNotUtf8DoesNotBreakTheJson) {
  ServerStatus s = leader_status();
  s.version = std::string("3.9.4-zkraft \xff\xfe");
  Json j = Json::parse(render_dashboard_status(s));
  EXPECT_EQ(j["version"], "3.9.4-zkraft \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(DashboardTest, StatusJsonPrefersTheCountsWithoutLists) {
  int counts_asked = 0;
  context.fetch_counts = [&]() -> std::optional<ServerStatus> {
    ++counts_asked;
    ServerStatus s = leader_status();
    s.server_id = 2;
    return s;
  };
  AdminReply r = get("/dashboard/status.json");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(counts_asked, 1);
  EXPECT_TRUE(resets.empty());  // fetch_status was not asked
  EXPECT_EQ(Json::parse(r.body)["server_id"], 2);
  context.fetch_counts = [] { return std::optional<ServerStatus>{}; };
  EXPECT_EQ(get("/dashboard/status.json").status, 503);
}

TEST_F(DashboardTest, MemberFiguresAreOwnOnesAndOnTheLeaderWhatEachMemberReported) {
  ServerStatus s = leader_status();
  // Member 2 reported 300 ms ago; 3 has not (or too long ago: admin_status leaves it out).
  for (auto& p : s.peers) {
    if (p.id == 2) {
      p.reported = true;
      p.term = 7;
      p.commit_index = 97;
      p.applied_index = 96;
      p.reported_ms_ago = 300;
    }
  }
  Json j = Json::parse(render_dashboard_status(s));
  EXPECT_EQ(j["member_figures"], Json::parse(R"([
      {"id":1,"term":7,"commit_index":99,"applied_index":98,"reported_ms_ago":0},
      {"id":2,"term":7,"commit_index":97,"applied_index":96,"reported_ms_ago":300}])"));
  // A follower lists only itself, even if it somehow held reports.
  s.mode = "follower";
  s.server_id = 2;
  s.raft_term = 8;
  Json f = Json::parse(render_dashboard_status(s));
  EXPECT_EQ(f["member_figures"], Json::parse(R"([
      {"id":2,"term":8,"commit_index":99,"applied_index":98,"reported_ms_ago":0}])"));
}

}  // namespace
}  // namespace zkraft::server
