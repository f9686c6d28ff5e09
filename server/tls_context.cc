#include "server/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstdio>
#include <vector>

namespace zkraft::server {

namespace asio = boost::asio;

namespace {

std::string openssl_error() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

struct BioFree { void operator()(BIO* b) const { BIO_free(b); } };
struct X509Free { void operator()(X509* x) const { X509_free(x); } };
struct PkeyFree { void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); } };
struct P12Free { void operator()(PKCS12* p) const { PKCS12_free(p); } };
struct ChainFree { void operator()(STACK_OF(X509)* s) const { sk_X509_pop_free(s, X509_free); } };
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Chain = std::unique_ptr<STACK_OF(X509), ChainFree>;

// What a store file holds, whatever its format.
struct StoreContents {
  Pkey key;
  std::vector<Cert> certs;  // a key store: the leaf first, then its chain
};

int pem_password(char* buf, int size, int, void* u) {
  const auto* pw = static_cast<const std::string*>(u);
  const int n = std::min<int>(size, static_cast<int>(pw->size()));
  std::copy_n(pw->data(), n, buf);
  return n;
}

bool load_store(const TlsStore& store, bool want_key, StoreContents* out, std::string* error) {
  ERR_clear_error();
  Bio bio(BIO_new_file(store.path.c_str(), "rb"));
  if (!bio) {
    *error = store.path + ": cannot open (" + openssl_error() + ")";
    return false;
  }
  if (store.type == TlsStoreType::kPkcs12) {
    std::unique_ptr<PKCS12, P12Free> p12(d2i_PKCS12_bio(bio.get(), nullptr));
    if (!p12) {
      *error = store.path + ": not a PKCS12 file (" + openssl_error() + ")";
      return false;
    }
    EVP_PKEY* key = nullptr;
    X509* cert = nullptr;
    STACK_OF(X509)* ca = nullptr;
    if (!PKCS12_parse(p12.get(), store.password.c_str(), &key, &cert, &ca)) {
      *error = store.path + ": cannot read the PKCS12 store (wrong password?): " + openssl_error();
      return false;
    }
    out->key.reset(key);
    if (cert) out->certs.emplace_back(cert);
    Chain chain(ca);
    while (chain && sk_X509_num(chain.get()) > 0) out->certs.emplace_back(sk_X509_shift(chain.get()));
  } else {
    // PEM: certificates and (for a key store) one private key, in any order.
    std::string text;
    {
      char buf[4096];
      int n;
      while ((n = BIO_read(bio.get(), buf, sizeof buf)) > 0) text.append(buf, n);
    }
    Bio certs_bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    while (X509* c = PEM_read_bio_X509(certs_bio.get(), nullptr, nullptr, nullptr)) out->certs.emplace_back(c);
    ERR_clear_error();
    if (want_key) {
      Bio key_bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
      std::string pw = store.password;
      out->key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, pem_password, &pw));
      if (!out->key) {
        *error = store.path + ": no readable private key (wrong password?): " + openssl_error();
        return false;
      }
    }
  }
  if (out->certs.empty()) {
    *error = store.path + ": no certificate in the store";
    return false;
  }
  if (want_key && !out->key) {
    *error = store.path + ": no private key in the store";
    return false;
  }
  return true;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ":") + n;
  return out;
}

bool file_signature(const std::string& path, std::string* out) {
  if (path.empty()) return true;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *out += path + ":missing;";
    return false;
  }
  *out += path + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
          std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ";";
  return true;
}

// RFC 2253 escaping as Java's X500Principal.getName() applies it.
std::string escape_rdn_value(const std::string& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    const bool special = c == ',' || c == '+' || c == '"' || c == '\\' || c == '<' || c == '>' || c == ';';
    if (special || (i == 0 && (c == '#' || c == ' ')) || (i + 1 == v.size() && c == ' ')) out += '\\';
    out += c;
  }
  return out;
}

std::string der_hex(const ASN1_STRING* s) {
  // The value's DER encoding: universal tag, length, content.
  std::string der;
  der += static_cast<char>(ASN1_STRING_type(s) & 0x1f);
  const int n = ASN1_STRING_length(s);
  if (n < 128) {
    der += static_cast<char>(n);
  } else {
    std::string len;
    for (int m = n; m > 0; m >>= 8) len.insert(len.begin(), static_cast<char>(m & 0xff));
    der += static_cast<char>(0x80 | len.size());
    der += len;
  }
  der.append(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), n);
  static const char* kHex = "0123456789abcdef";
  std::string out = "#";
  for (unsigned char c : der) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

}  // namespace

std::shared_ptr<asio::ssl::context> build_server_tls_context(const TlsOptions& o, std::string* error,
                                                             bool both_roles) {
  auto ctx = std::make_shared<asio::ssl::context>(both_roles ? asio::ssl::context::tls
                                                             : asio::ssl::context::tls_server);
  SSL_CTX* c = ctx->native_handle();
  SSL_CTX_set_options(c, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_min_proto_version(c, o.min_version);
  SSL_CTX_set_max_proto_version(c, o.max_version);

  std::vector<std::string> tls12;
  for (const auto& name : o.tls12_ciphers) {
    const char* ossl = OPENSSL_cipher_name(name.c_str());
    if (ossl != nullptr && std::string(ossl) != "(NONE)") tls12.emplace_back(ossl);
  }
  if (o.min_version <= kTls12) {
    if (tls12.empty()) {
      *error = "ssl.ciphersuites: none of the TLS 1.2 ciphers is known to OpenSSL";
      return nullptr;
    }
    if (!SSL_CTX_set_cipher_list(c, join(tls12).c_str())) {
      *error = "ssl.ciphersuites: " + openssl_error();
      return nullptr;
    }
  }
  if (o.max_version >= kTls13 && !o.tls13_suites.empty() &&
      !SSL_CTX_set_ciphersuites(c, join(o.tls13_suites).c_str())) {
    *error = "ssl.ciphersuites: " + openssl_error();
    return nullptr;
  }

  StoreContents keys;
  if (!o.key_store) {
    *error = "ssl.keyStore.location: not set";
    return nullptr;
  }
  if (!load_store(*o.key_store, true, &keys, error)) return nullptr;
  ERR_clear_error();
  if (SSL_CTX_use_certificate(c, keys.certs[0].get()) != 1 ||
      SSL_CTX_use_PrivateKey(c, keys.key.get()) != 1 || SSL_CTX_check_private_key(c) != 1) {
    *error = o.key_store->path + ": the private key does not match the certificate: " + openssl_error();
    return nullptr;
  }
  for (size_t i = 1; i < keys.certs.size(); ++i) {
    SSL_CTX_add1_chain_cert(c, keys.certs[i].get());
  }

  if (o.trust_store) {
    StoreContents trust;
    if (!load_store(*o.trust_store, false, &trust, error)) return nullptr;
    X509_STORE* store = SSL_CTX_get_cert_store(c);
    for (const auto& cert : trust.certs) X509_STORE_add_cert(store, cert.get());
    // Also what the server names as acceptable CAs in its CertificateRequest.
    for (const auto& cert : trust.certs) SSL_CTX_add_client_CA(c, cert.get());
  } else {
    SSL_CTX_set_default_verify_paths(c);
  }
  switch (o.client_auth) {
    case TlsClientAuth::kNeed:
      ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
      break;
    case TlsClientAuth::kWant: ctx->set_verify_mode(asio::ssl::verify_peer); break;
    case TlsClientAuth::kNone: ctx->set_verify_mode(asio::ssl::verify_none); break;
  }
  // Session resumption with client certificates needs a context id.
  static const unsigned char kSessionContext[] = "zkraft-client";
  SSL_CTX_set_session_id_context(c, kSessionContext, sizeof kSessionContext - 1);
  return ctx;
}

std::string x509_subject_rfc2253(X509* cert) {
  const X509_NAME* name = X509_get_subject_name(cert);
  const int n = X509_NAME_entry_count(name);
  std::string out;
  int prev_set = -1;
  for (int i = n - 1; i >= 0; --i) {
    const X509_NAME_ENTRY* e = X509_NAME_get_entry(name, i);
    const int set = X509_NAME_ENTRY_set(e);
    if (!out.empty()) out += set == prev_set ? "+" : ",";
    prev_set = set;
    const ASN1_OBJECT* obj = X509_NAME_ENTRY_get_object(e);
    const ASN1_STRING* value = X509_NAME_ENTRY_get_data(e);
    const char* keyword = nullptr;
    switch (OBJ_obj2nid(obj)) {
      case NID_commonName: keyword = "CN"; break;
      case NID_countryName: keyword = "C"; break;
      case NID_localityName: keyword = "L"; break;
      case NID_stateOrProvinceName: keyword = "ST"; break;
      case NID_streetAddress: keyword = "STREET"; break;
      case NID_organizationName: keyword = "O"; break;
      case NID_organizationalUnitName: keyword = "OU"; break;
      case NID_domainComponent: keyword = "DC"; break;
      case NID_userId: keyword = "UID"; break;
      default: break;
    }
    if (keyword == nullptr) {
      char oid[128];
      OBJ_obj2txt(oid, sizeof oid, obj, 1);
      out += std::string(oid) + "=" + der_hex(value);
      continue;
    }
    unsigned char* utf8 = nullptr;
    const int len = ASN1_STRING_to_UTF8(&utf8, value);
    std::string text = len >= 0 ? std::string(reinterpret_cast<char*>(utf8), len) : std::string();
    OPENSSL_free(utf8);
    out += std::string(keyword) + "=" + escape_rdn_value(text);
  }
  return out;
}

TlsContextSource::TlsContextSource(TlsOptions options, std::shared_ptr<asio::ssl::context> initial)
    : options_(std::move(options)), current_(std::move(initial)), signature_(signature()) {}

TlsContextSource::~TlsContextSource() = default;

std::shared_ptr<asio::ssl::context> TlsContextSource::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::string TlsContextSource::signature() const {
  std::string sig;
  if (options_.key_store) file_signature(options_.key_store->path, &sig);
  if (options_.trust_store) file_signature(options_.trust_store->path, &sig);
  return sig;
}

bool TlsContextSource::reload_if_changed() {
  const std::string sig = signature();
  if (sig == signature_) return false;
  signature_ = sig;
  std::string error;
  auto next = build_server_tls_context(options_, &error);
  if (!next) {
    ++failed_reloads_;
    spdlog::warn("TLS: the key or trust store changed but cannot be loaded, keeping the previous ones: {}", error);
    return false;
  }
  {
    std::lock_guard lock(mu_);
    current_ = std::move(next);
  }
  ++reloads_;
  spdlog::info("TLS: reloaded the key and trust stores (new connections use them)");
  return true;
}

void TlsContextSource::watch(asio::any_io_executor ex) {
  if (!options_.cert_reload) return;
  timer_ = std::make_unique<asio::steady_timer>(ex);
  arm();
}

void TlsContextSource::arm() {
  timer_->expires_after(std::chrono::seconds(1));
  timer_->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    reload_if_changed();
    arm();
  });
}

void TlsContextSource::stop() {
  if (timer_) timer_->cancel();
}

}  // namespace zkraft::server
