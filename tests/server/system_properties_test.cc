// ZooKeeper settings as Java system properties: the -D words of SERVER_JVMFLAGS / JVMFLAGS
// (server/system_properties.cc) and where they stand against the config file and the flags.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "command_line_args.h"
#include "server/config.h"
#include "server/config_keys.h"

namespace zkraft::server {
namespace {

namespace fs = std::filesystem;
using cli_testing::Args;

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path dir = fs::path(testing::TempDir()) / "zkraft_sysprop_test";
  fs::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(JvmFlagWords, SplitsAsTheShellSplitsAnUnquotedVariableServerFlagsFirst) {
  EXPECT_EQ(jvm_flag_words("-Xmx1g  -Da=1\t-Db=\"x y\"", " -Dc=3 \n"),
            (std::vector<std::string>{"-Xmx1g", "-Da=1", "-Db=\"x", "y\"", "-Dc=3"}));
  EXPECT_TRUE(jvm_flag_words(nullptr, nullptr).empty());
  EXPECT_EQ(jvm_flag_words(nullptr, "-Dz"), std::vector<std::string>{"-Dz"});
  EXPECT_TRUE(jvm_flag_words("", "   ").empty());
}

TEST(SystemProperties, KnownPropertiesSetTheirKeysAndEverythingElseIsIgnoredSilently) {
  Config c;
  std::string err;
  ASSERT_TRUE(apply_system_properties(
      {"-Xmx512m", "-XX:+UseG1GC", "-Dlog4j.configuration=file:/x", "-Dzookeeper.log.dir=/var/log",
       "-Dzookeeper.enforceQuota=true", "-Dznode.container.checkIntervalMs=100",
       "-Dzookeeper.no.such.thing=abc", "-Dznode.container.maxPerMinute=60", "-D", "-Dx", "plain",
       "-Dzookeeper.DigestAuthenticationProvider.superDigest=super:a=b="},
      c, &err))
      << err;
  EXPECT_TRUE(c.enforce_quota);
  EXPECT_EQ(c.container_check_interval_ms, 100);
  EXPECT_EQ(c.container_max_per_minute, 60);
  EXPECT_EQ(c.super_digest, "super:a=b=");  // the value is everything after the first '='
  EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
}

TEST(SystemProperties, TheLastWordOfANameWinsAsInTheJvm) {
  Config c;
  std::string err;
  // JVMFLAGS comes after SERVER_JVMFLAGS on zkServer.sh's java command line, so it wins.
  ASSERT_TRUE(apply_system_properties(
      jvm_flag_words("-Dznode.container.checkIntervalMs=5000", "-Dznode.container.checkIntervalMs=7"),
      c, &err))
      << err;
  EXPECT_EQ(c.container_check_interval_ms, 7);
  // An earlier bad value replaced by a later word is never looked at.
  Config d;
  ASSERT_TRUE(apply_system_properties({"-Djute.maxbuffer=lots", "-Djute.maxbuffer=4096"}, d, &err)) << err;
  EXPECT_EQ(d.max_buffer, 4096);
}

TEST(SystemProperties, ABadValueOfAKnownPropertyIsAnErrorNamingTheWord) {
  Config c;
  std::string err;
  EXPECT_FALSE(apply_system_properties({"-Dznode.container.checkIntervalMs=soon"}, c, &err));
  EXPECT_EQ(err.rfind("config error: -Dznode.container.checkIntervalMs: ", 0), 0u) << err;
  EXPECT_FALSE(apply_system_properties({"-Dznode.container.maxPerMinute=0"}, c, &err));
  EXPECT_EQ(err, "config error: -Dznode.container.maxPerMinute: 0 is out of range [1, 2147483647]");
  EXPECT_FALSE(apply_system_properties({"-Dzookeeper.enforceQuota=maybe"}, c, &err));
  EXPECT_EQ(err.rfind("config error: -Dzookeeper.enforceQuota: ", 0), 0u) << err;
}

TEST(SystemProperties, AdminEnableServerFalseDisablesTheAdminPortAsInZooCfg) {
  Config c;
  std::string err;
  ASSERT_TRUE(apply_system_properties({"-Dzookeeper.admin.enableServer=false"}, c, &err)) << err;
  EXPECT_FALSE(c.admin_enabled);
  EXPECT_EQ(c.admin_port, 0);
}

// ZooKeeper: QuorumPeerConfig sets System.setProperty("zookeeper." + key, value) for a zoo.cfg key
// it does not know, after the JVM read the -D words, so zoo.cfg's enforceQuota=false beats
// -Dzookeeper.enforceQuota=true. zkraft: the file beats the -D words, the flags beat both.
TEST(SystemPropertyPrecedence, TheZooCfgBeatsAPropertyAndAFlagBeatsBoth) {
  const std::string cfg = write_file("prec.cfg",
                                     "dataDir=/tmp/zkraft-prec\nclientPort=2999\nenforceQuota=false\n"
                                     "znode.container.checkIntervalMs=900\n");
  Args args{"--config", cfg, "--client-port", "3001"};
  Config c;
  std::string err, out;
  ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err, &out,
                                 {"-Dzookeeper.enforceQuota=true", "-Dznode.container.checkIntervalMs=5",
                                  "-Dznode.container.maxPerMinute=33", "-Djute.maxbuffer=2048"}))
      << err;
  EXPECT_FALSE(c.enforce_quota);                      // zoo.cfg
  EXPECT_EQ(c.container_check_interval_ms, 900);      // zoo.cfg
  EXPECT_EQ(c.container_max_per_minute, 33);          // -D: the file says nothing
  EXPECT_EQ(c.max_buffer, 2048);                      // -D
  EXPECT_EQ(c.client_port, 3001);                     // the flag
}

TEST(SystemPropertyPrecedence, APropertyBeatsZooCfgsOwnDefaults) {
  // A zoo.cfg without admin.serverAddress means 0.0.0.0; a -D given for it still counts.
  const std::string cfg = write_file("defaults.cfg", "dataDir=/tmp/zkraft-prec\n");
  Args args{"--config", cfg};
  Config c;
  std::string err, out;
  ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err, &out,
                                 {"-Dzookeeper.admin.serverAddress=192.0.2.1"}))
      << err;
  EXPECT_EQ(c.admin_address, "192.0.2.1");
}

TEST(SystemPropertyPrecedence, TheYamlFileBeatsAPropertyToo) {
  const std::string cfg = write_file("prec.yaml", "data_dir: /tmp/zkraft-prec\nenforce_quota: true\n");
  Args args{"--config", cfg};
  Config c;
  std::string err, out;
  ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err, &out,
                                 {"-Dzookeeper.enforceQuota=false", "-Dznode.container.maxPerMinute=9"}))
      << err;
  EXPECT_TRUE(c.enforce_quota);
  EXPECT_EQ(c.container_max_per_minute, 9);
}

TEST(SystemPropertyPrecedence, WithoutAFileThePropertiesApplyAndABadOneStopsTheStart) {
  Args args{"--data-dir", "/tmp/zkraft-prec"};
  Config c;
  std::string err, out;
  ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), c, &err, &out,
                                 {"-Dzookeeper.extendedTypesEnabled=true"}))
      << err;
  EXPECT_TRUE(c.extended_types_enabled);
  Config d;
  EXPECT_FALSE(parse_command_line(args.argc(), args.argv(), d, &err, &out, {"-Dzookeeper.snapCount=x"}));
  EXPECT_EQ(err.rfind("config error: -Dzookeeper.snapCount: ", 0), 0u) << err;
  // The form without words reads no environment.
  Config e;
  ASSERT_TRUE(parse_command_line(args.argc(), args.argv(), e, &err, &out)) << err;
  EXPECT_FALSE(e.extended_types_enabled);
}

TEST(ZooCfgSpellings, ZooKeepersSpellingAndThePropertyNameBothWork) {
  std::string err;
  Config a;
  ASSERT_TRUE(parse_zoo_cfg("enforceQuota=true\n", a, &err)) << err;
  EXPECT_TRUE(a.enforce_quota);
  Config b;
  ASSERT_TRUE(parse_zoo_cfg("zookeeper.enforceQuota=true\nznode.container.checkIntervalMs=10\n", b, &err)) << err;
  EXPECT_TRUE(b.enforce_quota);
  EXPECT_EQ(b.container_check_interval_ms, 10);
  EXPECT_TRUE(b.warnings.empty()) << b.warnings[0];
}

}  // namespace
}  // namespace zkraft::server
