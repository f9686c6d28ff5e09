#include "consensus/peer_transport_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace zkraft::consensus::transport {
namespace {

void put_u64(std::string& out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// Length-prefixed, so that no two different transcripts have the same bytes.
void put_field(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out.append(s);
}

}  // namespace

std::string auth_proof(std::string_view password, ProofRole role, const AuthTranscript& t) {
  std::string msg = "zkraft-peer-auth-1";
  msg.push_back(static_cast<char>(role));
  put_u64(msg, t.from);
  put_u64(msg, t.to);
  put_field(msg, t.cluster);
  put_field(msg, t.user);
  put_field(msg, t.dialer_nonce);
  put_field(msg, t.acceptor_nonce);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // An empty key is valid for HMAC; OpenSSL wants a non-null pointer for it.
  static const unsigned char kEmpty = 0;
  const void* key = password.empty() ? static_cast<const void*>(&kEmpty) : password.data();
  if (HMAC(EVP_sha256(), key, static_cast<int>(password.size()),
           reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out, &len) == nullptr) {
    return {};  // never equal to a real proof: proofs_equal wants kProofBytes on both sides
  }
  return std::string(reinterpret_cast<const char*>(out), len);
}

bool proofs_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size() || a.size() != kProofBytes) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace zkraft::consensus::transport
