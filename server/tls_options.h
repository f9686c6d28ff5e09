#pragma once
// TlsOptions: the client port's TLS settings, read from Config (ZooKeeper's ssl.* keys) and
// checked, with ZooKeeper 3.9's defaults (X509Util, SSLContextAndOptions, KeyStoreFileType).
// Pure: no OpenSSL, no files read. server/tls_context.h turns it into an OpenSSL context.
//
// Invariants of a TlsOptions that tls_options_from_config accepted: min_version <= max_version,
// both TLS 1.2 or 1.3; a store with a location has a known type (PEM or PKCS12; JKS and BCFKS
// are refused with the command that converts them); the cipher lists are split by protocol
// (TLS 1.3 suites apart from the TLS 1.2 ones), still in ZooKeeper's (IANA) names.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/config.h"

namespace zkraft::server {

enum class TlsClientAuth { kNone, kWant, kNeed };
enum class TlsStoreType { kPem, kPkcs12 };

inline constexpr int kTls12 = 0x0303;  // TLS1_2_VERSION
inline constexpr int kTls13 = 0x0304;  // TLS1_3_VERSION

struct TlsStore {
  std::string path;
  std::string password;
  TlsStoreType type = TlsStoreType::kPem;
};

struct TlsOptions {
  std::optional<TlsStore> key_store;    // the server's certificate chain and private key
  std::optional<TlsStore> trust_store;  // the CAs client certificates are checked against
  TlsClientAuth client_auth = TlsClientAuth::kNeed;  // ssl.clientAuth (ZooKeeper: need)
  int min_version = kTls12;
  int max_version = kTls13;
  std::vector<std::string> tls12_ciphers;  // IANA names, in preference order
  std::vector<std::string> tls13_suites;   // TLS_AES_*, TLS_CHACHA20_*
  bool hostname_verification = true;  // ssl.hostnameVerification: the server never checks a
                                      // client's host name (ClientX509Util), kept for peers
  int32_t handshake_timeout_ms = 5000;
  bool port_unification = false;  // TLS and plain on the client port
  bool cert_reload = false;       // zookeeper.client.certReload
};

// True when the configuration asks for TLS anywhere on the client side (a secure client port or
// port unification): then tls_options_from_config must succeed for the server to start.
bool client_tls_wanted(const Config& cfg);

// Reads and checks the ssl.* keys. False + one line in *error (naming the key) when a value is
// unusable: a JKS store (with the keytool command that converts it), an unknown store type or
// protocol, a protocol below TLS 1.2, an unknown clientAuth.
bool tls_options_from_config(const Config& cfg, TlsOptions* out, std::string* error);
// The same for the ssl.quorum.* keys (sslQuorum); client_auth is always need: both servers show
// certificates.
bool quorum_tls_options_from_config(const Config& cfg, TlsOptions* out, std::string* error);

// ZooKeeper's store type rule (KeyStoreFileType.fromPropertyValueOrFileName): the type key if
// given (case-insensitive JKS, PEM, PKCS12, BCFKS), else the file name's extension (.jks, .pem,
// .p12, .pfx, .bcfks). `key` names the type key in messages.
bool store_type(const std::string& type, const std::string& path, const std::string& key,
                TlsStoreType* out, std::string* error);

// "TLSv1.2" -> kTls12, "TLSv1.3" -> kTls13; 0 for anything else.
int tls_version_from_name(const std::string& name);

}  // namespace zkraft::server
