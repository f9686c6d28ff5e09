#pragma once
// ACL rules of ZooKeeper's ZooKeeperServer.checkACL and PrepRequestProcessor.fixupACL, and the
// authentication providers they consult (world, digest, ip; optionally extra equality schemes
// such as sasl or x509 when the server enables them).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jute/data.h"

namespace zkraft::tree {

// Which authentication schemes exist on this server. "digest" and "ip" always exist; extra
// schemes (e.g. "sasl", "x509") match by equality and count as authenticated identities.
struct AuthSchemes {
  std::vector<std::string> extra;

  bool known(std::string_view scheme) const;
  // An authenticated scheme's ids are what an "auth" ACL expands to (digest yes, ip no).
  bool authenticated(std::string_view scheme) const;
};

// True if `auth` may do `perm` on a node with `acl`: an empty ACL allows everything, a "super" id
// allows everything, otherwise some entry granting one of the `perm` bits must be world:anyone or
// match one of the caller's ids of the same scheme.
bool acl_allows(const std::vector<jute::ACL>& acl, int32_t perm, const std::vector<jute::Id>& auth,
                const AuthSchemes& schemes);

// Validates and rewrites an ACL list about to be stored (create, setACL): removes duplicates,
// expands "auth" to the caller's authenticated ids, rejects unknown schemes and malformed ids.
// Returns jute::err::kOk or kInvalidAcl; `out` is the list to store.
int32_t fixup_acl(const std::vector<jute::ACL>& in, const std::vector<jute::Id>& auth,
                  const AuthSchemes& schemes, std::vector<jute::ACL>& out);

// ip provider: `acl_expr` is "a.b.c.d", "a.b.c.d/bits" or an IPv6 form; `addr` the caller's address.
bool ip_matches(std::string_view addr, std::string_view acl_expr);
bool ip_acl_valid(std::string_view acl_expr);
// digest provider: an id is valid when it splits into exactly two parts on ':' (Java split rules).
bool digest_id_valid(std::string_view id);

}  // namespace zkraft::tree
