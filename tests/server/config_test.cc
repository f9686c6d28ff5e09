#include "server/config.h"
#include "server/four_letter_words.h"

#include <gtest/gtest.h>

#include "command_line_args.h"

#include <filesystem>
#include <fstream>
#include <initializer_list>

namespace zkraft::server {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::path(testing::TempDir()) /
            (std::string("zkraft_config_") + info->test_suite_name() + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

using cli_testing::Args;

std::string conf(const std::string& name) { return std::string(ZKRAFT_SOURCE_DIR) + "/conf/" + name; }

// --- defaults ---------------------------------------------------------------------------------

TEST(Config, ZooKeeperDefaults) {
  Config c;
  EXPECT_EQ(c.client_port, 2181);
  EXPECT_EQ(c.client_address, "127.0.0.1");
  EXPECT_EQ(c.tick_time_ms, 2000);
  EXPECT_EQ(c.min_session_timeout(), 4000);
  EXPECT_EQ(c.max_session_timeout(), 40000);
  EXPECT_EQ(c.max_client_cnxns, 60);
  EXPECT_EQ(c.four_letter_words, std::set<std::string>{"srvr"});
  EXPECT_EQ(c.max_buffer, 0xfffff);
  EXPECT_EQ(c.global_outstanding_limit, 1000);
  EXPECT_EQ(c.server_id, 1);
  EXPECT_EQ(c.admin_port, 8080);
  EXPECT_TRUE(c.fsync);
  EXPECT_EQ(c.snap_count, 100000);
  EXPECT_TRUE(c.standalone());
  EXPECT_TRUE(is_whitelisted("srvr", c));
  EXPECT_FALSE(is_whitelisted("ruok", c));
  c.four_letter_words = {"*"};
  EXPECT_TRUE(is_whitelisted("ruok", c));
}

TEST(Config, SessionTimeoutBoundsFollowTickUnlessSet) {
  Config c;
  c.tick_time_ms = 500;
  EXPECT_EQ(c.min_session_timeout(), 1000);
  EXPECT_EQ(c.max_session_timeout(), 10000);
  c.min_session_timeout_ms = 300;
  c.max_session_timeout_ms = 90000;
  EXPECT_EQ(c.min_session_timeout(), 300);
  EXPECT_EQ(c.max_session_timeout(), 90000);
}

// --- zoo.cfg ----------------------------------------------------------------------------------

TEST(ZooCfg, ParsesEveryKnownKey) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg(R"(# comment
! also a comment
tickTime = 3000
dataDir=/var/zk
dataLogDir=/var/zklog
clientPort=2999
clientPortAddress=203.0.0.1
initLimit=7
syncLimit=3
minSessionTimeout=5000
maxSessionTimeout=70000
maxClientCnxns=0
4lw.commands.whitelist=stat, ruok ,conf,
admin.serverPort=9090
admin.serverAddress=127.0.0.2
globalOutstandingLimit=50
snapCount=2000
forceSync=no
some.unknown.key=whatever
)",
                            c, &err))
      << err;
  EXPECT_EQ(c.tick_time_ms, 3000);
  EXPECT_EQ(c.data_dir, "/var/zk");
  EXPECT_EQ(c.data_log_dir, "/var/zklog");
  EXPECT_EQ(c.client_port, 2999);
  EXPECT_EQ(c.client_address, "203.0.0.1");
  EXPECT_EQ(c.init_limit, 7);
  EXPECT_EQ(c.sync_limit, 3);
  EXPECT_EQ(c.min_session_timeout_ms, 5000);
  EXPECT_EQ(c.max_session_timeout_ms, 70000);
  EXPECT_EQ(c.max_client_cnxns, 0);
  EXPECT_EQ(c.four_letter_words, (std::set<std::string>{"conf", "ruok", "stat"}));
  EXPECT_EQ(c.admin_port, 9090);
  EXPECT_EQ(c.admin_address, "127.0.0.2");
  EXPECT_EQ(c.global_outstanding_limit, 50);
  EXPECT_EQ(c.snap_count, 2000);
  EXPECT_FALSE(c.fsync);
  EXPECT_TRUE(c.servers.empty());
}

TEST(ZooCfg, ZooKeeperDefaultsWhenKeysAreAbsent) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("clientPort=2181\ndataDir=/d\n", c, &err)) << err;
  EXPECT_EQ(c.client_address, "0.0.0.0");  // all interfaces
  EXPECT_EQ(c.admin_address, "0.0.0.0");
  EXPECT_EQ(c.tick_time_ms, 3000);         // ZooKeeperServer.DEFAULT_TICK_TIME
  EXPECT_EQ(c.min_session_timeout(), 6000);
  EXPECT_EQ(c.max_session_timeout(), 60000);
}

TEST(ZooCfg, PropertiesSeparators) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("tickTime 1500\nclientPort: 2000\n  dataDir   =  /x y  \nbareword\n",
                            c, &err))
      << err;
  EXPECT_EQ(c.tick_time_ms, 1500);
  EXPECT_EQ(c.client_port, 2000);
  EXPECT_EQ(c.data_dir, "/x y");
}

TEST(ZooCfg, BadNumberNamesTheKey) {
  Config c;
  std::string err;
  EXPECT_FALSE(parse_zoo_cfg("tickTime=abc\n", c, &err));
  EXPECT_EQ(err, "config error: tickTime: not a positive integer \"abc\"");
  EXPECT_FALSE(parse_zoo_cfg("clientPort=70000\n", c, &err));
  EXPECT_EQ(err, "config error: clientPort: 70000 is out of range [0, 65535]");
  EXPECT_FALSE(parse_zoo_cfg("maxClientCnxns=-3\n", c, &err));
  EXPECT_EQ(err, "config error: maxClientCnxns: -3 is out of range [0, 2147483647]");
  EXPECT_FALSE(parse_zoo_cfg("tickTime=0\n", c, &err));
  EXPECT_EQ(err, "config error: tickTime: 0 is out of range [1, 2147483647]");
  EXPECT_FALSE(parse_zoo_cfg("forceSync=maybe\n", c, &err));
  EXPECT_EQ(err, "config error: forceSync: not a boolean (true/false/yes/no) \"maybe\"");
  EXPECT_FALSE(parse_zoo_cfg("clientPort\n", c, &err));  // a bare key has the value ""
  EXPECT_EQ(err, "config error: clientPort: not a non-negative integer \"\"");
  EXPECT_FALSE(parse_zoo_cfg("minSessionTimeout=10s\n", c, &err));
  EXPECT_EQ(err, "config error: minSessionTimeout: not an integer \"10s\"");
}

TEST(ZooCfg, AdminEnableServerFalseDisablesAdmin) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("admin.serverPort=9000\nadmin.enableServer=false\n", c, &err)) << err;
  EXPECT_EQ(c.admin_port, 0);
  Config d;
  ASSERT_TRUE(parse_zoo_cfg("admin.enableServer=true\nadmin.serverPort=9001\n", d, &err)) << err;
  EXPECT_EQ(d.admin_port, 9001);
  Config e;  // the order of the two keys does not matter
  ASSERT_TRUE(parse_zoo_cfg("admin.enableServer=false\nadmin.serverPort=9002\n", e, &err)) << err;
  EXPECT_EQ(e.admin_port, 0);
}

TEST(ZooCfg, WhitelistStar) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("4lw.commands.whitelist=*\n", c, &err)) << err;
  EXPECT_TRUE(is_whitelisted("mntr", c));
  EXPECT_TRUE(is_whitelisted("wchp", c));
}

TEST(ZooCfg, ServerLines) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg(R"(server.3=zk3.example:2890:3890:observer;203.0.0.3:2183
server.1=zk1.example:2888:3888
server.2=zk2.example:2889:3889:participant;2182
server.4=[::1]:2891:3891;[::1]:2184
)",
                            c, &err))
      << err;
  ASSERT_EQ(c.servers.size(), 4u);  // ordered by id
  EXPECT_EQ(c.servers[0], (PeerConfig{1, "zk1.example", 2888, 3888, PeerRole::kParticipant, "", 0}));
  EXPECT_EQ(c.servers[1], (PeerConfig{2, "zk2.example", 2889, 3889, PeerRole::kParticipant, "", 2182}));
  EXPECT_EQ(c.servers[2],
            (PeerConfig{3, "zk3.example", 2890, 3890, PeerRole::kObserver, "203.0.0.3", 2183}));
  EXPECT_EQ(c.servers[3], (PeerConfig{4, "::1", 2891, 3891, PeerRole::kParticipant, "::1", 2184}));
  EXPECT_FALSE(c.standalone());
}

TEST(ZooCfg, BadServerLines) {
  std::string err;
  Config c;
  EXPECT_FALSE(parse_zoo_cfg("server.1=host:2888\n", c, &err));
  EXPECT_EQ(err, "config error: server.1: expected host:peerPort:electionPort[:participant|observer], got \"host:2888\"");
  EXPECT_FALSE(parse_zoo_cfg("server.x=host:2888:3888\n", c, &err));
  EXPECT_EQ(err, "config error: server.x: not a non-negative integer \"x\"");
  EXPECT_FALSE(parse_zoo_cfg("server.1=host:2888:3888:voter\n", c, &err));
  EXPECT_EQ(err, "config error: server.1: role must be participant or observer, not \"voter\"");
  EXPECT_FALSE(parse_zoo_cfg("server.1=host:2888:0\n", c, &err));
  EXPECT_EQ(err, "config error: server.1: 0 is out of range [1, 65535]");
}

TEST(ZooCfg, RepeatedServerLineLastWins) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("server.1=a:1:2\nserver.01=b:3:4\n", c, &err)) << err;
  ASSERT_EQ(c.servers.size(), 1u);
  EXPECT_EQ(c.servers[0].host, "b");
  EXPECT_EQ(c.servers[0].peer_port, 3);
}

TEST(ZooCfg, ExampleFileParses) {
  Config c;
  std::string err;
  ASSERT_TRUE(load_config_file(conf("zoo-standalone.cfg"), c, &err)) << err;
  EXPECT_EQ(c.client_port, 2181);
  EXPECT_EQ(c.client_address, "127.0.0.1");
  EXPECT_EQ(c.data_dir, ".data/zoo-standalone");
  EXPECT_TRUE(is_whitelisted("ruok", c));
  EXPECT_TRUE(validate_config(c, &err)) << err;
}

// --- YAML -------------------------------------------------------------------------------------

TEST(YamlConfig, ParsesEveryKey) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_yaml_config(R"(
client_port: 3000
client_address: 0.0.0.0
data_dir: /d
data_log_dir: /l
tick_time_ms: 100
min_session_timeout_ms: 300
max_session_timeout_ms: 9000
init_limit: 4
sync_limit: 2
max_client_connections: 5
max_buffer: 4096
global_outstanding_limit: 10
max_outstanding_per_connection: 20
max_watches_per_connection: 30
four_letter_words: [ruok, srvr]
server_id: 2
admin_port: 0
admin_address: 0.0.0.0
fsync: false
snap_count: 500
servers:
  - {id: 1, host: a, peer_port: 2888, election_port: 3888}
  - {id: 2, host: b, peer_port: 2889, role: observer, client_address: 203.1.1.1, client_port: 2182}
)",
                                c, &err))
      << err;
  EXPECT_EQ(c.client_port, 3000);
  EXPECT_EQ(c.client_address, "0.0.0.0");
  EXPECT_EQ(c.data_dir, "/d");
  EXPECT_EQ(c.data_log_dir, "/l");
  EXPECT_EQ(c.tick_time_ms, 100);
  EXPECT_EQ(c.min_session_timeout_ms, 300);
  EXPECT_EQ(c.max_session_timeout_ms, 9000);
  EXPECT_EQ(c.init_limit, 4);
  EXPECT_EQ(c.sync_limit, 2);
  EXPECT_EQ(c.max_client_cnxns, 5);
  EXPECT_EQ(c.max_buffer, 4096);
  EXPECT_EQ(c.global_outstanding_limit, 10);
  EXPECT_EQ(c.max_outstanding_per_connection, 20);
  EXPECT_EQ(c.max_watches_per_connection, 30);
  EXPECT_EQ(c.four_letter_words, (std::set<std::string>{"ruok", "srvr"}));
  EXPECT_EQ(c.server_id, 2);
  EXPECT_EQ(c.admin_port, 0);
  EXPECT_EQ(c.admin_address, "0.0.0.0");
  EXPECT_FALSE(c.fsync);
  EXPECT_EQ(c.snap_count, 500);
  ASSERT_EQ(c.servers.size(), 2u);
  EXPECT_EQ(c.servers[0], (PeerConfig{1, "a", 2888, 3888, PeerRole::kParticipant, "", 0}));
  EXPECT_EQ(c.servers[1], (PeerConfig{2, "b", 2889, 0, PeerRole::kObserver, "203.1.1.1", 2182}));
  ASSERT_NE(c.self(), nullptr);
  EXPECT_EQ(c.self()->host, "b");
}

TEST(YamlConfig, OnlyGivenKeysChange) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_yaml_config("tick_time_ms: 500\n", c, &err)) << err;
  EXPECT_EQ(c.tick_time_ms, 500);
  EXPECT_EQ(c.client_port, 2181);
  EXPECT_EQ(c.client_address, "127.0.0.1");
  ASSERT_TRUE(parse_yaml_config("", c, &err)) << err;
  ASSERT_TRUE(parse_yaml_config("# only a comment\n", c, &err)) << err;
  EXPECT_EQ(c.tick_time_ms, 500);
}

TEST(YamlConfig, WhitelistForms) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_yaml_config("four_letter_words: \"*\"\n", c, &err)) << err;
  EXPECT_TRUE(is_whitelisted("dump", c));
  ASSERT_TRUE(parse_yaml_config("four_letter_words: srvr,stat\n", c, &err)) << err;
  EXPECT_EQ(c.four_letter_words, (std::set<std::string>{"srvr", "stat"}));
  ASSERT_TRUE(parse_yaml_config("four_letter_words: []\n", c, &err)) << err;
  EXPECT_TRUE(c.four_letter_words.empty());
}

TEST(YamlConfig, ErrorsNameTheKey) {
  std::string err;
  Config c;
  EXPECT_FALSE(parse_yaml_config("tick_time_ms: abc\n", c, &err));
  EXPECT_EQ(err, "config error: tick_time_ms: not a positive integer \"abc\"");
  EXPECT_FALSE(parse_yaml_config("tick_tme_ms: 5\n", c, &err));
  EXPECT_EQ(err, "config error: tick_tme_ms: unknown key");
  EXPECT_FALSE(parse_yaml_config("client_port: [1, 2]\n", c, &err));
  EXPECT_EQ(err, "config error: client_port: expected a single value");
  EXPECT_FALSE(parse_yaml_config("fsync: perhaps\n", c, &err));
  EXPECT_EQ(err, "config error: fsync: not a boolean (true/false/yes/no) \"perhaps\"");
  EXPECT_FALSE(parse_yaml_config("server_id: 256\n", c, &err));
  EXPECT_EQ(err, "config error: server_id: 256 is out of range [0, 255]");
  EXPECT_FALSE(parse_yaml_config("servers:\n  - {id: 1, host: a}\n", c, &err));
  EXPECT_EQ(err, "config error: servers[0].peer_port: missing");
  EXPECT_FALSE(parse_yaml_config("servers:\n  - {id: 1, host: a, peer_port: 1, colour: red}\n", c, &err));
  EXPECT_EQ(err, "config error: servers[0].colour: unknown key");
  EXPECT_FALSE(parse_yaml_config("- a\n- b\n", c, &err));
  EXPECT_EQ(err, "config error: YAML: the top level must be a map of key: value");
  EXPECT_FALSE(parse_yaml_config("a: [unclosed\n", c, &err));
  EXPECT_EQ(err.rfind("config error: YAML: ", 0), 0u) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

TEST(YamlConfig, ExampleStandaloneFile) {
  Config c;
  std::string err;
  ASSERT_TRUE(load_config_file(conf("standalone.yaml"), c, &err)) << err;
  EXPECT_EQ(c.client_port, 2181);
  EXPECT_EQ(c.client_address, "127.0.0.1");
  EXPECT_EQ(c.data_dir, ".data/standalone");
  EXPECT_EQ(c.tick_time_ms, 2000);
  EXPECT_TRUE(c.standalone());
  EXPECT_TRUE(validate_config(c, &err)) << err;
}

TEST(YamlConfig, ExampleEnsembleFiles) {
  for (int n : {3, 5}) {
    Config c;
    std::string err;
    ASSERT_TRUE(load_config_file(conf("ensemble-" + std::to_string(n) + ".yaml"), c, &err)) << err;
    ASSERT_EQ(c.servers.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(c.servers[i].id, i + 1);
      EXPECT_EQ(c.servers[i].client_port, 2181 + i);
      EXPECT_EQ(c.servers[i].peer_port, 2888 + i);
    }
    c.server_id = 2;
    apply_server_identity(c, false, false);
    EXPECT_EQ(c.client_port, 2182);
    EXPECT_EQ(c.data_dir, ".data/ensemble-" + std::to_string(n) + "/2");
    EXPECT_TRUE(validate_config(c, &err)) << err;
  }
}

// --- format detection, files, myid -------------------------------------------------------------

TEST(ConfigFile, FormatByExtensionOrContent) {
  TempDir dir;
  std::string err;
  {
    Config c;
    ASSERT_TRUE(load_config_file(dir.write("a.yml", "tick_time_ms: 7\n"), c, &err)) << err;
    EXPECT_EQ(c.tick_time_ms, 7);
  }
  {
    Config c;
    ASSERT_TRUE(load_config_file(dir.write("zoo.cfg", "tickTime=8\n"), c, &err)) << err;
    EXPECT_EQ(c.tick_time_ms, 8);
  }
  {
    Config c;  // no telling extension: a key=value line means zoo.cfg
    ASSERT_TRUE(load_config_file(dir.write("conf1", "# x\n\ntickTime=9\n"), c, &err)) << err;
    EXPECT_EQ(c.tick_time_ms, 9);
    EXPECT_EQ(c.source_file, dir.path() + "/conf1");
  }
  {
    Config c;  // ... and key: value means YAML
    ASSERT_TRUE(load_config_file(dir.write("conf2", "tick_time_ms: 10\n"), c, &err)) << err;
    EXPECT_EQ(c.tick_time_ms, 10);
  }
  {
    Config c;  // zoo.cfg lines may contain ':' in the value (server.N)
    ASSERT_TRUE(load_config_file(dir.write("conf3", "server.1=h:1:2\n"), c, &err)) << err;
    EXPECT_EQ(c.servers.size(), 1u);
  }
}

TEST(ConfigFile, MissingFile) {
  Config c;
  std::string err;
  EXPECT_FALSE(load_config_file("/nonexistent/zoo.cfg", c, &err));
  EXPECT_EQ(err, "config error: /nonexistent/zoo.cfg: cannot open file");
}

TEST(ConfigFile, MyidSetsServerId) {
  TempDir dir;
  Config c;
  c.data_dir = dir.path();
  std::string err;
  ASSERT_TRUE(read_myid(c, &err)) << err;  // absent: unchanged
  EXPECT_EQ(c.server_id, 1);
  dir.write("myid", "3\n");
  ASSERT_TRUE(read_myid(c, &err)) << err;
  EXPECT_EQ(c.server_id, 3);
  dir.write("myid", "three\n");
  EXPECT_FALSE(read_myid(c, &err));
  EXPECT_EQ(err, "config error: myid (" + dir.path() + "/myid): not a non-negative integer \"three\"");
}

// --- validation --------------------------------------------------------------------------------

TEST(ConfigValidate, Ranges) {
  std::string err;
  Config c;
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err, "config error: data_dir (dataDir): missing");
  c.data_dir = "/d";
  EXPECT_TRUE(validate_config(c, &err)) << err;
  c.min_session_timeout_ms = 50000;  // above the default max of 40000
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err, "config error: min_session_timeout_ms: 50000 is larger than max_session_timeout_ms 40000");
  c.min_session_timeout_ms = -1;
  c.max_session_timeout_ms = 0;
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err, "config error: max_session_timeout_ms: must be positive or -1 (20 x tick time)");
  c.max_session_timeout_ms = -1;
  c.tick_time_ms = 0;
  EXPECT_FALSE(validate_config(c, &err));
  c.tick_time_ms = 2000;
  c.admin_port = 70000;
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err, "config error: admin_port: 70000 is out of range [0, 65535]");
}

TEST(ConfigValidate, Ensemble) {
  std::string err;
  Config c;
  c.data_dir = "/d";
  c.servers = {PeerConfig{1, "a", 2888, 3888, PeerRole::kParticipant, "", 0}, PeerConfig{2, "b", 2889, 3889, PeerRole::kParticipant, "", 0}};
  c.server_id = 3;
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err, "config error: server_id: 3 is not in the servers list (set server_id, --server-id or dataDir/myid)");
  c.server_id = 2;
  EXPECT_TRUE(validate_config(c, &err)) << err;
  c.servers.push_back(PeerConfig{2, "c", 2890, 3890, PeerRole::kParticipant, "", 0});
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err, "config error: servers: id 2 given twice");
  c.servers = {PeerConfig{2, "a", 2888, 3888, PeerRole::kObserver, "", 0}};
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err, "config error: servers: no participant (every server is an observer)");
}

// --- command line ------------------------------------------------------------------------------

TEST(CommandLine, FileThenOverrides) {
  TempDir dir;
  std::string file = dir.write("zoo.cfg", "tickTime=3000\ndataDir=" + dir.path() + "/data\nclientPort=2181\n");
  Args args{"--config", file, "--client-port", "0", "--client-address", "127.0.0.1", "--tick-time",
            "100", "--admin-port", "0"};
  Config c;
  std::string err;
  ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err)) << err;
  EXPECT_EQ(c.client_port, 0);
  EXPECT_EQ(c.client_address, "127.0.0.1");  // zoo.cfg default was 0.0.0.0
  EXPECT_EQ(c.tick_time_ms, 100);
  EXPECT_EQ(c.admin_port, 0);
  EXPECT_EQ(c.data_dir, dir.path() + "/data");
}

TEST(CommandLine, DataDirFlagAndMyid) {
  TempDir dir;
  dir.write("data/myid", "7");
  Args args{"--data-dir", dir.path() + "/data"};
  Config c;
  std::string err;
  ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err)) << err;
  EXPECT_EQ(c.server_id, 7);
  Args args2{"--data-dir", dir.path() + "/data", "--server-id", "9"};
  Config d;
  ASSERT_TRUE(parse_command_line(args2.argc(), args2.argv(), d, &err)) << err;
  EXPECT_EQ(d.server_id, 9);  // the flag beats myid
}

TEST(CommandLine, EnsembleMemberFromServerId) {
  Args args{"--config", conf("ensemble-3.yaml"), "--server-id", "3"};
  Config c;
  std::string err;
  ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err)) << err;
  EXPECT_EQ(c.server_id, 3);
  EXPECT_EQ(c.client_port, 2183);
  EXPECT_EQ(c.data_dir, ".data/ensemble-3/3");
  Args args2{"--config", conf("ensemble-3.yaml"), "--server-id", "3", "--client-port", "5000"};
  Config d;
  ASSERT_TRUE(parse_command_line(args2.argc(), args2.argv(), d, &err)) << err;
  EXPECT_EQ(d.client_port, 5000);
}

TEST(CommandLine, ErrorsAreOneLine) {
  std::string err;
  {
    Args args{"--data-dir", "/d", "--tick-time", "abc"};
    Config c;
    EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), c, &err));
    EXPECT_EQ(err, "config error: --tick-time: not a positive integer \"abc\"");
  }
  {
    Args args{"--data-dir", "/d", "--client-port", "-1"};
    Config c;
    EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), c, &err));
    EXPECT_EQ(err, "config error: --client-port: -1 is out of range [0, 65535]");
  }
  {
    Args args{"--bogus"};
    Config c;
    EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), c, &err));
    EXPECT_EQ(err.rfind("config error: command line: ", 0), 0u) << err;
    EXPECT_NE(err.find("--bogus"), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  {
    Args args{"--config", "/nonexistent.yaml"};
    Config c;
    EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), c, &err));
    EXPECT_EQ(err, "config error: /nonexistent.yaml: cannot open file");
  }
  {
    Args args{};  // no data dir anywhere
    Config c;
    EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), c, &err));
    EXPECT_EQ(err, "config error: data_dir (dataDir): missing");
  }
}

}  // namespace
}  // namespace zkraft::server

namespace zkraft::server {
namespace {

TEST(CommandLineDeathTest, HelpPrintsUsageAndExitsZero) {
  Args args{"--help"};
  Config c;
  std::string err;
  EXPECT_EXIT(parse_command_line(args.argc(), args.argv(), c, &err), testing::ExitedWithCode(0), "");
}

TEST(CommandLineDeathTest, VersionExitsZero) {
  Args args{"--version"};
  Config c;
  std::string err;
  EXPECT_EXIT(parse_command_line(args.argc(), args.argv(), c, &err), testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace zkraft::server

namespace zkraft::server {
namespace {

TEST(Config, LogLevelIsOneOfSpdlogsNames) {
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    Config c;
    c.data_dir = "/d";
    c.log_level = level;
    std::string err;
    EXPECT_TRUE(validate_config(c, &err)) << level << ": " << err;
  }
  Config c;
  c.data_dir = "/d";
  c.log_level = "verbose";
  std::string err;
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err, "config error: log_level: verbose is not one of trace, debug, info, warn, error, critical, off");
}

}  // namespace
}  // namespace zkraft::server
