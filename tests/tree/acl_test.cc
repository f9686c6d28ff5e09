#include "tree/acl.h"

#include <gtest/gtest.h>

#include "jute/errors.h"

namespace zkraft::tree {
namespace {

using jute::ACL;
using jute::Id;
namespace perms = jute::perms;
namespace err = jute::err;

const AuthSchemes kSchemes{};

TEST(AclTest, EmptyAclAllowsEverything) {
  EXPECT_TRUE(acl_allows({}, perms::kAdmin, {}, kSchemes));
}

TEST(AclTest, WorldAnyone) {
  std::vector<ACL> acl{{perms::kRead, {"world", "anyone"}}};
  EXPECT_TRUE(acl_allows(acl, perms::kRead, {}, kSchemes));
  EXPECT_FALSE(acl_allows(acl, perms::kWrite, {}, kSchemes));
  // Any requested bit granted is enough (getACL asks for READ|ADMIN).
  EXPECT_TRUE(acl_allows(acl, perms::kRead | perms::kAdmin, {}, kSchemes));
}

TEST(AclTest, SuperBypassesEverything) {
  std::vector<ACL> acl{{perms::kRead, {"digest", "u:hash"}}};
  EXPECT_FALSE(acl_allows(acl, perms::kDelete, {{"digest", "u:hash"}}, kSchemes));
  EXPECT_TRUE(acl_allows(acl, perms::kDelete, {{"super", ""}}, kSchemes));
}

TEST(AclTest, DigestMatchesByEquality) {
  std::vector<ACL> acl{{perms::kAll, {"digest", "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ="}}};
  EXPECT_TRUE(acl_allows(acl, perms::kWrite, {{"digest", "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ="}}, kSchemes));
  EXPECT_FALSE(acl_allows(acl, perms::kWrite, {{"digest", "u:other"}}, kSchemes));
  // Same id under another scheme does not match.
  EXPECT_FALSE(acl_allows(acl, perms::kWrite, {{"ip", "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ="}}, kSchemes));
}

TEST(AclTest, IpExactAndCidr) {
  EXPECT_TRUE(ip_matches("127.0.0.1", "127.0.0.1"));
  EXPECT_FALSE(ip_matches("127.0.0.2", "127.0.0.1"));
  EXPECT_TRUE(ip_matches("203.1.2.3", "203.0.0.0/8"));
  EXPECT_FALSE(ip_matches("11.1.2.3", "203.0.0.0/8"));
  EXPECT_TRUE(ip_matches("198.51.100.200", "198.51.100.128/25"));
  EXPECT_FALSE(ip_matches("198.51.100.100", "198.51.100.128/25"));
  EXPECT_TRUE(ip_matches("1.2.3.4", "0.0.0.0/0"));
  EXPECT_FALSE(ip_matches("1.2.3.4", "1.2.3.4/33"));
  EXPECT_FALSE(ip_matches("1.2.3.4", "garbage"));
  EXPECT_TRUE(ip_matches("::1", "0:0:0:0:0:0:0:1"));
  EXPECT_TRUE(ip_matches("fe80::1234", "fe80::/16"));
  EXPECT_FALSE(ip_matches("fe81::1", "fe80::/16"));
  EXPECT_FALSE(ip_matches("127.0.0.1", "::1"));  // v4 vs v6 never match

  std::vector<ACL> acl{{perms::kRead, {"ip", "203.0.0.0/8"}}};
  EXPECT_TRUE(acl_allows(acl, perms::kRead, {{"ip", "203.9.9.9"}}, kSchemes));
  EXPECT_FALSE(acl_allows(acl, perms::kRead, {{"ip", "127.0.0.1"}}, kSchemes));
}

TEST(AclTest, IdValidity) {
  EXPECT_TRUE(digest_id_valid("u:hash"));
  EXPECT_TRUE(digest_id_valid(":hash"));
  EXPECT_FALSE(digest_id_valid("nocolon"));
  EXPECT_FALSE(digest_id_valid("u:"));
  EXPECT_FALSE(digest_id_valid("a:b:c"));
  EXPECT_TRUE(ip_acl_valid("1.2.3.4"));
  EXPECT_TRUE(ip_acl_valid("1.2.3.0/24"));
  EXPECT_FALSE(ip_acl_valid("1.2.3.0/40"));
  EXPECT_FALSE(ip_acl_valid("1.2.3"));
  EXPECT_FALSE(ip_acl_valid("256.1.1.1"));
  EXPECT_FALSE(ip_acl_valid("host.example"));
}

TEST(AclTest, FixupRemovesDuplicatesAndKeepsOrder) {
  std::vector<ACL> in{{perms::kRead, {"world", "anyone"}},
                      {perms::kAll, {"ip", "1.2.3.4"}},
                      {perms::kRead, {"world", "anyone"}}};
  std::vector<ACL> out;
  ASSERT_EQ(fixup_acl(in, {}, kSchemes, out), err::kOk);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], in[0]);
  EXPECT_EQ(out[1], in[1]);
}

TEST(AclTest, FixupExpandsAuthToAuthenticatedIdsOnly) {
  std::vector<ACL> in{{perms::kAll, {"auth", ""}}};
  std::vector<Id> auth{{"ip", "127.0.0.1"}, {"digest", "u:h"}, {"super", ""}};
  std::vector<ACL> out;
  ASSERT_EQ(fixup_acl(in, auth, kSchemes, out), err::kOk);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (ACL{perms::kAll, {"digest", "u:h"}}));
  // Only ip identities: nothing to expand to.
  EXPECT_EQ(fixup_acl(in, {{"ip", "127.0.0.1"}}, kSchemes, out), err::kInvalidAcl);
}

TEST(AclTest, FixupRejects) {
  std::vector<ACL> out;
  EXPECT_EQ(fixup_acl({}, {}, kSchemes, out), err::kInvalidAcl);
  EXPECT_EQ(fixup_acl({{perms::kAll, {"world", "someone"}}}, {}, kSchemes, out), err::kInvalidAcl);
  EXPECT_EQ(fixup_acl({{perms::kAll, {"digest", "nocolon"}}}, {}, kSchemes, out), err::kInvalidAcl);
  EXPECT_EQ(fixup_acl({{perms::kAll, {"ip", "nonsense"}}}, {}, kSchemes, out), err::kInvalidAcl);
  EXPECT_EQ(fixup_acl({{perms::kAll, {"sasl", "bob"}}}, {}, kSchemes, out), err::kInvalidAcl);
  EXPECT_EQ(fixup_acl({{perms::kAll, {"super", ""}}}, {}, kSchemes, out), err::kInvalidAcl);
}

TEST(AclTest, ExtraSchemesWhenEnabled) {
  AuthSchemes schemes{{"sasl"}};
  std::vector<ACL> out;
  EXPECT_EQ(fixup_acl({{perms::kAll, {"sasl", "bob"}}}, {}, schemes, out), err::kOk);
  EXPECT_TRUE(acl_allows(out, perms::kRead, {{"sasl", "bob"}}, schemes));
  EXPECT_FALSE(acl_allows(out, perms::kRead, {{"sasl", "eve"}}, schemes));
  // sasl identities are authenticated, so "auth" expands to them.
  EXPECT_EQ(fixup_acl({{perms::kAll, {"auth", ""}}}, {{"sasl", "bob"}}, schemes, out), err::kOk);
  EXPECT_EQ(out[0].id, (Id{"sasl", "bob"}));
}

}  // namespace
}  // namespace zkraft::tree
