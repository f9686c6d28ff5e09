// The JAAS file parser against the files ZooKeeper's documentation and tests use, and the errors
// Java's ConfigFile gives for broken ones.
#include "server/jaas_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include <unistd.h>

namespace zkraft::server {
namespace {

JaasPropertyLookup props(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(JaasFile, ReadsServerAndQuorumSectionsAsZooKeeperDocumentsThem) {
  const std::string text = R"(
// The server's users (ZooKeeper Programmer's Guide)
Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_super="adminsecret"
       user_bob="bobsecret";
};
/* quorum peers */
QuorumServer {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_test="test";
};
QuorumLearner {
       org.apache.zookeeper.server.auth.DigestLoginModule REQUIRED
       username="test"
       password="test";
};
# a Kerberos section, unquoted booleans
Client {
  com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true
  keyTab="/tmp/zk.keytab" storeKey=true principal="zookeeper/localhost@EXAMPLE.COM";
};
)";
  std::string error;
  std::optional<JaasFile> file = parse_jaas_file(text, {}, &error);
  ASSERT_TRUE(file) << error;
  ASSERT_EQ(file->sections.size(), 4u);
  const JaasSection* server = file->section("Server");
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(server->modules.size(), 1u);
  EXPECT_EQ(server->modules[0].class_name, "org.apache.zookeeper.server.auth.DigestLoginModule");
  EXPECT_EQ(server->modules[0].flag, JaasControlFlag::kRequired);
  const auto users = jaas_digest_users(*server);
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users[0], std::make_pair(std::string("super"), std::string("adminsecret")));
  EXPECT_EQ(users[1], std::make_pair(std::string("bob"), std::string("bobsecret")));

  const JaasSection* learner = file->section("QuorumLearner");
  ASSERT_NE(learner, nullptr);
  EXPECT_EQ(learner->modules[0].option("username"), "test");
  EXPECT_EQ(learner->modules[0].option("password"), "test");
  EXPECT_TRUE(jaas_digest_users(*learner).empty());

  const JaasSection* client = file->section("Client");
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->modules[0].option("useKeyTab"), "true");
  EXPECT_EQ(client->modules[0].option("keyTab"), "/tmp/zk.keytab");
  EXPECT_EQ(client->modules[0].option("principal"), "zookeeper/localhost@EXAMPLE.COM");
  EXPECT_EQ(client->modules[0].option("missing"), std::nullopt);
  EXPECT_EQ(file->section("server"), nullptr);  // names are case-sensitive, as in Java
}

TEST(JaasFile, SeveralModulesFlagsEscapesAndQuotedNames) {
  const std::string text =
      "\"My App\" { a.B sufficient k=\"say \\\"hi\\\"\\\\\"; c.D Optional; e.F requisite x=1; };";
  std::string error;
  std::optional<JaasFile> file = parse_jaas_file(text, {}, &error);
  ASSERT_TRUE(file) << error;
  const JaasSection* s = file->section("My App");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->modules.size(), 3u);
  EXPECT_EQ(s->modules[0].flag, JaasControlFlag::kSufficient);
  EXPECT_EQ(s->modules[0].option("k"), "say \"hi\"\\");
  EXPECT_EQ(s->modules[1].flag, JaasControlFlag::kOptional);
  EXPECT_TRUE(s->modules[1].options.empty());
  EXPECT_EQ(s->modules[2].flag, JaasControlFlag::kRequisite);
  EXPECT_EQ(s->modules[2].option("x"), "1");
}

TEST(JaasFile, ExpandsPropertiesThroughTheLookup) {
  std::string error;
  std::optional<JaasFile> file = parse_jaas_file(
      "S { m.M required keyTab=\"${user.home}${/}zk.keytab\"; };", props({{"user.home", "/home/z"}}),
      &error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(file->section("S")->modules[0].option("keyTab"), "/home/z/zk.keytab");

  EXPECT_FALSE(parse_jaas_file("S { m.M required k=\"${nope}\"; };", props({}), &error));
  EXPECT_EQ(error, "line 1: property ${nope} is not set");
}

TEST(JaasFile, EmptyFileHasNoSections) {
  std::string error;
  std::optional<JaasFile> file = parse_jaas_file("  // nothing\n# at all\n", {}, &error);
  ASSERT_TRUE(file) << error;
  EXPECT_TRUE(file->sections.empty());
}

TEST(JaasFile, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"Server\n{ m.M required }; ", "line 2: expected option name or ';', found '}'"},
      {"Server m.M required; };", "line 1: expected '{' after section name, found 'm.M'"},
      {"Server {\n m.M always; };", "line 2: control flag always is not required, requisite, "
                                    "sufficient or optional"},
      {"Server { m.M required k v; };", "line 1: expected '=' after option k, found 'v'"},
      {"Server { m.M required k=; };", "line 1: expected value of option k, found ';'"},
      {"Server { m.M required k=\"open; };", "line 1: unterminated quoted string"},
      {"Server { m.M required; }", "line 1: expected ';' after '}', found end of file"},
      {"Server { m.M required;", "line 1: expected login module class name, found end of file"},
      {"S { m.M required; };\nS { m.M required; };", "line 2: section S appears more than once"},
      {"S { m.M required a=1 a=2; };", "line 1: option a given twice"},
      {"/* never closed\n", "line 1: unterminated /* comment"},
      {"S { m.M required k=\"${x\"; };", "line 1: unterminated ${ in \"${x\""},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_FALSE(parse_jaas_file(c.text, {}, &error)) << c.text;
    EXPECT_EQ(error, c.error) << c.text;
  }
}

TEST(JaasFile, LoadNamesThePath) {
  std::string error;
  EXPECT_FALSE(load_jaas_file("/nonexistent/jaas.conf", {}, &error));
  EXPECT_EQ(error, "/nonexistent/jaas.conf: cannot be read");

  char name[] = "/tmp/jaas_file_test_XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(name);
    out << "Server {\n org.apache.zookeeper.server.auth.DigestLoginModule required\n"
           " user_bob=\"secret\";\n};\n";
  }
  std::optional<JaasFile> file = load_jaas_file(name, {}, &error);
  ASSERT_TRUE(file) << error;
  EXPECT_EQ(jaas_digest_users(*file->section("Server")).at(0).second, "secret");
  {
    std::ofstream out(name);
    out << "Server {\n";
  }
  EXPECT_FALSE(load_jaas_file(name, {}, &error));
  EXPECT_EQ(error, std::string(name) + ": line 2: expected login module class name, found end of file");
  std::remove(name);
}

}  // namespace
}  // namespace zkraft::server
