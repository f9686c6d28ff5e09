// RequestPipeline, authentication: the SASL exchange (op 102) with a JAAS file's users, the
// identity it leaves for later requests and writes, the super user, and enforcement.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "pipeline_fixture.h"
#include "sasl_digest_client.h"
#include "server/sasl_config.h"

namespace zkraft::server::testing {
namespace {

const char* kJaas =
    "Server {\n"
    "  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
    "  user_bob=\"bobsecret\"\n"
    "  user_admin=\"adminsecret\";\n"
    "};\n";

std::string write_jaas(const char* text) {
  char path[] = "/tmp/zkraft-jaas-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

class PipelineSaslTest : public PipelineTest {
 protected:
  PipelineSaslTest() : jaas(write_jaas(kJaas)) { config.jaas_config_file = jaas; }
  ~PipelineSaslTest() override { std::remove(jaas.c_str()); }

  // The SASL requests of one DIGEST-MD5 exchange on `conn`, xids from `xid`; returns the error of
  // the last reply. Frames before the exchange: `seen`.
  int32_t authenticate(uint64_t conn, const std::string& user, const std::string& password,
                       int32_t xid = 1) {
    DigestClient client(ClientCreds{user, password, ""});
    std::string token;
    client.step(std::nullopt, token);
    for (int i = 0; i < 4; ++i, ++xid) {
      const size_t before = frames(conn);
      request(conn, xid, op::kSasl, jute::GetSASLRequest{jute::Buffer{token, false}});
      EXPECT_EQ(frames(conn), before + 1);
      auto r = frame(conn, before, op::kSasl);
      EXPECT_EQ(r.header.xid, xid);
      EXPECT_EQ(r.header.zxid, 0);
      if (r.header.err != err::kOk) return r.header.err;
      const auto& resp = std::get<jute::SetSASLResponse>(r.body);
      if (resp.token.bytes.rfind("rspauth=", 0) == 0) return err::kOk;  // the last step
      client.step(resp.token.bytes, token);
    }
    return err::kSystemError;
  }
  std::vector<jute::ClientInfo> who_am_i(uint64_t conn, int32_t xid) {
    const size_t at = frames(conn);
    request(conn, xid, op::kWhoAmI, jute::EmptyRequest{});
    return std::get<jute::WhoAmIResponse>(frame(conn, at, op::kWhoAmI).body).client_info;
  }

  std::string jaas;
};

TEST_F(PipelineSaslTest, ADigestMd5ExchangeAddsTheSaslIdentityForLaterRequestsAndWrites) {
  start();
  handshake(1);
  EXPECT_EQ(authenticate(1, "bob", "bobsecret"), err::kOk);
  EXPECT_FALSE(io.gone(1));
  const auto who = who_am_i(1, 10);
  EXPECT_EQ(who, (std::vector<jute::ClientInfo>{{"ip", "127.0.0.1"}, {"sasl", "bob"}}));
  // A write carries it to wherever the entry applies (the leader's ACL check, on every server).
  request(1, 11, op::kCreate, create_request("/s", "x"));
  const Txn t = proposed(log.proposed().size() - 1);
  EXPECT_NE(std::find(t.auth.begin(), t.auth.end(), jute::Id{"sasl", "bob"}), t.auth.end());
}

TEST_F(PipelineSaslTest, SaslAclsAreEnforcedForOtherIdentities) {
  start();
  handshake(1);
  ASSERT_EQ(authenticate(1, "bob", "bobsecret"), err::kOk);
  jute::CreateRequest c = create_request("/only-bob", "x");
  c.acl = {jute::ACL{jute::perms::kAll, {"sasl", "bob"}}};
  request(1, 10, op::kCreate, c);
  log.commit_all();
  EXPECT_EQ(frame(1, frames(1) - 1, op::kCreate).header.err, err::kOk);
  handshake(2);
  ASSERT_EQ(authenticate(2, "admin", "adminsecret"), err::kOk);
  request(2, 10, op::kGetData, jute::GetDataRequest{"/only-bob", false});
  EXPECT_EQ(frame(2, frames(2) - 1, op::kGetData).header.err, err::kNoAuth);
  request(1, 11, op::kGetData, jute::GetDataRequest{"/only-bob", false});
  EXPECT_EQ(frame(1, frames(1) - 1, op::kGetData).header.err, err::kOk);
}

TEST_F(PipelineSaslTest, AWrongPasswordIsAuthFailedWithANullTokenThenTheConnectionCloses) {
  start();
  handshake(1);
  EXPECT_EQ(authenticate(1, "bob", "not-it"), err::kAuthFailed);
  EXPECT_TRUE(io.closed_after_flush(1));
  auto raw = io.sent(1).back();
  // header (4 + 16) then the null buffer (-1)
  EXPECT_EQ(raw.substr(raw.size() - 4), std::string("\xff\xff\xff\xff", 4));
}

TEST_F(PipelineSaslTest, TheSuperUserGetsSuperToo) {
  config.sasl_super_user = "admin";
  start();
  handshake(1);
  ASSERT_EQ(authenticate(1, "admin", "adminsecret"), err::kOk);
  const auto who = who_am_i(1, 10);
  EXPECT_EQ(who, (std::vector<jute::ClientInfo>{{"ip", "127.0.0.1"}, {"super", ""}, {"sasl", "admin"}}));
}

TEST_F(PipelineSaslTest, RequiredSaslRefusesAnUnauthenticatedRequestAndClosesTheConnection) {
  config.session_require_client_sasl_auth = true;
  start();
  handshake(1);
  request(1, 5, op::kGetData, jute::GetDataRequest{"/", false});
  auto r = frame(1, 1, op::kGetData);
  EXPECT_EQ(r.header.xid, 5);
  EXPECT_EQ(r.header.zxid, 0);
  EXPECT_EQ(r.header.err, err::kSessionClosedRequireSaslAuth);
  EXPECT_TRUE(io.closed_after_flush(1));
  // Authenticated first: served.
  handshake(2);
  ASSERT_EQ(authenticate(2, "bob", "bobsecret"), err::kOk);
  request(2, 9, op::kGetData, jute::GetDataRequest{"/", false});
  EXPECT_EQ(frame(2, frames(2) - 1, op::kGetData).header.err, err::kOk);
  EXPECT_FALSE(io.closed_after_flush(2));
  // A failed exchange says SASL was required.
  handshake(3);
  EXPECT_EQ(authenticate(3, "bob", "wrong"), err::kSessionClosedRequireSaslAuth);
  EXPECT_TRUE(io.closed_after_flush(3));
}

TEST_F(PipelineTest, EnforcedDigestLetsADigestSessionThroughAndWritesAreRefusedToo) {
  config.enforce_auth_enabled = true;
  config.enforce_auth_schemes = {"digest"};
  start();
  handshake(1);
  request(1, 1, op::kCreate, create_request("/x", "d"));
  EXPECT_EQ(frame(1, 1, op::kCreate).header.err, err::kSessionClosedRequireSaslAuth);
  EXPECT_TRUE(log.proposed().size() == 1);  // only the session: the create was never proposed
  handshake(2);
  request(2, jute::xid::kAuth, op::kAuth, auth_packet("digest", "joe:pw"));
  create(2, 1, "/y");
  EXPECT_EQ(frame(2, 2, op::kCreate).header.err, err::kOk);
}

// Without a JAAS file ZooKeeper 3.9.4 has no SaslServer on the connection and answers a SASL
// token with OK, a null token and zxid 0, keeping the connection (differential_raw.py).
TEST_F(PipelineTest, WithoutAJaasFileSaslIsOkWithANullTokenAndEnforcingSaslCannotStart) {
  start();
  handshake(1);
  request(1, 1, op::kSasl, jute::GetSASLRequest{});
  auto reply = frame(1, 1, op::kSasl);
  EXPECT_EQ(reply.header.err, err::kOk);
  EXPECT_EQ(reply.header.zxid, 0);
  EXPECT_TRUE(std::get<jute::SetSASLResponse>(reply.body).token.is_null);
  EXPECT_FALSE(io.gone(1));
  std::string error;
  Config c;
  c.session_require_client_sasl_auth = true;
  EXPECT_FALSE(auth_enforcement(c, &error));
  EXPECT_NE(error.find("Authentication scheme sasl is not available"), std::string::npos) << error;
}

TEST(SaslConfigTest, SettingsComeFromTheNamedSectionAndMistakesAreOneLine) {
  const std::string path = write_jaas(
      "Server { org.apache.zookeeper.server.auth.DigestLoginModule required user_bob=\"b\"; };\n"
      "Other { org.apache.zookeeper.server.auth.DigestLoginModule required user_eve=\"e\"; };\n");
  Config c;
  std::string error;
  EXPECT_FALSE(sasl_settings(c, &error));  // no JAAS file: no SASL, no error
  EXPECT_EQ(error, "");
  c.jaas_config_file = path;
  auto s = sasl_settings(c, &error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->users, (std::map<std::string, std::string>{{"bob", "b"}}));
  c.sasl_login_context = "Other";
  EXPECT_EQ(sasl_settings(c, &error)->users, (std::map<std::string, std::string>{{"eve", "e"}}));
  // A readable file without the section: no SASL and no error, as ZooKeeper starts then
  // (ServerCnxnFactory.configureSaslLogin in 3.9.4; ZooKeeper 3.8 run by hand with
  // -Dzookeeper.sasl.serverconfig=Other serves, without a log line).
  c.sasl_login_context = "Missing";
  error.clear();
  EXPECT_FALSE(sasl_settings(c, &error));
  EXPECT_EQ(error, "");
  c.jaas_config_file = path + ".absent";
  error.clear();
  EXPECT_FALSE(sasl_settings(c, &error));
  EXPECT_NE(error.find(".absent"), std::string::npos) << error;
  std::remove(path.c_str());
  EXPECT_EQ(extra_auth_schemes(c), (std::vector<std::string>{"sasl"}));
  EXPECT_EQ(extra_auth_schemes(Config{}), (std::vector<std::string>{}));
  Config tls;
  tls.client_port_unification = true;  // TLS on the client side: the x509 scheme exists
  EXPECT_EQ(extra_auth_schemes(tls), (std::vector<std::string>{"x509"}));
  tls.jaas_config_file = "/some/file";
  EXPECT_EQ(extra_auth_schemes(tls), (std::vector<std::string>{"x509", "sasl"}));
  tls.enforce_auth_enabled = true;
  tls.enforce_auth_schemes = {"x509", "sasl"};
  EXPECT_TRUE(auth_enforcement(tls, &error)) << error;
}

TEST(SaslConfigTest, EnforcementAsAuthenticationHelper) {
  std::string error;
  Config c;
  auto off = auth_enforcement(c, &error);
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->enabled);
  EXPECT_TRUE(off->authenticated({}));
  c.enforce_auth_enabled = true;
  EXPECT_FALSE(auth_enforcement(c, &error));
  EXPECT_NE(error.find("zookeeper.enforce.auth.schemes must be"), std::string::npos);
  c.enforce_auth_schemes = {"digest", "ip"};
  auto on = auth_enforcement(c, &error);
  ASSERT_TRUE(on);
  EXPECT_FALSE(on->sasl_required);
  EXPECT_FALSE(on->authenticated({{"world", "anyone"}}));
  EXPECT_TRUE(on->authenticated({{"ip", "127.0.0.1"}}));
  c.enforce_auth_schemes = {"x509"};
  EXPECT_FALSE(auth_enforcement(c, &error));
  // sessionRequireClientSASLAuth wins over the other two.
  c.jaas_config_file = "/some/file";
  c.session_require_client_sasl_auth = true;
  auto sasl = auth_enforcement(c, &error);
  ASSERT_TRUE(sasl) << error;
  EXPECT_EQ(sasl->schemes, (std::set<std::string>{"sasl"}));
  EXPECT_TRUE(sasl->sasl_required);
  EXPECT_FALSE(sasl->authenticated({{"ip", "127.0.0.1"}, {"digest", "a:b"}}));
  EXPECT_TRUE(sasl->authenticated({{"sasl", "bob"}}));
}

}  // namespace
}  // namespace zkraft::server::testing
