// TlsOptions from the ssl.* keys: ZooKeeper's defaults, store types, the JKS refusal, the
// protocol floor and ceiling, the cipher split, and the keys' spellings in zoo.cfg and -D words.
#include "server/tls_options.h"

#include <gtest/gtest.h>

#include "server/config.h"

namespace zkraft::server {
namespace {

Config tls_config() {
  Config c;
  c.secure_client_port = 2281;
  c.ssl_keystore_location = "/etc/zk/server.pem";
  c.ssl_truststore_location = "/etc/zk/ca.pem";
  return c;
}

TEST(TlsOptions, ZooKeeperDefaults) {
  TlsOptions o;
  std::string err;
  ASSERT_TRUE(tls_options_from_config(tls_config(), &o, &err)) << err;
  EXPECT_EQ(o.client_auth, TlsClientAuth::kNeed);
  EXPECT_EQ(o.min_version, kTls12);
  EXPECT_EQ(o.max_version, kTls13);
  ASSERT_TRUE(o.key_store.has_value());
  EXPECT_EQ(o.key_store->type, TlsStoreType::kPem);
  EXPECT_EQ(o.handshake_timeout_ms, 5000);
  // X509Util's Java 9+ list: 12 TLS 1.2 ciphers, GCM first, then the 3 TLS 1.3 suites.
  ASSERT_EQ(o.tls12_ciphers.size(), 12u);
  EXPECT_EQ(o.tls12_ciphers.front(), "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
  EXPECT_EQ(o.tls13_suites, (std::vector<std::string>{"TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256",
                                                       "TLS_CHACHA20_POLY1305_SHA256"}));
  EXPECT_FALSE(o.port_unification);
  EXPECT_FALSE(o.cert_reload);
}

TEST(TlsOptions, WantedOnlyWithASecurePortOrUnification) {
  Config c;
  EXPECT_FALSE(client_tls_wanted(c));
  c.client_port_unification = true;
  EXPECT_TRUE(client_tls_wanted(c));
  c = Config{};
  c.secure_client_port = 2281;
  EXPECT_TRUE(client_tls_wanted(c));
}

TEST(TlsOptions, StoreTypeFromKeyOrFileName) {
  TlsStoreType t{};
  std::string err;
  EXPECT_TRUE(store_type("", "/a/b.p12", "k", &t, &err));
  EXPECT_EQ(t, TlsStoreType::kPkcs12);
  EXPECT_TRUE(store_type("", "/a/b.PFX", "k", &t, &err));
  EXPECT_EQ(t, TlsStoreType::kPkcs12);
  EXPECT_TRUE(store_type("", "/a/b.pem", "k", &t, &err));
  EXPECT_EQ(t, TlsStoreType::kPem);
  EXPECT_TRUE(store_type("pkcs12", "/a/store", "k", &t, &err));
  EXPECT_EQ(t, TlsStoreType::kPkcs12);
  EXPECT_TRUE(store_type("PEM", "/a/b.p12", "k", &t, &err));  // the key wins over the name
  EXPECT_EQ(t, TlsStoreType::kPem);
  EXPECT_FALSE(store_type("", "/a/store", "ssl.keyStore.type", &t, &err));
  EXPECT_NE(err.find("ssl.keyStore.type"), std::string::npos) << err;
  EXPECT_FALSE(store_type("XYZ", "/a/b.pem", "ssl.trustStore.type", &t, &err));
  EXPECT_NE(err.find("XYZ"), std::string::npos) << err;
}

TEST(TlsOptions, JksIsRefusedWithTheKeytoolCommand) {
  Config c = tls_config();
  c.ssl_keystore_location = "/etc/zk/server.jks";
  TlsOptions o;
  std::string err;
  EXPECT_FALSE(tls_options_from_config(c, &o, &err));
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_NE(err.find("keytool -importkeystore -srckeystore /etc/zk/server.jks -destkeystore "
                     "/etc/zk/server.p12 -deststoretype PKCS12"),
            std::string::npos)
      << err;
  c = tls_config();
  c.ssl_truststore_location = "/etc/zk/trust";
  c.ssl_truststore_type = "JKS";
  EXPECT_FALSE(tls_options_from_config(c, &o, &err));
  EXPECT_NE(err.find("keytool"), std::string::npos) << err;
}

TEST(TlsOptions, ClientAuth) {
  for (auto [text, want] : {std::pair{"", TlsClientAuth::kNeed}, {"NEED", TlsClientAuth::kNeed},
                            {"want", TlsClientAuth::kWant}, {"None", TlsClientAuth::kNone}}) {
    Config c = tls_config();
    c.ssl_client_auth = text;
    TlsOptions o;
    std::string err;
    ASSERT_TRUE(tls_options_from_config(c, &o, &err)) << text << ": " << err;
    EXPECT_EQ(o.client_auth, want) << text;
  }
  Config c = tls_config();
  c.ssl_client_auth = "sometimes";
  TlsOptions o;
  std::string err;
  EXPECT_FALSE(tls_options_from_config(c, &o, &err));
  EXPECT_NE(err.find("ssl.clientAuth"), std::string::npos) << err;
}

TEST(TlsOptions, ProtocolsSetFloorAndCeiling) {
  struct Case {
    const char* protocol;
    const char* enabled;
    int min, max;
  };
  for (const Case& k : {Case{"TLSv1.3", "", kTls12, kTls13}, Case{"TLSv1.2", "", kTls12, kTls12},
                        Case{"TLSv1.3", "TLSv1.3", kTls13, kTls13},
                        Case{"TLSv1.3", "TLSv1.3, TLSv1.2", kTls12, kTls13},
                        Case{"TLSv1.2", "TLSv1.2", kTls12, kTls12}}) {
    Config c = tls_config();
    c.ssl_protocol = k.protocol;
    c.ssl_enabled_protocols = k.enabled;
    TlsOptions o;
    std::string err;
    ASSERT_TRUE(tls_options_from_config(c, &o, &err)) << err;
    EXPECT_EQ(o.min_version, k.min) << k.protocol << " / " << k.enabled;
    EXPECT_EQ(o.max_version, k.max) << k.protocol << " / " << k.enabled;
  }
  for (auto [key, protocol, enabled] : {std::tuple{"ssl.enabledProtocols", "TLSv1.3", "TLSv1.1,TLSv1.2"},
                                        {"ssl.protocol", "TLSv1", ""},
                                        {"ssl.protocol", "SSLv3", ""}}) {
    Config c = tls_config();
    c.ssl_protocol = protocol;
    c.ssl_enabled_protocols = enabled;
    TlsOptions o;
    std::string err;
    EXPECT_FALSE(tls_options_from_config(c, &o, &err)) << protocol << enabled;
    EXPECT_NE(err.find(key), std::string::npos) << err;
  }
}

TEST(TlsOptions, CiphersAreSplitByProtocol) {
  Config c = tls_config();
  c.ssl_ciphersuites = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_AES_128_GCM_SHA256";
  TlsOptions o;
  std::string err;
  ASSERT_TRUE(tls_options_from_config(c, &o, &err)) << err;
  EXPECT_EQ(o.tls12_ciphers, std::vector<std::string>{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"});
  EXPECT_EQ(o.tls13_suites, std::vector<std::string>{"TLS_AES_128_GCM_SHA256"});
  // Only TLS 1.3 enabled but no TLS 1.3 suite: nothing could be negotiated.
  c.ssl_enabled_protocols = "TLSv1.3";
  c.ssl_ciphersuites = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384";
  EXPECT_FALSE(tls_options_from_config(c, &o, &err));
  EXPECT_NE(err.find("ssl.ciphersuites"), std::string::npos) << err;
}

TEST(TlsOptions, KeysReadFromZooCfgAndSystemProperties) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("dataDir=/tmp/x\nsecureClientPort=2281\nssl.keyStore.location=/k.p12\n"
                            "ssl.keyStore.password=pw\nssl.clientAuth=want\nclient.portUnification=true\n"
                            "ssl.enabledProtocols=TLSv1.3\n",
                            c, &err))
      << err;
  EXPECT_EQ(c.secure_client_port, 2281);
  EXPECT_EQ(c.ssl_keystore_location, "/k.p12");
  EXPECT_EQ(c.ssl_keystore_password, "pw");
  EXPECT_EQ(c.ssl_client_auth, "want");
  EXPECT_TRUE(c.client_port_unification);
  ASSERT_TRUE(apply_system_properties({"-Dzookeeper.ssl.trustStore.location=/ca.pem",
                                       "-Dzookeeper.X509AuthenticationProvider.superUser=CN=admin",
                                       "-Dzookeeper.client.certReload=true"},
                                      c, &err))
      << err;
  EXPECT_EQ(c.ssl_truststore_location, "/ca.pem");
  EXPECT_EQ(c.x509_super_user, "CN=admin");
  EXPECT_TRUE(c.client_cert_reload);
  TlsOptions o;
  ASSERT_TRUE(tls_options_from_config(c, &o, &err)) << err;
  EXPECT_EQ(o.key_store->type, TlsStoreType::kPkcs12);
  EXPECT_EQ(o.client_auth, TlsClientAuth::kWant);
  EXPECT_EQ(o.min_version, kTls13);
  EXPECT_TRUE(o.port_unification);
  EXPECT_TRUE(o.cert_reload);
}

TEST(TlsOptions, ValidateRefusesAJksStoreAtStartUp) {
  Config c = tls_config();
  c.data_dir = "/tmp/x";
  c.ssl_keystore_location = "/etc/zk/keystore.jks";
  std::string err;
  EXPECT_FALSE(validate_config(c, &err));
  EXPECT_EQ(err.rfind("config error: ", 0), 0u) << err;
  EXPECT_NE(err.find("keytool"), std::string::npos) << err;
  c = tls_config();
  c.data_dir = "/tmp/x";
  EXPECT_TRUE(validate_config(c, &err)) << err;
}

}  // namespace
}  // namespace zkraft::server
