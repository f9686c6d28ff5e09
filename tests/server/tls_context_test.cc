// Building the client port's TLS context from PEM and PKCS12 stores, the x509 id of a
// certificate (as Java's X500Principal.getName() spells it), and reloads that keep the old
// context when the new files cannot be used. Certificates are made here with OpenSSL.
#include "server/tls_context.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

namespace zkraft::server {
namespace {

namespace fs = std::filesystem;

struct Key {
  EVP_PKEY* k = EVP_EC_gen("P-256");
  ~Key() { EVP_PKEY_free(k); }
};

struct Cert {
  X509* x = X509_new();
  ~Cert() { X509_free(x); }
};

// A certificate for `key` with `subject` (in DER order), signed by `issuer_key` (self-signed when
// null).
void make_cert(Cert& c, const Key& key, const std::vector<std::pair<std::string, std::string>>& subject,
               const Key* issuer_key = nullptr, const Cert* issuer = nullptr) {
  X509_set_version(c.x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c.x), 1);
  X509_gmtime_adj(X509_getm_notBefore(c.x), -60);
  X509_gmtime_adj(X509_getm_notAfter(c.x), 3600);
  X509_set_pubkey(c.x, key.k);
  X509_NAME* name = X509_get_subject_name(c.x);
  for (const auto& [field, value] : subject) {
    X509_NAME_add_entry_by_txt(name, field.c_str(), field == "emailAddress" ? MBSTRING_ASC : MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1, 0);
  }
  X509_set_issuer_name(c.x, issuer ? X509_get_subject_name(issuer->x) : name);
  X509_sign(c.x, issuer_key ? issuer_key->k : key.k, EVP_sha256());
}

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zkraft-tls-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    make_cert(ca_, ca_key_, {{"CN", "test CA"}});
    make_cert(server_, server_key_, {{"O", "zkraft"}, {"CN", "localhost"}}, &ca_key_, &ca_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // PEM key store: the certificate, then the key (encrypted when `password` is not empty).
  std::string write_pem_store(const std::string& name, const Cert& cert, const Key& key,
                              const std::string& password = "") {
    const std::string p = path(name);
    BIO* b = BIO_new_file(p.c_str(), "wb");
    PEM_write_bio_X509(b, cert.x);
    if (password.empty()) {
      PEM_write_bio_PrivateKey(b, key.k, nullptr, nullptr, 0, nullptr, nullptr);
    } else {
      PEM_write_bio_PKCS8PrivateKey(b, key.k, EVP_aes_256_cbc(), password.data(),
                                    static_cast<int>(password.size()), nullptr, nullptr);
    }
    BIO_free(b);
    return p;
  }
  std::string write_pem_certs(const std::string& name, const Cert& cert) {
    const std::string p = path(name);
    BIO* b = BIO_new_file(p.c_str(), "wb");
    PEM_write_bio_X509(b, cert.x);
    BIO_free(b);
    return p;
  }
  std::string write_p12(const std::string& name, const Cert& cert, const Key& key, const std::string& password) {
    const std::string p = path(name);
    PKCS12* p12 = PKCS12_create(password.c_str(), "server", key.k, cert.x, nullptr, 0, 0, 0, 0, 0);
    BIO* b = BIO_new_file(p.c_str(), "wb");
    i2d_PKCS12_bio(b, p12);
    BIO_free(b);
    PKCS12_free(p12);
    return p;
  }

  TlsOptions options(const std::string& key_store, TlsStoreType type, const std::string& password = "") {
    TlsOptions o;
    o.key_store = TlsStore{key_store, password, type};
    o.trust_store = TlsStore{write_pem_certs("ca.pem", ca_), "", TlsStoreType::kPem};
    o.tls12_ciphers = {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"};
    o.tls13_suites = {"TLS_AES_128_GCM_SHA256"};
    return o;
  }

  fs::path dir_;
  Key ca_key_, server_key_;
  Cert ca_, server_;
};

TEST_F(TlsContextTest, PemStoreWithPlainOrEncryptedKey) {
  std::string err;
  EXPECT_NE(build_server_tls_context(options(write_pem_store("s.pem", server_, server_key_), TlsStoreType::kPem), &err),
            nullptr)
      << err;
  const std::string enc = write_pem_store("enc.pem", server_, server_key_, "s3cret");
  EXPECT_NE(build_server_tls_context(options(enc, TlsStoreType::kPem, "s3cret"), &err), nullptr) << err;
  EXPECT_EQ(build_server_tls_context(options(enc, TlsStoreType::kPem, "wrong"), &err), nullptr);
  EXPECT_NE(err.find("private key"), std::string::npos) << err;
  EXPECT_NE(err.find(enc), std::string::npos) << err;
}

TEST_F(TlsContextTest, Pkcs12Store) {
  const std::string p12 = write_p12("s.p12", server_, server_key_, "changeit");
  std::string err;
  EXPECT_NE(build_server_tls_context(options(p12, TlsStoreType::kPkcs12, "changeit"), &err), nullptr) << err;
  EXPECT_EQ(build_server_tls_context(options(p12, TlsStoreType::kPkcs12, "nope"), &err), nullptr);
  EXPECT_NE(err.find("wrong password"), std::string::npos) << err;
  // A PEM file read as PKCS12 is refused, not half-loaded.
  EXPECT_EQ(build_server_tls_context(options(write_pem_store("s.pem", server_, server_key_), TlsStoreType::kPkcs12), &err),
            nullptr);
  EXPECT_NE(err.find("PKCS12"), std::string::npos) << err;
}

TEST_F(TlsContextTest, KeyThatDoesNotMatchTheCertificateIsRefused) {
  Key other;
  std::string err;
  EXPECT_EQ(build_server_tls_context(options(write_pem_store("bad.pem", server_, other), TlsStoreType::kPem), &err),
            nullptr);
  EXPECT_NE(err.find("does not match"), std::string::npos) << err;
  EXPECT_EQ(build_server_tls_context(options(path("missing.pem"), TlsStoreType::kPem), &err), nullptr);
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
}

TEST_F(TlsContextTest, SubjectAsJavaSpellsIt) {
  Key k;
  Cert c;
  make_cert(c, k, {{"C", "US"}, {"O", "Acme, Inc"}, {"OU", "ops"}, {"CN", "client one"}});
  EXPECT_EQ(x509_subject_rfc2253(c.x), "CN=client one,OU=ops,O=Acme\\, Inc,C=US");
  Cert e;
  make_cert(e, k, {{"emailAddress", "a@b"}, {"CN", "#x "}});
  // Unknown to Java's RFC 2253 keywords: OID=#DER (IA5String "a@b"); leading # and trailing space escaped.
  EXPECT_EQ(x509_subject_rfc2253(e.x), "CN=\\#x\\ ,1.2.840.113549.1.9.1=#1603614062");
}

TEST_F(TlsContextTest, ReloadTakesNewFilesAndKeepsTheOldOnesWhenTheyAreBad) {
  const std::string store = write_pem_store("s.pem", server_, server_key_);
  TlsOptions o = options(store, TlsStoreType::kPem);
  o.cert_reload = true;
  std::string err;
  auto first = build_server_tls_context(o, &err);
  ASSERT_NE(first, nullptr) << err;
  TlsContextSource source(o, first);
  EXPECT_FALSE(source.reload_if_changed());  // nothing changed
  EXPECT_EQ(source.current(), first);

  { std::ofstream(store, std::ios::trunc) << "-----BEGIN CERTIFICATE-----\ngarbage\n"; }
  EXPECT_FALSE(source.reload_if_changed());
  EXPECT_EQ(source.current(), first);
  EXPECT_EQ(source.failed_reloads(), 1u);
  EXPECT_FALSE(source.reload_if_changed());  // the same bad file is not retried in a loop
  EXPECT_EQ(source.failed_reloads(), 1u);

  Key k2;
  Cert c2;
  make_cert(c2, k2, {{"CN", "localhost"}}, &ca_key_, &ca_);
  const std::string fresh = write_pem_store("fresh.pem", c2, k2);
  fs::rename(fresh, store);  // as tools replace files: a new inode
  EXPECT_TRUE(source.reload_if_changed());
  EXPECT_NE(source.current(), first);
  EXPECT_EQ(source.reloads(), 1u);
  X509* now = SSL_CTX_get0_certificate(source.current()->native_handle());
  ASSERT_NE(now, nullptr);
  EXPECT_EQ(X509_cmp(now, c2.x), 0);
}

}  // namespace
}  // namespace zkraft::server
