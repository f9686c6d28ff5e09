// The key table (server/config_keys.*) and what it drives: both file formats, the flags, --help,
// the warnings for unknown and ignored keys, and conf/standalone.yaml.

#include "server/config_keys.h"

#include <gtest/gtest.h>

#include "command_line_args.h"

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>

#include "server/config.h"
#include "server/raft_replicated_log.h"

namespace zkraft::server {
namespace {

namespace fs = std::filesystem;

std::string conf(const std::string& name) { return std::string(ZKRAFT_SOURCE_DIR) + "/conf/" + name; }

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using cli_testing::Args;

// For every key: a non-default value and a check that reads the Config field directly, so a
// table entry pointing at the wrong field fails here (the parsers go through the table).
struct Sample {
  std::string value;
  std::function<bool(const Config&)> holds;
};

const std::map<std::string, Sample>& samples() {
  static const std::map<std::string, Sample> kSamples = {
      {"client_port", {"3001", [](const Config& c) { return c.client_port == 3001; }}},
      {"client_address", {"192.0.2.7", [](const Config& c) { return c.client_address == "192.0.2.7"; }}},
      {"data_dir", {"/srv/d", [](const Config& c) { return c.data_dir == "/srv/d"; }}},
      {"data_log_dir", {"/srv/l", [](const Config& c) { return c.data_log_dir == "/srv/l"; }}},
      {"tick_time_ms", {"123", [](const Config& c) { return c.tick_time_ms == 123; }}},
      {"min_session_timeout_ms", {"301", [](const Config& c) { return c.min_session_timeout_ms == 301; }}},
      {"max_session_timeout_ms", {"90001", [](const Config& c) { return c.max_session_timeout_ms == 90001; }}},
      {"max_client_connections", {"7", [](const Config& c) { return c.max_client_cnxns == 7; }}},
      {"max_buffer", {"4097", [](const Config& c) { return c.max_buffer == 4097; }}},
      {"global_outstanding_limit", {"11", [](const Config& c) { return c.global_outstanding_limit == 11; }}},
      {"max_outstanding_per_connection",
       {"12", [](const Config& c) { return c.max_outstanding_per_connection == 12; }}},
      {"max_watches_per_connection", {"13", [](const Config& c) { return c.max_watches_per_connection == 13; }}},
      {"four_letter_words",
       {"ruok,stat", [](const Config& c) {
          return c.four_letter_words == std::set<std::string>{"ruok", "stat"};
        }}},
      {"server_id", {"42", [](const Config& c) { return c.server_id == 42; }}},
      {"admin_port", {"9091", [](const Config& c) { return c.admin_port == 9091; }}},
      {"admin_address", {"192.0.2.8", [](const Config& c) { return c.admin_address == "192.0.2.8"; }}},
      // YAML admin_enabled / zoo.cfg admin.enableServer (zoo.cfg-only until the AdminServer came).
      {"admin_enabled", {"false", [](const Config& c) { return !c.admin_enabled && c.admin_port == 0; }}},
      {"admin_command_url", {"/cmd", [](const Config& c) { return c.admin_command_url == "/cmd"; }}},
      {"admin_idle_timeout_ms", {"1234", [](const Config& c) { return c.admin_idle_timeout_ms == 1234; }}},
      {"metrics_provider",
       {"org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider", [](const Config& c) {
          return c.metrics_provider ==
                 "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider";
        }}},
      {"metrics_host", {"192.0.2.9", [](const Config& c) { return c.metrics_host == "192.0.2.9"; }}},
      {"metrics_port", {"7001", [](const Config& c) { return c.metrics_port == 7001; }}},
      {"metrics_export_jvm_info", {"false", [](const Config& c) { return !c.metrics_export_jvm_info; }}},
      {"fsync", {"false", [](const Config& c) { return !c.fsync; }}},
      {"fsync_warning_threshold_ms", {"50", [](const Config& c) { return c.fsync_warning_threshold_ms == 50; }}},
      {"log_level", {"debug", [](const Config& c) { return c.log_level == "debug"; }}},
      {"snap_count", {"5000", [](const Config& c) { return c.snap_count == 5000; }}},
      {"snap_size_limit_kb", {"2048", [](const Config& c) { return c.snap_size_limit_kb == 2048; }}},
      {"reconfig_enabled", {"true", [](const Config& c) { return c.reconfig_enabled; }}},
      {"extended_types_enabled", {"true", [](const Config& c) { return c.extended_types_enabled; }}},
      {"read_only_mode", {"true", [](const Config& c) { return c.read_only_mode; }}},
      {"digest_enabled", {"false", [](const Config& c) { return !c.digest_enabled; }}},
      {"super_digest", {"super:abc=", [](const Config& c) { return c.super_digest == "super:abc="; }}},
      {"container_check_interval_ms",
       {"250", [](const Config& c) { return c.container_check_interval_ms == 250; }}},
      {"container_max_per_minute", {"7", [](const Config& c) { return c.container_max_per_minute == 7; }}},
      {"container_max_never_used_ms",
       {"86400000", [](const Config& c) { return c.container_max_never_used_ms == 86400000; }}},
      {"enforce_quota", {"true", [](const Config& c) { return c.enforce_quota; }}},
      {"joining", {"true", [](const Config& c) { return c.joining; }}},
      {"network_threads", {"3", [](const Config& c) { return c.network_threads == 3; }}},
      {"slow_request_threshold_ms", {"250", [](const Config& c) { return c.slow_request_threshold_ms == 250; }}},
      {"snapshot_in_child_process", {"true", [](const Config& c) { return c.snapshot_in_child_process; }}},
      {"snapshot_appends", {"false", [](const Config& c) { return !c.snapshot_appends; }}},
      {"max_connections", {"500", [](const Config& c) { return c.max_cnxns == 500; }}},
      {"max_client_send_queue_bytes",
       {"1048576", [](const Config& c) { return c.max_client_send_queue_bytes == 1048576; }}},
      {"quorum_auth_enable_sasl", {"true", [](const Config& c) { return c.quorum_auth_enable_sasl; }}},
      {"quorum_auth_learner_require_sasl",
       {"true", [](const Config& c) { return c.quorum_auth_learner_require_sasl; }}},
      {"quorum_auth_server_require_sasl",
       {"true", [](const Config& c) { return c.quorum_auth_server_require_sasl; }}},
      {"quorum_auth_learner_login_context",
       {"L", [](const Config& c) { return c.quorum_auth_learner_login_context == "L"; }}},
      {"quorum_auth_server_login_context",
       {"S", [](const Config& c) { return c.quorum_auth_server_login_context == "S"; }}},
      {"jaas_config_file", {"/etc/jaas.conf", [](const Config& c) { return c.jaas_config_file == "/etc/jaas.conf"; }}},
      {"init_limit", {"8", [](const Config& c) { return c.init_limit == 8; }}},
      {"sync_limit", {"9", [](const Config& c) { return c.sync_limit == 9; }}},
      {"secure_client_port", {"2281", [](const Config& c) { return c.secure_client_port == 2281; }}},
      {"secure_client_address", {"192.0.2.2", [](const Config& c) { return c.secure_client_address == "192.0.2.2"; }}},
      {"ssl_keystore_location", {"/k.p12", [](const Config& c) { return c.ssl_keystore_location == "/k.p12"; }}},
      {"ssl_keystore_password", {"pw1", [](const Config& c) { return c.ssl_keystore_password == "pw1"; }}},
      {"ssl_keystore_type", {"PKCS12", [](const Config& c) { return c.ssl_keystore_type == "PKCS12"; }}},
      {"ssl_truststore_location", {"/ca.pem", [](const Config& c) { return c.ssl_truststore_location == "/ca.pem"; }}},
      {"ssl_truststore_password", {"pw2", [](const Config& c) { return c.ssl_truststore_password == "pw2"; }}},
      {"ssl_truststore_type", {"PEM", [](const Config& c) { return c.ssl_truststore_type == "PEM"; }}},
      {"ssl_client_auth", {"want", [](const Config& c) { return c.ssl_client_auth == "want"; }}},
      {"ssl_protocol", {"TLSv1.2", [](const Config& c) { return c.ssl_protocol == "TLSv1.2"; }}},
      {"ssl_enabled_protocols", {"TLSv1.3", [](const Config& c) { return c.ssl_enabled_protocols == "TLSv1.3"; }}},
      {"ssl_ciphersuites", {"TLS_AES_128_GCM_SHA256", [](const Config& c) { return c.ssl_ciphersuites == "TLS_AES_128_GCM_SHA256"; }}},
      {"ssl_hostname_verification", {"false", [](const Config& c) { return !c.ssl_hostname_verification; }}},
      {"ssl_handshake_timeout_ms", {"1500", [](const Config& c) { return c.ssl_handshake_timeout_ms == 1500; }}},
      {"client_port_unification", {"true", [](const Config& c) { return c.client_port_unification; }}},
      {"client_cert_reload", {"true", [](const Config& c) { return c.client_cert_reload; }}},
      {"tls_super_user", {"CN=admin", [](const Config& c) { return c.x509_super_user == "CN=admin"; }}},
      {"sessionless_timeout_ms", {"7000", [](const Config& c) { return c.sessionless_timeout_ms == 7000; }}},
      {"ssl_quorum", {"true", [](const Config& c) { return c.ssl_quorum; }}},
      {"ssl_quorum_keystore_location", {"/q.p12", [](const Config& c) { return c.ssl_quorum_keystore_location == "/q.p12"; }}},
      {"ssl_quorum_keystore_password", {"qp1", [](const Config& c) { return c.ssl_quorum_keystore_password == "qp1"; }}},
      {"ssl_quorum_keystore_type", {"PKCS12", [](const Config& c) { return c.ssl_quorum_keystore_type == "PKCS12"; }}},
      {"ssl_quorum_truststore_location", {"/qca.pem", [](const Config& c) { return c.ssl_quorum_truststore_location == "/qca.pem"; }}},
      {"ssl_quorum_truststore_password", {"qp2", [](const Config& c) { return c.ssl_quorum_truststore_password == "qp2"; }}},
      {"ssl_quorum_truststore_type", {"PEM", [](const Config& c) { return c.ssl_quorum_truststore_type == "PEM"; }}},
      {"ssl_quorum_protocol", {"TLSv1.2", [](const Config& c) { return c.ssl_quorum_protocol == "TLSv1.2"; }}},
      {"ssl_quorum_enabled_protocols", {"TLSv1.2", [](const Config& c) { return c.ssl_quorum_enabled_protocols == "TLSv1.2"; }}},
      {"ssl_quorum_ciphersuites", {"TLS_AES_256_GCM_SHA384", [](const Config& c) { return c.ssl_quorum_ciphersuites == "TLS_AES_256_GCM_SHA384"; }}},
      {"ssl_quorum_hostname_verification", {"false", [](const Config& c) { return !c.ssl_quorum_hostname_verification; }}},
      {"sasl_login_context", {"ZkServer", [](const Config& c) { return c.sasl_login_context == "ZkServer"; }}},
      {"sasl_super_user", {"admin", [](const Config& c) { return c.sasl_super_user == "admin"; }}},
      {"kerberos_remove_host_from_principal", {"true", [](const Config& c) { return c.kerberos_remove_host; }}},
      {"kerberos_remove_realm_from_principal", {"true", [](const Config& c) { return c.kerberos_remove_realm; }}},
      {"enforce_auth_enabled", {"true", [](const Config& c) { return c.enforce_auth_enabled; }}},
      {"enforce_auth_schemes", {"sasl,digest", [](const Config& c) {
         return c.enforce_auth_schemes == std::set<std::string>{"digest", "sasl"};
       }}},
      {"session_require_client_sasl_auth",
       {"true", [](const Config& c) { return c.session_require_client_sasl_auth; }}},
  };
  return kSamples;
}

TEST(ConfigKeys, NamesAreUniqueAndFieldsMatchTypes) {
  std::set<std::string_view> yaml, zoo, flags;
  for (const ConfigKey& k : config_keys()) {
    SCOPED_TRACE(std::string(k.name()));
    EXPECT_FALSE(k.name().empty());
    EXPECT_FALSE(k.doc.empty());
    EXPECT_EQ(k.doc.find('\n'), std::string_view::npos);
    if (!k.yaml.empty()) {
      EXPECT_TRUE(yaml.insert(k.yaml).second);
    }
    for (auto z : {k.zoo, k.zoo_alias}) {
      if (!z.empty()) {
        EXPECT_TRUE(zoo.insert(z).second) << z;
      }
    }
    if (!k.flag.empty()) {
      EXPECT_TRUE(flags.insert(k.flag).second);
      EXPECT_FALSE(k.flag_arg.empty());
    }
    switch (k.type) {
      case KeyType::kInt: {
        EXPECT_TRUE(std::holds_alternative<int32_t Config::*>(k.field) ||
                    std::holds_alternative<int64_t Config::*>(k.field));
        EXPECT_LE(k.lo, k.hi);
        const int64_t def = std::stoll(key_value_text(k, Config{}));  // the default is in range
        EXPECT_GE(def, k.lo);
        EXPECT_LE(def, k.hi);
        break;
      }
      case KeyType::kBool: EXPECT_TRUE(std::holds_alternative<bool Config::*>(k.field)); break;
      case KeyType::kString: EXPECT_TRUE(std::holds_alternative<std::string Config::*>(k.field)); break;
      case KeyType::kWords:
        EXPECT_TRUE(std::holds_alternative<std::set<std::string> Config::*>(k.field));
        break;
      case KeyType::kServers: EXPECT_TRUE(std::holds_alternative<std::monostate>(k.field)); break;
    }
  }
  EXPECT_EQ(find_yaml_key("servers")->zoo, "server.N");
  EXPECT_EQ(find_zoo_key("server.N"), nullptr);  // server.N lines are not looked up by name
  EXPECT_EQ(find_zoo_key("zookeeper.extendedTypesEnabled"), find_yaml_key("extended_types_enabled"));
}

TEST(ConfigKeys, EveryKeyParsesInBothFormats) {
  size_t checked = 0;
  for (const ConfigKey& k : config_keys()) {
    if (k.type == KeyType::kServers) continue;  // ServerLines / ParsesEveryKey in config_test.cc
    SCOPED_TRACE(std::string(k.name()));
    auto it = samples().find(std::string(k.name()));
    ASSERT_NE(it, samples().end()) << "no sample value for a new key: add one above";
    const Sample& s = it->second;
    std::string err;
    if (!k.yaml.empty()) {
      Config c;
      EXPECT_FALSE(s.holds(c)) << "the sample must differ from the default";
      ASSERT_TRUE(parse_yaml_config(std::string(k.yaml) + ": \"" + s.value + "\"\n", c, &err)) << err;
      EXPECT_TRUE(s.holds(c));
    }
    for (auto zoo : {k.zoo, k.zoo_alias}) {
      if (zoo.empty()) continue;
      Config c;
      ASSERT_TRUE(parse_zoo_cfg(std::string(zoo) + "=" + s.value + "\n", c, &err)) << err;
      EXPECT_TRUE(s.holds(c)) << zoo;
      for (const auto& w : c.warnings) EXPECT_EQ(w.find("unknown"), std::string::npos) << w;
    }
    if (!k.flag.empty()) {
      Args args{"--data-dir", "/d", std::string(k.flag), s.value};
      if (k.name() == "data_dir") args = Args{std::string(k.flag), s.value};
      Config c;
      std::string out;
      ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err, &out)) << err;
      EXPECT_TRUE(s.holds(c)) << k.flag;
    }
    ++checked;
  }
  EXPECT_EQ(checked + 1, config_keys().size());
  EXPECT_EQ(checked, samples().size());  // no stale samples
}

// Every key with a system property: a -D word sets it, and so does that name in zoo.cfg.
TEST(ConfigKeys, EverySystemPropertySetsItsKeyAsADWordAndInZooCfg) {
  std::set<std::string_view> props;
  size_t checked = 0;
  for (const ConfigKey& k : config_keys()) {
    if (k.sysprop.empty()) continue;
    SCOPED_TRACE(std::string(k.sysprop));
    EXPECT_TRUE(props.insert(k.sysprop).second) << "two keys read one property";
    EXPECT_EQ(find_sysprop_key(k.sysprop), &k);
    EXPECT_EQ(find_zoo_key(k.sysprop), &k);
    // Neither another key's zoo.cfg name nor its YAML name.
    for (const ConfigKey& other : config_keys()) {
      if (&other == &k) continue;
      EXPECT_NE(other.zoo, k.sysprop);
      EXPECT_NE(other.zoo_alias, k.sysprop);
    }
    const Sample& s = samples().at(std::string(k.name()));
    std::string err;
    Config c;
    ASSERT_TRUE(apply_system_properties({"-D" + std::string(k.sysprop) + "=" + s.value}, c, &err)) << err;
    EXPECT_TRUE(s.holds(c));
    Config z;
    ASSERT_TRUE(parse_zoo_cfg(std::string(k.sysprop) + "=" + s.value + "\n", z, &err)) << err;
    EXPECT_TRUE(s.holds(z));
    for (const auto& w : z.warnings) EXPECT_EQ(w.find("unknown"), std::string::npos) << w;
    // A "zookeeper.X" property is X in ZooKeeper's zoo.cfg (QuorumPeerConfig's unknown keys).
    if (k.sysprop.rfind("zookeeper.", 0) == 0) {
      EXPECT_EQ(k.zoo, k.sysprop.substr(10));
    }
    ++checked;
  }
  // The ones ZooKeeper users set most: all present.
  for (const char* p : {"zookeeper.enforceQuota", "znode.container.checkIntervalMs",
                        "znode.container.maxPerMinute", "znode.container.maxNeverUsedIntervalMs",
                        "jute.maxbuffer", "zookeeper.extendedTypesEnabled",
                        "zookeeper.DigestAuthenticationProvider.superDigest", "zookeeper.snapCount",
                        "zookeeper.4lw.commands.whitelist", "zookeeper.forceSync",
                        "zookeeper.globalOutstandingLimit", "zookeeper.admin.enableServer",
                        "readonlymode.enabled"}) {
    EXPECT_NE(find_sysprop_key(p), nullptr) << p;
  }
  EXPECT_GE(checked, 12u);
  // Keys ZooKeeper reads from zoo.cfg only have no property: -DtickTime does nothing to ZooKeeper.
  EXPECT_EQ(find_sysprop_key("tickTime"), nullptr);
  EXPECT_EQ(find_sysprop_key("zookeeper.tickTime"), nullptr);
  EXPECT_EQ(find_sysprop_key("clientPort"), nullptr);
}

TEST(ConfigKeys, HelpNamesEverySystemProperty) {
  Args args{"--help"};
  Config c;
  std::string err, out;
  EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), c, &err, &out));
  for (const ConfigKey& k : config_keys()) {
    if (!k.sysprop.empty()) {
      EXPECT_NE(out.find("-D" + std::string(k.sysprop)), std::string::npos) << k.sysprop;
    }
  }
}

TEST(ConfigKeys, BoundsErrorsNameTheKeyAsWritten) {
  for (const ConfigKey& k : config_keys()) {
    if (k.type != KeyType::kInt) continue;
    SCOPED_TRACE(std::string(k.name()));
    const std::string range = "[" + std::to_string(k.lo) + ", " + std::to_string(k.hi) + "]";
    std::vector<int64_t> outside{k.lo - 1};
    if (k.hi < std::numeric_limits<int64_t>::max()) outside.push_back(k.hi + 1);
    for (int64_t v : outside) {
      const std::string msg = std::to_string(v) + " is out of range " + range;
      std::string err;
      Config c;
      if (!k.yaml.empty()) {
        EXPECT_FALSE(parse_yaml_config(std::string(k.yaml) + ": " + std::to_string(v), c, &err));
        EXPECT_EQ(err, "config error: " + std::string(k.yaml) + ": " + msg);
      }
      if (!k.zoo.empty()) {
        EXPECT_FALSE(parse_zoo_cfg(std::string(k.zoo) + "=" + std::to_string(v), c, &err));
        EXPECT_EQ(err, "config error: " + std::string(k.zoo) + ": " + msg);
      }
      if (!k.flag.empty()) {
        Args args{"--data-dir", "/d", std::string(k.flag), std::to_string(v)};
        std::string out;
        EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), c, &err, &out));
        EXPECT_EQ(err, "config error: " + std::string(k.flag) + ": " + msg);
      }
    }
  }
}

TEST(ConfigKeys, NetworkThreads) {
  Config c;
  EXPECT_EQ(c.network_threads, 0);
  std::string err;
  EXPECT_FALSE(parse_yaml_config("network_threads: 65\n", c, &err));
  EXPECT_EQ(err, "config error: network_threads: 65 is out of range [0, 64]");
  ASSERT_TRUE(parse_zoo_cfg("zkraft.networkThreads=64\n", c, &err)) << err;
  EXPECT_EQ(c.network_threads, 64);
  EXPECT_TRUE(c.warnings.empty());  // a key zkraft knows, and ZooKeeper ignores
}

TEST(ConfigWarnings, UnknownZooCfgKeysInOneLine) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("tickTime=5\nsome.unknown.key=1\nautopurge.purgeInterval=24\n", c, &err)) << err;
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            "config warning: zoo.cfg keys unknown to zkraft, ignored (ZooKeeper reads them as system "
            "properties): some.unknown.key, autopurge.purgeInterval");
  EXPECT_EQ(c.tick_time_ms, 5);
  Config d;
  ASSERT_TRUE(parse_zoo_cfg("tickTime=5\nserver.1=h:1:2\n", d, &err)) << err;
  EXPECT_TRUE(d.warnings.empty());
}

TEST(ConfigWarnings, UnknownYamlKeysStayErrors) {
  Config c;
  std::string err;
  EXPECT_FALSE(parse_yaml_config("tick_time_ms: 5\nnetwork_thread: 2\n", c, &err));
  EXPECT_EQ(err, "config error: network_thread: unknown key");
}

TEST(ConfigWarnings, IgnoredKeysAreTheOnesZkraftDoesNotActOn) {
  std::set<std::string> ignored;
  for (const ConfigKey& k : config_keys()) {
    if (!k.ignored.empty()) ignored.insert(std::string(k.name()));
  }
  // The admin keys were on this list until the AdminServer existed (admin_server.h).
  EXPECT_EQ(ignored, (std::set<std::string>{"init_limit"}));
}

TEST(ConfigWarnings, IgnoredKeyWithANonDefaultValueIsReported) {
  std::string err;
  {
    Config c;
    ASSERT_TRUE(parse_zoo_cfg("initLimit=7\n", c, &err)) << err;
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_EQ(c.warnings[0].rfind("config warning: initLimit=7 is ignored: Raft does not use it", 0), 0u)
        << c.warnings[0];
  }
  {
    Config c;  // the default value says nothing
    ASSERT_TRUE(parse_zoo_cfg("initLimit=10\nadmin.serverPort=8080\nadmin.serverAddress=0.0.0.0\n", c, &err));
    EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
  }
  {
    Config c;  // the AdminServer acts on its keys: nothing to warn about
    ASSERT_TRUE(parse_zoo_cfg("admin.serverPort=9090\nadmin.serverAddress=127.0.0.1\n"
                              "admin.commandURL=/cmds\nadmin.idleTimeout=500\n", c, &err));
    EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
    EXPECT_EQ(c.admin_port, 9090);
    EXPECT_EQ(c.admin_address, "127.0.0.1");
    EXPECT_EQ(c.admin_command_url, "/cmds");
    EXPECT_EQ(c.admin_idle_timeout_ms, 500);
  }
  {
    Config c;  // a disabled admin server is what zkraft has: nothing to report
    ASSERT_TRUE(parse_zoo_cfg("admin.serverPort=9090\nadmin.enableServer=false\n", c, &err));
    EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
  }
  {
    Config c;
    ASSERT_TRUE(parse_yaml_config("admin_port: 0\ninit_limit: 10\n", c, &err)) << err;
    EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
    ASSERT_TRUE(parse_yaml_config("admin_port: 9000\ninit_limit: 3\n", c, &err)) << err;
    EXPECT_EQ(c.admin_port, 9000);
    EXPECT_EQ(c.warnings, (std::vector<std::string>{
                              "config warning: init_limit=3 is ignored: Raft does not use it (a follower "
                              "catches up from the log or a snapshot)"}));
  }
  {
    Args args{"--data-dir", "/d", "--admin-port", "9001"};
    Config c;
    std::string out;
    ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err, &out)) << err;
    EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
    EXPECT_EQ(c.admin_port, 9001);
    Args off{"--data-dir", "/d", "--admin-port", "0"};
    Config d;
    ASSERT_TRUE(parse_command_line(off.argc(), off.argv(), d, &err, &out)) << err;
    EXPECT_TRUE(d.warnings.empty());
  }
}

TEST(ConfigWarnings, ExampleYamlFilesAreQuiet) {
  for (const char* name : {"standalone.yaml", "ensemble-3.yaml", "ensemble-5.yaml"}) {
    Config c;
    std::string err;
    ASSERT_TRUE(load_config_file(conf(name), c, &err)) << err;
    EXPECT_TRUE(c.warnings.empty()) << name << ": " << c.warnings[0];
  }
}

TEST(DataLogDir, RaftLogGoesUnderDataLogDirWhenSet) {
  Config c;
  c.data_dir = "/d";
  EXPECT_EQ(raft_log_dir(c), "/d/raft");
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("dataDir=/var/zk\ndataLogDir=/fast/zklog\n", c, &err)) << err;
  EXPECT_EQ(raft_log_dir(c), "/fast/zklog/raft");
  c.data_log_dir = "/log/{id}";
  c.server_id = 3;
  apply_server_identity(c, false, false);
  EXPECT_EQ(raft_log_dir(c), "/log/3/raft");
}

namespace {
// Accepts whatever the log reports; the test only looks at where the log is stored.
struct IgnoringListener : LogListener {
  void on_apply(uint64_t, std::string_view) override {}
  void on_restore(uint64_t, std::string_view) override {}
  std::string on_snapshot_request() override { return {}; }
  bool on_snapshot_write(size_t, const std::function<bool(std::string_view)>&) override { return true; }
  void on_leader_changed(uint64_t, bool) override {}
  void on_read_index(uint64_t, uint64_t, bool) override {}
  void on_peer_message(uint64_t, std::string) override {}
};
}  // namespace

TEST(DataLogDir, TheRaftLogIsWrittenThere) {
  const fs::path root = fs::path(testing::TempDir()) / "zkraft_config_keys_datalogdir";
  fs::remove_all(root);
  fs::create_directories(root / "data");
  fs::create_directories(root / "log");
  Config c;
  c.data_dir = (root / "data").string();
  c.data_log_dir = (root / "log").string();
  c.fsync = false;
  std::string err;
  boost::asio::io_context io;
  {
    IgnoringListener listener;
    auto log = RaftReplicatedLog::create(io, c, &err);
    ASSERT_NE(log, nullptr) << err;
    ASSERT_TRUE(log->start(listener, &err)) << err;  // opens the storage; io never runs
    log->stop();
  }
  EXPECT_TRUE(fs::is_directory(root / "log" / "raft"));
  EXPECT_FALSE(fs::exists(root / "data" / "raft"));
  fs::remove_all(root);
}

TEST(CommandLine, HelpAndVersionReturnTheirTextWithoutExiting) {
  Args args{"--help"};
  Config c;
  std::string err = "stale", out;
  EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), c, &err, &out));
  EXPECT_TRUE(err.empty());
  for (const ConfigKey& k : config_keys()) {
    for (auto name : {k.yaml, k.zoo, k.zoo_alias, k.flag, k.doc}) {
      if (!name.empty()) {
        EXPECT_NE(out.find(name), std::string::npos) << name;
      }
    }
  }
  EXPECT_NE(out.find("--config"), std::string::npos);
  Args version{"--version"};
  EXPECT_FALSE(parse_command_line(version.argc(), version.argv(), c, &err, &out));
  EXPECT_TRUE(err.empty());
  EXPECT_EQ(out.rfind("zkraft ", 0), 0u) << out;
}

// conf/standalone.yaml documents exactly the table's YAML keys, each with the table's doc line in
// the comment block above it. A key line is `key: ...` or, commented out, `# key: ...`.
TEST(StandaloneYaml, DocumentsExactlyTheTableKeys) {
  const std::string text = read(conf("standalone.yaml"));
  ASSERT_FALSE(text.empty());
  const std::regex key_line(R"(^(?:# )?([a-z][a-z_]*):(?: .*)?$)");
  std::map<std::string, std::vector<std::string>> documented;  // key -> comment lines above it
  std::vector<std::string> block;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, key_line)) {
      EXPECT_TRUE(documented.emplace(m[1].str(), block).second) << "listed twice: " << m[1];
      block.clear();
    } else if (line.rfind("#", 0) == 0) {
      block.push_back(line);
    } else {
      block.clear();
    }
  }
  std::set<std::string> in_file, in_table;
  for (const auto& [k, _] : documented) in_file.insert(k);
  for (const ConfigKey& k : config_keys()) {
    if (k.yaml.empty()) continue;
    in_table.insert(std::string(k.yaml));
    auto it = documented.find(std::string(k.yaml));
    if (it == documented.end()) continue;
    const std::string doc = "# " + std::string(k.doc);
    EXPECT_NE(std::find(it->second.begin(), it->second.end(), doc), it->second.end())
        << k.yaml << ": the comment above it should contain \"" << doc << "\"";
  }
  EXPECT_EQ(in_file, in_table);
}

}  // namespace
}  // namespace zkraft::server
