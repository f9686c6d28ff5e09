#include "server/tls_options.h"

#include <algorithm>
#include <cctype>

namespace zkraft::server {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && lower(s.substr(s.size() - tail.size())) == tail;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto push = [&] {
    auto b = cur.find_first_not_of(" \t");
    auto e = cur.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : text) {
    if (c == ',') {
      push();
    } else {
      cur += c;
    }
  }
  push();
  return out;
}

bool fail(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return false;
}

// ZooKeeper's default cipher list on Java 9 and later (X509Util.DEFAULT_CIPHERS_JAVA9): GCM,
// then CBC, then the TLS 1.3 suites.
const char* const kDefaultCiphers[] = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_AES_256_GCM_SHA384",                  "TLS_AES_128_GCM_SHA256",
    "TLS_CHACHA20_POLY1305_SHA256",
};

bool is_tls13_suite(const std::string& name) {
  return name.rfind("TLS_AES_", 0) == 0 || name.rfind("TLS_CHACHA20_", 0) == 0;
}

std::optional<TlsStore> read_store(const std::string& location, const std::string& password,
                                   const std::string& type, const std::string& type_key,
                                   std::string* error, bool* ok) {
  *ok = true;
  if (location.empty()) return std::nullopt;
  TlsStore s;
  s.path = location;
  s.password = password;
  *ok = store_type(type, location, type_key, &s.type, error);
  return s;
}

}  // namespace

bool client_tls_wanted(const Config& cfg) {
  return cfg.secure_client_port > 0 || cfg.client_port_unification;
}

int tls_version_from_name(const std::string& name) {
  if (name == "TLSv1.2") return kTls12;
  if (name == "TLSv1.3") return kTls13;
  return 0;
}

bool store_type(const std::string& type, const std::string& path, const std::string& key,
                TlsStoreType* out, std::string* error) {
  std::string t = lower(type);
  if (t.empty()) {
    if (ends_with(path, ".pem")) {
      t = "pem";
    } else if (ends_with(path, ".p12") || ends_with(path, ".pfx")) {
      t = "pkcs12";
    } else if (ends_with(path, ".jks")) {
      t = "jks";
    } else if (ends_with(path, ".bcfks")) {
      t = "bcfks";
    } else {
      return fail(error, "config error: " + key + ": unable to auto-detect store file type from file name " +
                             path + " (set it to PEM or PKCS12)");
    }
  }
  if (t == "pem") {
    *out = TlsStoreType::kPem;
  } else if (t == "pkcs12") {
    *out = TlsStoreType::kPkcs12;
  } else if (t == "jks") {
    const std::string p12 = (ends_with(path, ".jks") ? path.substr(0, path.size() - 4) : path) + ".p12";
    return fail(error, "config error: " + path + " is a JKS store, which zkraft cannot read; convert it with: keytool -importkeystore -srckeystore " +
                           path + " -destkeystore " + p12 + " -deststoretype PKCS12 (then point the location at it, type PKCS12)");
  } else if (t == "bcfks") {
    return fail(error, "config error: " + key + ": BCFKS stores are not supported; use PEM or PKCS12");
  } else {
    return fail(error, "config error: " + key + ": unknown store type \"" + type +
                           "\" (PEM or PKCS12)");
  }
  return true;
}

bool tls_options_from_config(const Config& cfg, TlsOptions* out, std::string* error) {
  TlsOptions o;
  bool ok = true;
  o.key_store = read_store(cfg.ssl_keystore_location, cfg.ssl_keystore_password,
                           cfg.ssl_keystore_type, "ssl.keyStore.type", error, &ok);
  if (!ok) return false;
  o.trust_store = read_store(cfg.ssl_truststore_location, cfg.ssl_truststore_password,
                             cfg.ssl_truststore_type, "ssl.trustStore.type", error, &ok);
  if (!ok) return false;
  if (!o.key_store) return fail(error, "config error: ssl.keyStore.location: required for TLS on the client port");

  // X509Util.ClientAuth.fromPropertyValue: empty = NEED, case-insensitive.
  const std::string auth = lower(cfg.ssl_client_auth);
  if (auth.empty() || auth == "need") {
    o.client_auth = TlsClientAuth::kNeed;
  } else if (auth == "want") {
    o.client_auth = TlsClientAuth::kWant;
  } else if (auth == "none") {
    o.client_auth = TlsClientAuth::kNone;
  } else {
    return fail(error, "config error: ssl.clientAuth: \"" + cfg.ssl_client_auth +
                           "\" is not need, want or none");
  }
  // No trust store: the system's CAs, as a JVM falls back to its cacerts.

  // SSLContextAndOptions.getEnabledProtocols: the list if given, else the JDK's defaults for the
  // context's protocol (TLSv1.3 enables TLSv1.3 and TLSv1.2, TLSv1.2 only TLSv1.2).
  const int protocol = tls_version_from_name(cfg.ssl_protocol.empty() ? "TLSv1.3" : cfg.ssl_protocol);
  if (protocol == 0) {
    return fail(error, "config error: ssl.protocol: \"" + cfg.ssl_protocol +
                           "\" is not supported (TLSv1.2 or TLSv1.3)");
  }
  std::vector<std::string> enabled = split_list(cfg.ssl_enabled_protocols);
  if (enabled.empty()) {
    o.min_version = kTls12;
    o.max_version = protocol;
  } else {
    o.min_version = kTls13;
    o.max_version = kTls12;
    for (const auto& p : enabled) {
      const int v = tls_version_from_name(p);
      if (v == 0) {
        return fail(error, "config error: ssl.enabledProtocols: \"" + p +
                               "\" is not supported (TLSv1.2 and TLSv1.3 are; older ones are insecure)");
      }
      o.min_version = std::min(o.min_version, v);
      o.max_version = std::max(o.max_version, v);
    }
  }

  std::vector<std::string> ciphers = split_list(cfg.ssl_ciphersuites);
  if (ciphers.empty()) ciphers.assign(std::begin(kDefaultCiphers), std::end(kDefaultCiphers));
  for (auto& c : ciphers) (is_tls13_suite(c) ? o.tls13_suites : o.tls12_ciphers).push_back(c);
  if (o.max_version == kTls13 && o.tls13_suites.empty() && o.min_version == kTls13) {
    return fail(error, "config error: ssl.ciphersuites: no TLS 1.3 suite, but only TLSv1.3 is enabled");
  }
  if (o.min_version == kTls12 && o.max_version == kTls12 && o.tls12_ciphers.empty()) {
    return fail(error, "config error: ssl.ciphersuites: no TLS 1.2 cipher, but only TLSv1.2 is enabled");
  }

  o.hostname_verification = cfg.ssl_hostname_verification;
  o.handshake_timeout_ms = cfg.ssl_handshake_timeout_ms;
  o.port_unification = cfg.client_port_unification;
  o.cert_reload = cfg.client_cert_reload;
  *out = std::move(o);
  return true;
}

bool quorum_tls_options_from_config(const Config& cfg, TlsOptions* out, std::string* error) {
  // The quorum keys mean what the client keys mean: read them through the same rules, then name
  // the quorum key in any message.
  Config q = cfg;
  q.ssl_keystore_location = cfg.ssl_quorum_keystore_location;
  q.ssl_keystore_password = cfg.ssl_quorum_keystore_password;
  q.ssl_keystore_type = cfg.ssl_quorum_keystore_type;
  q.ssl_truststore_location = cfg.ssl_quorum_truststore_location;
  q.ssl_truststore_password = cfg.ssl_quorum_truststore_password;
  q.ssl_truststore_type = cfg.ssl_quorum_truststore_type;
  q.ssl_client_auth = "need";
  q.ssl_protocol = cfg.ssl_quorum_protocol;
  q.ssl_enabled_protocols = cfg.ssl_quorum_enabled_protocols;
  q.ssl_ciphersuites = cfg.ssl_quorum_ciphersuites;
  q.ssl_hostname_verification = cfg.ssl_quorum_hostname_verification;
  if (tls_options_from_config(q, out, error)) return true;
  if (error) {
    for (size_t at = 0; (at = error->find("ssl.", at)) != std::string::npos; at += 11) error->insert(at + 4, "quorum.");
  }
  return false;
}

}  // namespace zkraft::server
