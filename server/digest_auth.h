#pragma once
// ZooKeeper's digest scheme: the credential "user:password" becomes the id
// "user:BASE64(SHA1(user:password))". Like DigestAuthenticationProvider.generateDigest, any bytes
// are a credential: without a ':' the whole credential is the user part, so "" gives
// ":BASE64(SHA1(""))" and "bob" gives "bob:BASE64(SHA1("bob"))".

#include <string>
#include <string_view>

namespace zkraft::server {

std::string digest_id(std::string_view credential);

}  // namespace zkraft::server
