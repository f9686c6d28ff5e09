#pragma once
// ZooKeeper's digest scheme: "user:password" becomes the id "user:BASE64(SHA1(user:password))".

#include <optional>
#include <string>
#include <string_view>

namespace zkraft::server {

// nullopt when the credentials have no ':' separating user and password.
std::optional<std::string> digest_id(std::string_view user_colon_password);

}  // namespace zkraft::server
