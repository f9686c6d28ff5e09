// SaslServer / SaslExchange against Cyrus's own DIGEST-MD5 client, and the pure name rules.
#include "server/sasl_server.h"

#include <gtest/gtest.h>
#include <sasl/sasl.h>

#include <chrono>
#include <cstring>
#include <mutex>

#include "sasl_digest_client.h"
#include "server/sasl_identity.h"

namespace zkraft::server {
namespace {

using testing::ClientCreds;
using testing::DigestClient;

std::unique_ptr<SaslServer> make_server(SaslSettings s = {}) {
  if (s.users.empty()) s.users = {{"bob", "bobs-secret"}, {"alice", "wonder land"}};
  std::string error;
  auto server = SaslServer::create(std::move(s), &error);
  EXPECT_TRUE(server) << error;
  return server;
}

// Runs a whole exchange: the client's first (empty) token, the challenge, the digest response,
// rspauth. Returns the last server step.
SaslExchange::Step run(const SaslServer& server, ClientCreds creds, int* server_steps = nullptr) {
  DigestClient client(std::move(creds));
  std::string error;
  auto ex = server.start(&error);
  EXPECT_TRUE(ex) << error;
  std::string token;
  client.step(std::nullopt, token);  // no initial response: the empty token
  SaslExchange::Step s;
  int steps = 0;
  for (;;) {
    s = ex->step(token);
    ++steps;
    if (s.state != SaslExchange::Step::State::kContinue) break;
    const int crc = client.step(s.token, token);
    EXPECT_TRUE(crc == SASL_CONTINUE || crc == SASL_OK) << crc;
  }
  if (server_steps) *server_steps = steps;
  return s;
}

TEST(SaslServerTest, DigestMd5UserFromTheJaasSectionIsAuthenticatedAsItsName) {
  auto server = make_server();
  int steps = 0;
  auto s = run(*server, {"bob", "bobs-secret", ""}, &steps);
  ASSERT_EQ(s.state, SaslExchange::Step::State::kComplete) << s.error;
  EXPECT_EQ(s.name, "bob");
  ASSERT_TRUE(s.token);  // rspauth, which the client checks
  EXPECT_EQ(s.token->rfind("rspauth=", 0), 0u) << *s.token;
  EXPECT_EQ(steps, 2);  // challenge, then rspauth: as ZooKeeper's DIGEST-MD5 server
  EXPECT_EQ(run(*server, {"alice", "wonder land", ""}).name, "alice");
}

TEST(SaslServerTest, WrongPasswordAndUnknownUserFail) {
  auto server = make_server();
  auto wrong = run(*server, {"bob", "not-it", ""});
  EXPECT_EQ(wrong.state, SaslExchange::Step::State::kFailed);
  EXPECT_FALSE(wrong.token);
  EXPECT_FALSE(wrong.error.empty());
  EXPECT_EQ(run(*server, {"mallory", "bobs-secret", ""}).state, SaslExchange::Step::State::kFailed);
}

TEST(SaslServerTest, RequestedAuthorizationIdIsReplacedByTheAuthenticatedName) {
  auto server = make_server();
  auto s = run(*server, {"bob", "bobs-secret", "alice"});
  ASSERT_EQ(s.state, SaslExchange::Step::State::kComplete) << s.error;
  EXPECT_EQ(s.name, "bob");
}

TEST(SaslServerTest, TwoServersInOneProcessKeepTheirUsersApart) {
  auto a = make_server(SaslSettings{.users = {{"bob", "one"}}, .default_realm = ""});
  auto b = make_server(SaslSettings{.users = {{"bob", "two"}}, .default_realm = ""});
  EXPECT_EQ(run(*a, {"bob", "one", ""}).state, SaslExchange::Step::State::kComplete);
  EXPECT_EQ(run(*b, {"bob", "one", ""}).state, SaslExchange::Step::State::kFailed);
  EXPECT_EQ(run(*b, {"bob", "two", ""}).state, SaslExchange::Step::State::kComplete);
}

TEST(SaslServerTest, AStepAfterTheEndFails) {
  auto server = make_server();
  std::string error;
  auto ex = server->start(&error);
  ASSERT_TRUE(ex);
  auto first = ex->step("");
  ASSERT_EQ(first.state, SaslExchange::Step::State::kContinue);
  ASSERT_TRUE(first.token);
  EXPECT_NE(first.token->find("realm=\"zk-sasl-md5\""), std::string::npos) << *first.token;
  EXPECT_NE(first.token->find("qop=\"auth\""), std::string::npos) << *first.token;
  EXPECT_EQ(ex->step("garbage").state, SaslExchange::Step::State::kFailed);
  EXPECT_EQ(ex->step("").state, SaslExchange::Step::State::kFailed);
}

TEST(SaslServerTest, ExchangeCostIsMicroseconds) {
  // The exchange runs on the state thread (sasl_server.h says why): keep it cheap.
  auto server = make_server();
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kRuns = 50;
  for (int i = 0; i < kRuns; ++i) {
    ASSERT_EQ(run(*server, {"bob", "bobs-secret", ""}).state, SaslExchange::Step::State::kComplete);
  }
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - t0).count() / kRuns;
  std::printf("DIGEST-MD5 exchange, client and server together: %lld us\n",
              static_cast<long long>(us));
  EXPECT_LT(us, 20000);
}

TEST(SaslIdentityTest, ZooKeepersNameFormation) {
  PrincipalRules keep{false, false, "EXAMPLE.COM"};
  EXPECT_EQ(sasl_authorized_id("bob", keep), "bob");
  EXPECT_EQ(sasl_authorized_id("bob/host", keep), "bob/host");  // no '@': a plain name
  EXPECT_EQ(sasl_authorized_id("zk/host.example.com@EXAMPLE.COM", keep),
            "zk/host.example.com@EXAMPLE.COM");
  EXPECT_EQ(sasl_authorized_id("client@EXAMPLE.COM", keep), "client@EXAMPLE.COM");
  PrincipalRules no_host{true, false, "EXAMPLE.COM"};
  EXPECT_EQ(sasl_authorized_id("zk/host@EXAMPLE.COM", no_host), "zk@EXAMPLE.COM");
  PrincipalRules no_realm{false, true, "EXAMPLE.COM"};
  EXPECT_EQ(sasl_authorized_id("zk/host@EXAMPLE.COM", no_realm), "zk/host");
  PrincipalRules neither{true, true, "EXAMPLE.COM"};
  EXPECT_EQ(sasl_authorized_id("zk/host@EXAMPLE.COM", neither), "zk");
  EXPECT_EQ(sasl_authorized_id("client@EXAMPLE.COM", neither), "client");
  // Another realm matches no auth_to_local rule: ZooKeeper keeps the name as it is.
  EXPECT_EQ(sasl_authorized_id("zk/host@OTHER.ORG", neither), "zk/host@OTHER.ORG");
  EXPECT_EQ(sasl_authorized_id("a@b@c", keep), std::nullopt);
  EXPECT_EQ(sasl_authorized_id("a/b/c@R", keep), std::nullopt);
}

TEST(SaslIdentityTest, Krb5DefaultRealmIsReadFromLibdefaultsOnly) {
  EXPECT_EQ(krb5_default_realm("[libdefaults]\n  default_realm = EXAMPLE.COM\n"), "EXAMPLE.COM");
  EXPECT_EQ(krb5_default_realm("# c\n[realms]\n default_realm = NO\n[libdefaults]\n"
                               "\tdns_lookup_kdc = false\n\tdefault_realm=ZK.TEST  \r\n"),
            "ZK.TEST");
  EXPECT_EQ(krb5_default_realm("[libdefaults]\n default_realm_x = NO\n"), "");
  EXPECT_EQ(krb5_default_realm(""), "");
}

TEST(SaslIdentityTest, SuperUser) {
  EXPECT_TRUE(sasl_super_user("admin", "admin"));
  EXPECT_FALSE(sasl_super_user("admin", ""));
  EXPECT_FALSE(sasl_super_user("", ""));
  EXPECT_FALSE(sasl_super_user("bob", "admin"));
}

}  // namespace
}  // namespace zkraft::server
