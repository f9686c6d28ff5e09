// The TLS keys (config_keys.h): the client side (secureClientPort, ssl.*, port unification,
// certificate reload, the x509 super user; sessionless_timeout_ms follows them, as --help lists
// it) in client_tls_keys, the server-to-server side (sslQuorum, ssl.quorum.*) in quorum_tls_keys.
#include "server/config_key_sections.h"

#include "server/config_values.h"

namespace zkraft::server {

using namespace config_values;

namespace {

constinit const ConfigKey kClientTlsKeys[] = {
    // Client TLS (server/tls_options.h, server/tls_context.h): ZooKeeper's keys and defaults.
    {.yaml = "secure_client_port", .zoo = "secureClientPort", .type = KeyType::kInt, .lo = 0,
     .hi = kMaxPort, .doc = "TLS-only client port; 0 = none.", .field = &Config::secure_client_port},
    {.yaml = "secure_client_address", .zoo = "secureClientPortAddress", .type = KeyType::kString,
     .doc = "Address the TLS client port binds to; empty = client_address.",
     .field = &Config::secure_client_address},
    {.yaml = "ssl_keystore_location", .zoo = "ssl.keyStore.location",
     .sysprop = "zookeeper.ssl.keyStore.location", .type = KeyType::kString,
     .doc = "The server's certificate chain and private key: a PEM or PKCS12 file.",
     .field = &Config::ssl_keystore_location},
    {.yaml = "ssl_keystore_password", .zoo = "ssl.keyStore.password",
     .sysprop = "zookeeper.ssl.keyStore.password", .type = KeyType::kString,
     .doc = "Password of the key store (PKCS12) or of its encrypted PEM key.",
     .field = &Config::ssl_keystore_password},
    {.yaml = "ssl_keystore_type", .zoo = "ssl.keyStore.type",
     .sysprop = "zookeeper.ssl.keyStore.type", .type = KeyType::kString,
     .doc = "PEM or PKCS12; empty = from the file name (.pem, .p12, .pfx). JKS is refused.",
     .field = &Config::ssl_keystore_type},
    {.yaml = "ssl_truststore_location", .zoo = "ssl.trustStore.location",
     .sysprop = "zookeeper.ssl.trustStore.location", .type = KeyType::kString,
     .doc = "CA certificates client certificates are checked against; empty = the system's.",
     .field = &Config::ssl_truststore_location},
    {.yaml = "ssl_truststore_password", .zoo = "ssl.trustStore.password",
     .sysprop = "zookeeper.ssl.trustStore.password", .type = KeyType::kString,
     .doc = "Password of the trust store (PKCS12).", .field = &Config::ssl_truststore_password},
    {.yaml = "ssl_truststore_type", .zoo = "ssl.trustStore.type",
     .sysprop = "zookeeper.ssl.trustStore.type", .type = KeyType::kString,
     .doc = "PEM or PKCS12; empty = from the file name.", .field = &Config::ssl_truststore_type},
    {.yaml = "ssl_client_auth", .zoo = "ssl.clientAuth", .sysprop = "zookeeper.ssl.clientAuth",
     .type = KeyType::kString,
     .doc = "Client certificates: need (empty: the default), want or none.",
     .field = &Config::ssl_client_auth},
    {.yaml = "ssl_protocol", .zoo = "ssl.protocol", .sysprop = "zookeeper.ssl.protocol",
     .type = KeyType::kString, .doc = "TLSv1.3 or TLSv1.2: the highest version offered.",
     .field = &Config::ssl_protocol},
    {.yaml = "ssl_enabled_protocols", .zoo = "ssl.enabledProtocols",
     .sysprop = "zookeeper.ssl.enabledProtocols", .type = KeyType::kString,
     .doc = "Comma-separated TLS versions accepted (the lowest is the floor); empty = TLSv1.3,TLSv1.2.",
     .field = &Config::ssl_enabled_protocols},
    {.yaml = "ssl_ciphersuites", .zoo = "ssl.ciphersuites", .sysprop = "zookeeper.ssl.ciphersuites",
     .type = KeyType::kString,
     .doc = "Comma-separated cipher suites (IANA names, as Java); empty = ZooKeeper's defaults.",
     .field = &Config::ssl_ciphersuites},
    {.yaml = "ssl_hostname_verification", .zoo = "ssl.hostnameVerification",
     .sysprop = "zookeeper.ssl.hostnameVerification", .type = KeyType::kBool,
     .doc = "Accepted; as in ZooKeeper the server never checks a client's host name.",
     .field = &Config::ssl_hostname_verification},
    {.yaml = "ssl_handshake_timeout_ms", .zoo = "ssl.handshakeDetectionTimeoutMillis",
     .sysprop = "zookeeper.ssl.handshakeDetectionTimeoutMillis", .type = KeyType::kInt, .lo = 1,
     .hi = kMaxInt32, .doc = "A TLS handshake not done this long after accept closes the connection, ms.",
     .field = &Config::ssl_handshake_timeout_ms},
    {.yaml = "client_port_unification", .zoo = "client.portUnification",
     .sysprop = "zookeeper.client.portUnification", .type = KeyType::kBool,
     .doc = "The client port also takes TLS (told apart by the first byte).",
     .field = &Config::client_port_unification},
    {.yaml = "client_cert_reload", .zoo = "client.certReload",
     .sysprop = "zookeeper.client.certReload", .type = KeyType::kBool,
     .doc = "Reload the key and trust stores when their files change; a bad file keeps the old.",
     .field = &Config::client_cert_reload},
    {.yaml = "tls_super_user", .zoo = "X509AuthenticationProvider.superUser",
     .sysprop = "zookeeper.X509AuthenticationProvider.superUser", .type = KeyType::kString,
     .doc = "A client certificate subject (RFC 2253) that bypasses ACLs; empty = none.",
     .field = &Config::x509_super_user},
    {.yaml = "sessionless_timeout_ms", .zoo = "nio.sessionlessCnxnTimeout",
     .sysprop = "zookeeper.nio.sessionlessCnxnTimeout", .type = KeyType::kInt, .lo = 1,
     .hi = kMaxInt32, .doc = "A connection that sent no ConnectRequest this long after accept is closed, ms.",
     .field = &Config::sessionless_timeout_ms},
};

constinit const ConfigKey kQuorumTlsKeys[] = {
    // Peer TLS (sslQuorum): the same meanings as the client ssl.* keys, for server-to-server.
    {.yaml = "ssl_quorum", .zoo = "sslQuorum", .sysprop = "zookeeper.sslQuorum", .type = KeyType::kBool,
     .doc = "Mutual TLS between servers with the ssl_quorum_* stores.", .field = &Config::ssl_quorum},
    {.yaml = "ssl_quorum_keystore_location", .zoo = "ssl.quorum.keyStore.location",
     .sysprop = "zookeeper.ssl.quorum.keyStore.location", .type = KeyType::kString,
     .doc = "This server's certificate chain and key for peers: a PEM or PKCS12 file.",
     .field = &Config::ssl_quorum_keystore_location},
    {.yaml = "ssl_quorum_keystore_password", .zoo = "ssl.quorum.keyStore.password",
     .sysprop = "zookeeper.ssl.quorum.keyStore.password", .type = KeyType::kString,
     .doc = "Password of the quorum key store.", .field = &Config::ssl_quorum_keystore_password},
    {.yaml = "ssl_quorum_keystore_type", .zoo = "ssl.quorum.keyStore.type",
     .sysprop = "zookeeper.ssl.quorum.keyStore.type", .type = KeyType::kString,
     .doc = "PEM or PKCS12; empty = from the file name.", .field = &Config::ssl_quorum_keystore_type},
    {.yaml = "ssl_quorum_truststore_location", .zoo = "ssl.quorum.trustStore.location",
     .sysprop = "zookeeper.ssl.quorum.trustStore.location", .type = KeyType::kString,
     .doc = "CA certificates a peer's certificate must chain to; empty = the system's.",
     .field = &Config::ssl_quorum_truststore_location},
    {.yaml = "ssl_quorum_truststore_password", .zoo = "ssl.quorum.trustStore.password",
     .sysprop = "zookeeper.ssl.quorum.trustStore.password", .type = KeyType::kString,
     .doc = "Password of the quorum trust store.", .field = &Config::ssl_quorum_truststore_password},
    {.yaml = "ssl_quorum_truststore_type", .zoo = "ssl.quorum.trustStore.type",
     .sysprop = "zookeeper.ssl.quorum.trustStore.type", .type = KeyType::kString,
     .doc = "PEM or PKCS12 (quorum trust store); empty = from the file name.",
     .field = &Config::ssl_quorum_truststore_type},
    {.yaml = "ssl_quorum_protocol", .zoo = "ssl.quorum.protocol", .sysprop = "zookeeper.ssl.quorum.protocol",
     .type = KeyType::kString, .doc = "TLSv1.3 or TLSv1.2: the highest version between servers.",
     .field = &Config::ssl_quorum_protocol},
    {.yaml = "ssl_quorum_enabled_protocols", .zoo = "ssl.quorum.enabledProtocols",
     .sysprop = "zookeeper.ssl.quorum.enabledProtocols", .type = KeyType::kString,
     .doc = "TLS versions accepted between servers; empty = TLSv1.3,TLSv1.2.",
     .field = &Config::ssl_quorum_enabled_protocols},
    {.yaml = "ssl_quorum_ciphersuites", .zoo = "ssl.quorum.ciphersuites",
     .sysprop = "zookeeper.ssl.quorum.ciphersuites", .type = KeyType::kString,
     .doc = "Cipher suites between servers (IANA names); empty = ZooKeeper's defaults.",
     .field = &Config::ssl_quorum_ciphersuites},
    {.yaml = "ssl_quorum_hostname_verification", .zoo = "ssl.quorum.hostnameVerification",
     .sysprop = "zookeeper.ssl.quorum.hostnameVerification", .type = KeyType::kBool,
     .doc = "A peer's certificate must name the host it is dialled at.",
     .field = &Config::ssl_quorum_hostname_verification},
};

}  // namespace

std::span<const ConfigKey> client_tls_keys() { return kClientTlsKeys; }
std::span<const ConfigKey> quorum_tls_keys() { return kQuorumTlsKeys; }

}  // namespace zkraft::server
