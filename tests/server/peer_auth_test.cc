// server/peer_auth: quorum authentication settings from ZooKeeper's keys and a JAAS file.

#include "server/peer_auth.h"

#include <gtest/gtest.h>

namespace zkraft::server {
namespace {

JaasFile parse(const std::string& text) {
  std::string error;
  auto f = parse_jaas_file(text, [](std::string_view) { return std::nullopt; }, &error);
  EXPECT_TRUE(f) << error;
  return f ? *f : JaasFile{};
}

const char* kRig = R"(
QuorumServer { org.apache.zookeeper.server.auth.DigestLoginModule required
               user_test="pw1" user_other="pw2"; };
QuorumLearner { org.apache.zookeeper.server.auth.DigestLoginModule required
                username="test" password="pw1"; };
)";

Config enabled() {
  Config c;
  c.quorum_auth_enable_sasl = true;
  c.quorum_auth_learner_require_sasl = true;
  c.quorum_auth_server_require_sasl = true;
  return c;
}

TEST(PeerAuth, ZooKeeperRigBecomesTransportOptions) {
  std::string error;
  auto o = peer_auth_from_jaas(enabled(), parse(kRig), &error);
  ASSERT_TRUE(o) << error;
  EXPECT_TRUE(o->enabled && o->require_inbound && o->require_outbound);
  EXPECT_EQ(o->user, "test");
  EXPECT_EQ(o->password, "pw1");
  ASSERT_TRUE(o->password_of);
  EXPECT_EQ(o->password_of("test"), "pw1");
  EXPECT_EQ(o->password_of("other"), "pw2");
  EXPECT_EQ(o->password_of("nobody"), std::nullopt);
}

TEST(PeerAuth, OtherSectionNamesFollowTheLoginContextKeys) {
  Config c = enabled();
  c.quorum_auth_learner_login_context = "L";
  c.quorum_auth_server_login_context = "S";
  std::string error;
  EXPECT_FALSE(peer_auth_from_jaas(c, parse(kRig), &error));
  EXPECT_NE(error.find("no section 'L'"), std::string::npos) << error;
  auto o = peer_auth_from_jaas(c, parse(R"(
S { org.apache.zookeeper.server.auth.DigestLoginModule required user_a="x"; };
L { org.apache.zookeeper.server.auth.DigestLoginModule required username="a" password="x"; };)"), &error);
  ASSERT_TRUE(o) << error;
  EXPECT_EQ(o->user, "a");
}

TEST(PeerAuth, KerberosAndIncompleteSectionsAreRefusedWithALine) {
  std::string error;
  EXPECT_FALSE(peer_auth_from_jaas(enabled(), parse(R"(
QuorumServer { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };
QuorumLearner { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };)"), &error));
  EXPECT_NE(error.find("Krb5LoginModule"), std::string::npos) << error;
  EXPECT_FALSE(peer_auth_from_jaas(enabled(), parse(R"(
QuorumServer { org.apache.zookeeper.server.auth.DigestLoginModule required user_a="x"; };
QuorumLearner { org.apache.zookeeper.server.auth.DigestLoginModule required username="a"; };)"), &error));
  EXPECT_NE(error.find("password"), std::string::npos) << error;
  EXPECT_FALSE(peer_auth_from_jaas(enabled(), parse(R"(
QuorumServer { org.apache.zookeeper.server.auth.DigestLoginModule required; };
QuorumLearner { org.apache.zookeeper.server.auth.DigestLoginModule required username="a" password="x"; };)"), &error));
  EXPECT_NE(error.find("no user_NAME"), std::string::npos) << error;
}

TEST(PeerAuth, ZooKeepersSwitchRules) {
  Config c;
  EXPECT_EQ(check_quorum_auth_switches(c), "");
  std::string error;
  auto off = peer_auth_options(c, &error);
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->enabled);
  c.quorum_auth_server_require_sasl = true;
  EXPECT_NE(check_quorum_auth_switches(c), "");
  c.quorum_auth_enable_sasl = true;
  EXPECT_EQ(check_quorum_auth_switches(c),
            "quorum.auth.learnerRequireSasl is disabled, so cannot enable quorum.auth.serverRequireSasl");
  c.quorum_auth_learner_require_sasl = true;
  EXPECT_EQ(check_quorum_auth_switches(c), "");
  EXPECT_FALSE(peer_auth_options(c, &error));  // enabled without a JAAS file
  EXPECT_NE(error.find("no JAAS file"), std::string::npos) << error;
  Config learner_only;
  learner_only.quorum_auth_learner_require_sasl = true;
  EXPECT_EQ(check_quorum_auth_switches(learner_only),
            "quorum.auth.enableSasl is disabled, so cannot enable quorum.auth.learnerRequireSasl");
}

}  // namespace
}  // namespace zkraft::server
