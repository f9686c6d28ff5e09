#include "server/digest_auth.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

namespace zkraft::server {

std::optional<std::string> digest_id(std::string_view cred) {
  auto colon = cred.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  unsigned char hash[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(cred.data()), cred.size(), hash);
  unsigned char b64[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
  int n = EVP_EncodeBlock(b64, hash, SHA_DIGEST_LENGTH);
  std::string id(cred.substr(0, colon));
  id += ':';
  id.append(reinterpret_cast<const char*>(b64), static_cast<size_t>(n));
  return id;
}

}  // namespace zkraft::server
