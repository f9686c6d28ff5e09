#include "server/four_letter_words.h"
#include "server/trace_mask.h"

#include <gtest/gtest.h>

namespace zkraft::server {
namespace {

// A server with two connections (one with a session, one fresh 4lw connection), some watches,
// sessions and ephemerals. Values echo the LIVE ZooKeeper 3.8.0 captures in the protocol ref.
ServerStatus sample_status() {
  ServerStatus s;
  s.version = "3.9.4-zkraft-0.1.0, built on 11/30/2026 06:00 UTC";
  s.mode = "standalone";
  s.min_latency_ms = 0;
  s.avg_latency_ms = 1.3415;
  s.max_latency_ms = 10;
  s.packets_received = 45;
  s.packets_sent = 44;
  s.num_alive_connections = 2;
  s.outstanding_requests = 0;
  s.last_zxid = 0xd;
  s.node_count = 17;

  ConnectionStatus a;
  a.remote = "/127.0.0.1:48496";
  a.interest_ops = 1;
  a.queued = 0;
  a.received = 42;
  a.sent = 42;
  a.session_id = 0x100000465420000LL;
  a.last_op = "PING";
  a.established_ms = 1796014083503LL;
  a.timeout_ms = 30000;
  a.last_cxid = 0x26;
  a.last_zxid = 0xd;
  a.last_response_ms = 320160;
  a.last_latency_ms = 1;
  a.min_latency_ms = 0;
  a.avg_latency_ms = 1;
  a.max_latency_ms = 10;
  ConnectionStatus b;
  b.remote = "/127.0.0.1:43504";
  b.interest_ops = 0;
  b.received = 1;
  s.connections = {a, b};

  s.watch_connections = 1;
  s.watch_paths = 3;
  s.watch_total = 3;
  s.watch_count = 4;
  s.watches_by_session = {{0x100000465420000LL, {"/app", "/cont", "/nonexist"}}};
  s.watches_by_path = {{"/app", {0x100000465420000LL}},
                       {"/cont", {0x100000465420000LL, 0x200000000000001LL}}};
  s.ephemerals_count = 2;
  s.approximate_data_size = 1234;
  s.ephemerals_by_session = {{0x100000465420000LL, {"/app/eph1", "/app/eph2"}}};
  s.global_sessions = 1;
  s.tracked_sessions = 2;
  s.session_buckets = {{0, {0x100000465420000LL}}, {1796014083503LL, {0x1LL}}};
  s.tracked_connections = 1;
  s.connection_buckets = {{0, {{"/127.0.0.1:36888", 0}}}};
  s.uptime_ms = 320000;
  s.open_file_descriptor_count = 63;
  s.max_file_descriptor_count = 1048576;
  s.data_dir_size = 67109337;
  s.log_dir_size = 512;
  s.auth_failed_count = 0;
  s.digests = {{0x80, 123456789}, {0x100, -42}};
  s.environment.host_name = "zkhost";
  s.environment.os_name = "Linux";
  s.environment.os_arch = "amd64";
  s.environment.os_version = "6.1.0";
  s.environment.user_name = "zk";
  s.environment.user_home = "/home/zk";
  s.environment.user_dir = "/srv/zk";
  s.environment.memory_free_mb = 100;
  s.environment.memory_max_mb = 2000;
  s.environment.memory_total_mb = 50;
  return s;
}

Config all_words() {
  Config c;
  c.four_letter_words = {"*"};
  c.data_dir = "/var/lib/zkraft";
  return c;
}

std::string render(std::string_view cmd, const ServerStatus& s = sample_status(),
                   const Config& c = all_words()) {
  return render_four_letter_word(cmd, s, c);
}

const char* kVersionLine = "Zookeeper version: 3.9.4-zkraft-0.1.0, built on 11/30/2026 06:00 UTC\n";
const char* kStatsLines =
    "Latency min/avg/max: 0/1.3415/10\n"
    "Received: 45\n"
    "Sent: 44\n"
    "Connections: 2\n"
    "Outstanding: 0\n"
    "Zxid: 0xd\n"
    "Mode: standalone\n"
    "Node count: 17\n";

// --- whitelist ---------------------------------------------------------------------------------

TEST(FourLetterWords, KnownWords) {
  for (const char* w : {"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "hash", "isro",
                        "mntr", "ruok", "srst", "srvr", "stat", "stmk", "wchc", "wchp", "wchs"}) {
    EXPECT_TRUE(is_four_letter_word(w)) << w;
  }
  for (const char* w : {"xxxx", "RUOK", "ruo", "ruokk", "", "lsnp", "lead"}) {
    EXPECT_FALSE(is_four_letter_word(w)) << w;
  }
  EXPECT_EQ(render("xxxx"), "");
}

TEST(FourLetterWords, DefaultWhitelistIsSrvrOnly) {
  Config c;  // default {"srvr"}
  EXPECT_TRUE(is_whitelisted("srvr", c));
  EXPECT_FALSE(is_whitelisted("ruok", c));
  EXPECT_FALSE(is_whitelisted("stat", c));
  EXPECT_EQ(render("ruok", sample_status(), c), "ruok is not executed because it is not in the whitelist.\n");
  EXPECT_EQ(render("mntr", sample_status(), c), "mntr is not executed because it is not in the whitelist.\n");
  EXPECT_EQ(render("srvr", sample_status(), c).rfind("Zookeeper version: ", 0), 0u);
}

TEST(FourLetterWords, SrvrIsAlwaysAllowedAndStarAllowsAll) {
  Config c;
  c.four_letter_words = {"ruok"};
  EXPECT_TRUE(is_whitelisted("srvr", c));  // zkServer.sh needs it
  EXPECT_TRUE(is_whitelisted("ruok", c));
  EXPECT_FALSE(is_whitelisted("stat", c));
  c.four_letter_words = {"*"};
  EXPECT_TRUE(is_whitelisted("stat", c));
  EXPECT_TRUE(is_whitelisted("wchp", c));
  EXPECT_FALSE(is_whitelisted("nope", c));
  EXPECT_EQ(not_whitelisted_text("cons"), "cons is not executed because it is not in the whitelist.\n");
}

// --- golden outputs ----------------------------------------------------------------------------

TEST(FourLetterWords, Ruok) { EXPECT_EQ(render("ruok"), "imok"); }

TEST(FourLetterWords, Srvr) { EXPECT_EQ(render("srvr"), std::string(kVersionLine) + kStatsLines); }

TEST(FourLetterWords, Stat) {
  EXPECT_EQ(render("stat"), std::string(kVersionLine) +
                                "Clients:\n"
                                " /127.0.0.1:48496[1](queued=0,recved=42,sent=42)\n"
                                " /127.0.0.1:43504[0](queued=0,recved=1,sent=0)\n"
                                "\n" +
                                kStatsLines);
}

TEST(FourLetterWords, StatWithoutClients) {
  ServerStatus s = sample_status();
  s.connections.clear();
  EXPECT_EQ(render("stat", s), std::string(kVersionLine) + "Clients:\n\n" + kStatsLines);
}

TEST(FourLetterWords, ReadOnlyAndLeaderLines) {
  ServerStatus s = sample_status();
  s.read_only = true;
  s.mode = "read-only";
  std::string out = render("srvr", s);
  EXPECT_EQ(out.substr(0, out.find("Latency")),
            std::string(kVersionLine) + "READ-ONLY mode; serving only read-only clients\n");
  EXPECT_EQ(render("isro", s), "ro");
  s = sample_status();
  s.mode = "leader";
  s.proposal_sizes = std::vector<int64_t>{36, 32, 120};
  out = render("srvr", s);
  EXPECT_NE(out.find("Mode: leader\nNode count: 17\nProposal sizes last/min/max: 36/32/120\n"),
            std::string::npos)
      << out;
}

TEST(FourLetterWords, NegativeZxidPrintsLikeLongToHexString) {
  ServerStatus s = sample_status();
  s.last_zxid = -1;
  EXPECT_NE(render("srvr", s).find("Zxid: 0xffffffffffffffff\n"), std::string::npos);
  s.last_zxid = 0x500000003LL;
  EXPECT_NE(render("srvr", s).find("Zxid: 0x500000003\n"), std::string::npos);
}

TEST(FourLetterWords, Cons) {
  EXPECT_EQ(render("cons"),
            " /127.0.0.1:48496[1](queued=0,recved=42,sent=42,sid=0x100000465420000,lop=PING,"
            "est=1796014083503,to=30000,lcxid=0x26,lzxid=0xd,lresp=320160,llat=1,minlat=0,avglat=1,"
            "maxlat=10)\n"
            " /127.0.0.1:43504[0](queued=0,recved=1,sent=0)\n"
            "\n");
}

TEST(FourLetterWords, ConsOmitsNegativeCxidAndPrintsHexInterestOps) {
  ServerStatus s = sample_status();
  s.connections.resize(1);
  s.connections[0].last_cxid = -1;
  s.connections[0].interest_ops = 5;
  s.connections[0].last_zxid = -1;
  EXPECT_EQ(render("cons", s),
            " /127.0.0.1:48496[5](queued=0,recved=42,sent=42,sid=0x100000465420000,lop=PING,"
            "est=1796014083503,to=30000,lzxid=0xffffffffffffffff,lresp=320160,llat=1,minlat=0,"
            "avglat=1,maxlat=10)\n\n");
}

TEST(FourLetterWords, ResetsAndDirs) {
  EXPECT_EQ(render("crst"), "Connection stats reset.\n");
  EXPECT_EQ(render("srst"), "Server stats reset.\n");
  EXPECT_EQ(render("dirs"), "datadir_size: 67109337\nlogdir_size: 512\n");
}

TEST(FourLetterWords, Watches) {
  EXPECT_EQ(render("wchs"), "1 connections watching 3 paths\nTotal watches:3\n");
  EXPECT_EQ(render("wchc"), "0x100000465420000\n\t/app\n\t/cont\n\t/nonexist\n\n");
  EXPECT_EQ(render("wchp"), "/app\n\t0x100000465420000\n/cont\n\t0x100000465420000\n\t0x200000000000001\n\n");
  ServerStatus empty = sample_status();
  empty.watch_connections = empty.watch_paths = empty.watch_total = 0;
  empty.watches_by_path.clear();
  empty.watches_by_session.clear();
  EXPECT_EQ(render("wchs", empty), "0 connections watching 0 paths\nTotal watches:0\n");
  EXPECT_EQ(render("wchc", empty), "\n");
  EXPECT_EQ(render("wchp", empty), "\n");
}

TEST(FourLetterWords, Dump) {
  EXPECT_EQ(render("dump"),
            "SessionTracker dump:\n"
            "Session Sets (2)/(2):\n"
            "1 expire at Thu Jan 01 00:00:00 UTC 1970:\n"
            "\t0x100000465420000\n"
            "1 expire at Mon Nov 30 04:48:03 UTC 2026:\n"
            "\t0x1\n"
            "ephemeral nodes dump:\n"
            "Sessions with Ephemerals (1):\n"
            "0x100000465420000:\n"
            "\t/app/eph1\n"
            "\t/app/eph2\n"
            "Connections dump:\n"
            "Connections Sets (1)/(1):\n"
            "1 expire at Thu Jan 01 00:00:00 UTC 1970:\n"
            "\tip: /127.0.0.1:36888 sessionId: 0x0\n");
}

TEST(FourLetterWords, Envi) {
  EXPECT_EQ(render("envi"),
            "Environment:\n"
            "zookeeper.version=3.9.4-zkraft-0.1.0, built on 11/30/2026 06:00 UTC\n"
            "host.name=zkhost\n"
            "java.version=<NA>\n"
            "java.vendor=<NA>\n"
            "java.home=<NA>\n"
            "java.class.path=<NA>\n"
            "java.library.path=<NA>\n"
            "java.io.tmpdir=<NA>\n"
            "java.compiler=<NA>\n"
            "os.name=Linux\n"
            "os.arch=amd64\n"
            "os.version=6.1.0\n"
            "user.name=zk\n"
            "user.home=/home/zk\n"
            "user.dir=/srv/zk\n"
            "os.memory.free=100MB\n"
            "os.memory.max=2000MB\n"
            "os.memory.total=50MB\n");
}

TEST(FourLetterWords, Conf) {
  Config c = all_words();
  c.data_log_dir = "/var/log/zkraft";
  EXPECT_EQ(render("conf", sample_status(), c),
            "clientPort=2181\n"
            "secureClientPort=-1\n"
            "dataDir=/var/lib/zkraft\n"
            "dataDirSize=67109337\n"
            "dataLogDir=/var/log/zkraft\n"
            "dataLogSize=512\n"
            "tickTime=2000\n"
            "maxClientCnxns=60\n"
            "minSessionTimeout=4000\n"
            "maxSessionTimeout=40000\n"
            "clientPortListenBacklog=-1\n"
            "serverId=1\n");
}

TEST(FourLetterWords, ConfInAnEnsemble) {
  Config c = all_words();
  c.server_id = 2;
  c.servers = {PeerConfig{1, "203.0.0.1", 2888, 3888, PeerRole::kParticipant, "", 0},
               PeerConfig{2, "203.0.0.2", 2889, 3889, PeerRole::kParticipant, "203.0.0.2", 2182},
               PeerConfig{3, "::1", 2890, 3890, PeerRole::kObserver, "", 2183}};
  std::string out = render("conf", sample_status(), c);
  const std::string tail =
      "serverId=2\n"
      "initLimit=10\n"
      "syncLimit=5\n"
      "electionAlg=3\n"
      "electionPort=3889\n"
      "quorumPort=2889\n"
      "peerType=0\n"
      "membership: \n"
      "server.1=203.0.0.1:2888:3888:participant\n"
      "server.2=203.0.0.2:2889:3889:participant;203.0.0.2:2182\n"
      "server.3=[::1]:2890:3890:observer;0.0.0.0:2183\n"
      "version=0";
  ASSERT_GE(out.size(), tail.size());
  EXPECT_EQ(out.substr(out.size() - tail.size()), tail);
}

TEST(FourLetterWords, Mntr) {
  ServerStatus s = sample_status();
  s.extra_metrics = {{"quorum_size", "3"}};
  EXPECT_EQ(render("mntr", s),
            "zk_version\t3.9.4-zkraft-0.1.0, built on 11/30/2026 06:00 UTC\n"
            "zk_server_state\tstandalone\n"
            "zk_uptime\t320000\n"
            "zk_avg_latency\t1.3415\n"
            "zk_max_latency\t10\n"
            "zk_min_latency\t0\n"
            "zk_packets_received\t45\n"
            "zk_packets_sent\t44\n"
            "zk_num_alive_connections\t2\n"
            "zk_outstanding_requests\t0\n"
            "zk_znode_count\t17\n"
            "zk_watch_count\t4\n"
            "zk_ephemerals_count\t2\n"
            "zk_approximate_data_size\t1234\n"
            "zk_global_sessions\t1\n"
            "zk_local_sessions\t0\n"
            "zk_open_file_descriptor_count\t63\n"
            "zk_max_file_descriptor_count\t1048576\n"
            "zk_connection_drop_probability\t0.0\n"
            "zk_last_client_response_size\t-1\n"
            "zk_max_client_response_size\t-1\n"
            "zk_min_client_response_size\t-1\n"
            "zk_outstanding_tls_handshake\t0\n"
            "zk_auth_failed_count\t0\n"
            "zk_non_mtls_remote_conn_count\t0\n"
            "zk_non_mtls_local_conn_count\t0\n"
            "zk_quorum_size\t3\n");
}

TEST(FourLetterWords, SmallWords) {
  EXPECT_EQ(render("isro"), "rw");
  EXPECT_EQ(render("gtmk"), "306");
  EXPECT_EQ(render("stmk"), "306");
  EXPECT_EQ(render("hash"), "80: 123456789\n100: -42\n");
}

TEST(FourLetterWords, NotServing) {
  ServerStatus s = sample_status();
  s.serving = false;
  const std::string ns = "This ZooKeeper instance is not currently serving requests\n";
  for (const char* w : {"srvr", "stat", "conf", "cons", "crst", "srst", "dirs", "dump", "mntr",
                        "wchs", "wchc", "wchp"}) {
    EXPECT_EQ(render(w, s), ns) << w;
  }
  EXPECT_EQ(render("hash", s), "This ZooKeeper instance is not currently serving requests");
  EXPECT_EQ(render("isro", s), "null");
  EXPECT_EQ(render("ruok", s), "imok");
  EXPECT_EQ(render("envi", s).rfind("Environment:\nzookeeper.version=", 0), 0u);
  EXPECT_EQ(render("gtmk", s), "306");
}

// --- helpers -----------------------------------------------------------------------------------

// Expected strings printed by Java 17's Double.toString for the same values.
TEST(JavaFormat, Double) {
  EXPECT_EQ(java_double(0.0), "0.0");
  EXPECT_EQ(java_double(1.3415), "1.3415");
  EXPECT_EQ(java_double(1.5), "1.5");
  EXPECT_EQ(java_double(10.0), "10.0");
  EXPECT_EQ(java_double(0.0001), "1.0E-4");
  EXPECT_EQ(java_double(5e-5), "5.0E-5");
  EXPECT_EQ(java_double(12345678.9), "1.23456789E7");
  EXPECT_EQ(java_double(1234567.0), "1234567.0");
  EXPECT_EQ(java_double(9999999.0), "9999999.0");
  EXPECT_EQ(java_double(10000000.0), "1.0E7");
  EXPECT_EQ(java_double(0.001), "0.001");
  EXPECT_EQ(java_double(0.0123), "0.0123");
  EXPECT_EQ(java_double(100.0), "100.0");
  EXPECT_EQ(java_double(123.4567), "123.4567");
  EXPECT_EQ(java_double(-2.5), "-2.5");
  EXPECT_EQ(java_double(1e21), "1.0E21");
}

TEST(JavaFormat, DateUtc) {
  EXPECT_EQ(java_date_utc(1796014083503LL), "Mon Nov 30 04:48:03 UTC 2026");
  EXPECT_EQ(java_date_utc(0), "Thu Jan 01 00:00:00 UTC 1970");
}

TEST(Version, FullVersionStartsWithCompatVersionAndHasBuildDate) {
  const std::string v = full_version();
  EXPECT_EQ(v.rfind("3.9.4-zkraft-", 0), 0u) << v;
  EXPECT_NE(v.find(", built on "), std::string::npos) << v;
  EXPECT_EQ(v.substr(v.size() - 4), " UTC") << v;
}

TEST(Environment, CurrentProcessFillsKeys) {
  EnvironmentStatus e = current_environment();
  EXPECT_NE(e.os_name, "<NA>");
  EXPECT_NE(e.user_dir, "<NA>");
  EXPECT_GT(e.memory_max_mb, 0);
  auto [open, max] = file_descriptor_counts();
  EXPECT_GE(open, 3);  // at least stdin/stdout/stderr
  EXPECT_GE(max, open);
}

TEST(TraceMask, OneProcessWideMaskSetByStmksEightBytesOrByValue) {
  EXPECT_EQ(text_trace_mask(), kDefaultTraceMask);
  EXPECT_FALSE(set_text_trace_mask_from(std::string("\0\0\0\0\0\0\x01", 7)));  // short: unchanged
  EXPECT_EQ(text_trace_mask(), kDefaultTraceMask);
  EXPECT_TRUE(set_text_trace_mask_from(std::string("\0\0\0\0\0\0\x01\xff", 8)));
  EXPECT_EQ(text_trace_mask(), 0x1ff);
  set_text_trace_mask(-1);
  EXPECT_EQ(text_trace_mask(), -1);
  set_text_trace_mask(kDefaultTraceMask);  // for the other tests of this process
}

}  // namespace
}  // namespace zkraft::server
