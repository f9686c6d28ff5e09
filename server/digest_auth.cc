#include "server/digest_auth.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

namespace zkraft::server {

std::string digest_id(std::string_view cred) {
  const auto colon = cred.find(':');  // npos: the whole credential is the user part
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
