#include "server/config_keys.h"

#include <algorithm>

#include "server/config_values.h"

namespace zkraft::server {

using namespace config_values;

namespace {

// In the order conf/standalone.yaml documents them.
const ConfigKey kKeys[] = {
    {.yaml = "client_port", .zoo = "clientPort", .flag = "--client-port", .flag_arg = "PORT",
     .type = KeyType::kInt, .lo = 0, .hi = kMaxPort,
     .doc = "Client port (0 = any free port).", .field = &Config::client_port},
    {.yaml = "client_address", .zoo = "clientPortAddress", .flag = "--client-address",
     .flag_arg = "ADDRESS", .type = KeyType::kString,
     .doc = "Address the client port binds to (zoo.cfg default 0.0.0.0: all interfaces).",
     .field = &Config::client_address, .zoo_default = "0.0.0.0"},
    {.yaml = "data_dir", .zoo = "dataDir", .flag = "--data-dir", .flag_arg = "DIR",
     .type = KeyType::kString,
     .doc = "Directory for myid and, unless data_log_dir is set, the Raft log. Required.",
     .field = &Config::data_dir},
    {.yaml = "data_log_dir", .zoo = "dataLogDir", .type = KeyType::kString,
     .doc = "Directory whose raft/ subdirectory holds the Raft log and snapshots; empty = data_dir.",
     .field = &Config::data_log_dir},
    {.yaml = "tick_time_ms", .zoo = "tickTime", .flag = "--tick-time", .flag_arg = "MS",
     .type = KeyType::kInt, .lo = 1, .hi = kMaxInt32,
     .doc = "Base time unit in milliseconds (zoo.cfg default 3000).",
     .field = &Config::tick_time_ms, .zoo_default = "3000"},
    {.yaml = "min_session_timeout_ms", .zoo = "minSessionTimeout", .type = KeyType::kInt,
     .lo = -1, .hi = kMaxInt32,
     .doc = "Smallest session timeout granted, ms; -1 = 2 x tick_time_ms.",
     .field = &Config::min_session_timeout_ms},
    {.yaml = "max_session_timeout_ms", .zoo = "maxSessionTimeout", .type = KeyType::kInt,
     .lo = -1, .hi = kMaxInt32,
     .doc = "Largest session timeout granted, ms; -1 = 20 x tick_time_ms.",
     .field = &Config::max_session_timeout_ms},
    {.yaml = "max_client_connections", .zoo = "maxClientCnxns", .type = KeyType::kInt, .lo = 0,
     .hi = kMaxInt32, .doc = "Most concurrent connections from one client IP; 0 = unlimited.",
     .field = &Config::max_client_cnxns},
    {.yaml = "max_buffer", .zoo = "jute.maxbuffer", .sysprop = "jute.maxbuffer",
     .type = KeyType::kInt, .lo = 1, .hi = kMaxInt32,
     .doc = "Largest request frame and znode data in bytes (ZooKeeper jute.maxbuffer).",
     .field = &Config::max_buffer},
    {.yaml = "global_outstanding_limit", .zoo = "globalOutstandingLimit",
     .sysprop = "zookeeper.globalOutstandingLimit", .type = KeyType::kInt, .lo = 1, .hi = kMaxInt32,
     .doc = "Requests queued in the whole server before reading from clients pauses.",
     .field = &Config::global_outstanding_limit},
    {.yaml = "max_outstanding_per_connection", .type = KeyType::kInt, .lo = 1, .hi = kMaxInt32,
     .doc = "Requests queued on one connection before reading from it pauses.",
     .field = &Config::max_outstanding_per_connection},
    {.yaml = "max_watches_per_connection", .type = KeyType::kInt, .lo = 0, .hi = kMaxInt32,
     .doc = "Distinct paths one connection may watch; 0 = unlimited.",
     .field = &Config::max_watches_per_connection},
    {.yaml = "four_letter_words", .zoo = "4lw.commands.whitelist",
     .sysprop = "zookeeper.4lw.commands.whitelist", .type = KeyType::kWords,
     .doc = "Four-letter words answered on the client port; \"*\" = all.",
     .field = &Config::four_letter_words},
    {.yaml = "server_id", .flag = "--server-id", .flag_arg = "ID", .type = KeyType::kInt, .lo = 0,
     .hi = kMaxServerId,
     .doc = "This server's id (top byte of session ids); <data_dir>/myid overrides it.",
     .field = &Config::server_id},
    {.yaml = "admin_port", .zoo = "admin.serverPort", .sysprop = "zookeeper.admin.serverPort",
     .flag = "--admin-port", .flag_arg = "PORT",
     .type = KeyType::kInt, .lo = 0, .hi = kMaxPort,
     .doc = "HTTP AdminServer port (/commands, /health, /ready); 0 = no admin server.",
     .field = &Config::admin_port},
    {.yaml = "admin_address", .zoo = "admin.serverAddress",
     .sysprop = "zookeeper.admin.serverAddress", .type = KeyType::kString,
     .doc = "Address the HTTP AdminServer binds to (zoo.cfg default 0.0.0.0: all interfaces).",
     .field = &Config::admin_address, .zoo_default = "0.0.0.0"},
    {.yaml = "admin_enabled", .zoo = "admin.enableServer",
     .sysprop = "zookeeper.admin.enableServer", .type = KeyType::kBool,
     .doc = "false disables the HTTP AdminServer (as admin port 0 does).",
     .field = &Config::admin_enabled},
    {.yaml = "admin_command_url", .zoo = "admin.commandURL",
     .sysprop = "zookeeper.admin.commandURL", .type = KeyType::kString,
     .doc = "URL prefix of the AdminServer commands, starting with '/'.",
     .field = &Config::admin_command_url},
    {.yaml = "admin_idle_timeout_ms", .zoo = "admin.idleTimeout",
     .sysprop = "zookeeper.admin.idleTimeout", .type = KeyType::kInt, .lo = 1,
     .hi = kMaxInt32, .doc = "An AdminServer connection idle this long (ms) is closed.",
     .field = &Config::admin_idle_timeout_ms},
    // Prometheus /metrics (ZooKeeper's metricsProvider.* keys; server/prometheus_metrics.h).
    {.yaml = "metrics_provider", .zoo = "metricsProvider.className", .type = KeyType::kString,
     .doc = "ZooKeeper's PrometheusMetricsProvider class name serves /metrics; empty = none.",
     .field = &Config::metrics_provider},
    {.yaml = "metrics_host", .zoo = "metricsProvider.httpHost", .type = KeyType::kString,
     .doc = "Address /metrics binds to (zoo.cfg default 0.0.0.0: all interfaces).",
     .field = &Config::metrics_host, .zoo_default = "0.0.0.0"},
    {.yaml = "metrics_port", .zoo = "metricsProvider.httpPort", .type = KeyType::kInt, .lo = 0,
     .hi = kMaxPort, .doc = "Port of the Prometheus /metrics page; 0 = none.",
     .field = &Config::metrics_port},
    {.yaml = "metrics_export_jvm_info", .zoo = "metricsProvider.exportJvmInfo",
     .type = KeyType::kBool, .doc = "Accepted; there is no JVM, so no jvm_* metrics either way.",
     .field = &Config::metrics_export_jvm_info},
    {.yaml = "fsync", .zoo = "forceSync", .sysprop = "zookeeper.forceSync", .type = KeyType::kBool,
     .doc = "fsync the log before acknowledging a write. Turn off only for tests.",
     .field = &Config::fsync},
    {.yaml = "fsync_warning_threshold_ms", .zoo = "fsync.warningthresholdms",
     .sysprop = "zookeeper.fsync.warningthresholdms", .type = KeyType::kInt, .lo = 0,
     .hi = kMaxInt64, .doc = "Log (and count) every fsync slower than this many ms; 0 = never.",
     .field = &Config::fsync_warning_threshold_ms},
    {.yaml = "log_level", .zoo = "zkraft.logLevel", .flag = "--log-level", .flag_arg = "LEVEL",
     .type = KeyType::kString,
     .doc = "Log level: trace, debug, info, warn, error, critical or off.",
     .field = &Config::log_level},
    {.yaml = "snap_count", .zoo = "snapCount", .sysprop = "zookeeper.snapCount",
     .type = KeyType::kInt, .lo = 2, .hi = kMaxInt64,
     .doc = "Take a snapshot after about this many log entries (at least 100 are used).",
     .field = &Config::snap_count},
    {.yaml = "snap_size_limit_kb", .zoo = "snapSizeLimitInKb",
     .sysprop = "zookeeper.snapSizeLimitInKb", .type = KeyType::kInt,
     .lo = -kMaxInt64, .hi = kMaxInt64,
     .doc = "Also take a snapshot once the log since the last one holds this many KiB; <= 0 = never.",
     .field = &Config::snap_size_limit_kb},
    {.yaml = "reconfig_enabled", .zoo = "reconfigEnabled", .type = KeyType::kBool,
     .doc = "Allow the reconfig operation (dynamic membership).",
     .field = &Config::reconfig_enabled},
    {.yaml = "extended_types_enabled", .zoo = "extendedTypesEnabled",
     .sysprop = "zookeeper.extendedTypesEnabled", .type = KeyType::kBool,
     .doc = "Allow TTL nodes.", .field = &Config::extended_types_enabled},
    {.yaml = "read_only_mode", .zoo = "readonlymode.enabled", .sysprop = "readonlymode.enabled",
     .type = KeyType::kBool,
     .doc = "Without a quorum, serve read-only clients (ZooKeeper's read-only mode).",
     .field = &Config::read_only_mode},
    {.yaml = "digest_enabled", .zoo = "digest.enabled", .sysprop = "zookeeper.digest.enabled",
     .type = KeyType::kBool,
     .doc = "Keep the tree digest the hash four-letter word prints (false: it prints 0).",
     .field = &Config::digest_enabled},
    {.yaml = "super_digest", .zoo = "DigestAuthenticationProvider.superDigest",
     .sysprop = "zookeeper.DigestAuthenticationProvider.superDigest", .type = KeyType::kString,
     .doc = "\"super:<base64 sha1>\": that digest identity bypasses ACLs; empty = none.",
     .field = &Config::super_digest},
    // SASL (server/sasl_config.h). ZooKeeper reads these as system properties only; a zoo.cfg
    // key X becomes zookeeper.X there, which is the zoo.cfg spelling here too.
    {.yaml = "jaas_config_file", .zoo = "java.security.auth.login.config",
     .sysprop = "java.security.auth.login.config", .type = KeyType::kString,
     .doc = "JAAS file whose Server section lists the SASL DIGEST-MD5 users; empty = no SASL.",
     .field = &Config::jaas_config_file},
    {.yaml = "sasl_login_context", .zoo = "sasl.serverconfig",
     .sysprop = "zookeeper.sasl.serverconfig", .type = KeyType::kString,
     .doc = "The JAAS file's section that holds the server's SASL users.",
     .field = &Config::sasl_login_context},
    {.yaml = "sasl_super_user", .zoo = "superUser", .sysprop = "zookeeper.superUser",
     .type = KeyType::kString,
     .doc = "A SASL name (sasl:NAME) that bypasses ACLs as super; empty = none.",
     .field = &Config::sasl_super_user},
    {.yaml = "kerberos_remove_host_from_principal", .zoo = "kerberos.removeHostFromPrincipal",
     .sysprop = "zookeeper.kerberos.removeHostFromPrincipal", .type = KeyType::kBool,
     .doc = "Drop the /host part of a Kerberos principal in its sasl id.",
     .field = &Config::kerberos_remove_host},
    {.yaml = "kerberos_remove_realm_from_principal", .zoo = "kerberos.removeRealmFromPrincipal",
     .sysprop = "zookeeper.kerberos.removeRealmFromPrincipal", .type = KeyType::kBool,
     .doc = "Drop the @REALM part of a Kerberos principal in its sasl id.",
     .field = &Config::kerberos_remove_realm},
    {.yaml = "enforce_auth_enabled", .zoo = "enforce.auth.enabled",
     .sysprop = "zookeeper.enforce.auth.enabled", .type = KeyType::kBool,
     .doc = "Refuse requests of sessions not authenticated with one of enforce_auth_schemes.",
     .field = &Config::enforce_auth_enabled},
    {.yaml = "enforce_auth_schemes", .zoo = "enforce.auth.schemes",
     .sysprop = "zookeeper.enforce.auth.schemes", .type = KeyType::kWords,
     .doc = "The schemes (digest, sasl, ...) that count as authenticated for enforce_auth_enabled.",
     .field = &Config::enforce_auth_schemes},
    {.yaml = "session_require_client_sasl_auth", .zoo = "sessionRequireClientSASLAuth",
     .sysprop = "zookeeper.sessionRequireClientSASLAuth", .type = KeyType::kBool,
     .doc = "Refuse requests of sessions not authenticated with SASL (enforcement with sasl).",
     .field = &Config::session_require_client_sasl_auth},
    {.yaml = "container_check_interval_ms", .zoo = "znode.container.checkIntervalMs",
     .sysprop = "znode.container.checkIntervalMs", .type = KeyType::kInt, .lo = 1, .hi = kMaxInt32,
     .doc = "How often the leader looks for empty containers and expired TTL nodes, ms.",
     .field = &Config::container_check_interval_ms},
    {.yaml = "container_max_per_minute", .zoo = "znode.container.maxPerMinute",
     .sysprop = "znode.container.maxPerMinute", .type = KeyType::kInt, .lo = 1, .hi = kMaxInt32,
     .doc = "Most container and TTL node removals the leader proposes per minute.",
     .field = &Config::container_max_per_minute},
    {.yaml = "container_max_never_used_ms", .zoo = "znode.container.maxNeverUsedIntervalMs",
     .sysprop = "znode.container.maxNeverUsedIntervalMs", .type = KeyType::kInt, .lo = 0,
     .hi = kMaxInt64,
     .doc = "Remove a container that never had a child once unchanged this long, ms; 0 = never.",
     .field = &Config::container_max_never_used_ms},
    {.yaml = "enforce_quota", .zoo = "enforceQuota", .sysprop = "zookeeper.enforceQuota",
     .type = KeyType::kBool,
     .doc = "Refuse creates and setData past a hard quota limit (QuotaExceeded); same on every server.",
     .field = &Config::enforce_quota},
    {.yaml = "joining", .zoo = "zkraft.joining", .type = KeyType::kBool,
     .doc = "Start outside the ensemble and wait to be added by a reconfig.",
     .field = &Config::joining},
    {.yaml = "network_threads", .zoo = "zkraft.networkThreads", .flag = "--network-threads",
     .flag_arg = "N", .type = KeyType::kInt, .lo = 0, .hi = 64,
     .doc = "Threads serving client connections; 0 = one per core, at most 4.",
     .field = &Config::network_threads},
    {.yaml = "slow_request_threshold_ms", .zoo = "zkraft.slowRequestThresholdMs",
     .type = KeyType::kInt, .lo = 0, .hi = kMaxInt32,
     .doc = "Log each request slower than this, with the time in each stage; 0 = off.",
     .field = &Config::slow_request_threshold_ms},
    {.yaml = "init_limit", .zoo = "initLimit", .type = KeyType::kInt, .lo = 1, .hi = kMaxInt32,
     .doc = "Ticks a follower may take to catch up. Accepted; Raft does not use it.",
     .field = &Config::init_limit,
     .ignored = "Raft does not use it (a follower catches up from the log or a snapshot)"},
    {.yaml = "sync_limit", .zoo = "syncLimit", .type = KeyType::kInt, .lo = 1, .hi = kMaxInt32,
     .doc = "Ticks a follower may lag; sets the Raft election timeout (sync_limit x tick / 2).",
     .field = &Config::sync_limit},
    {.yaml = "max_connections", .zoo = "maxCnxns", .sysprop = "zookeeper.maxCnxns",
     .type = KeyType::kInt, .lo = 0, .hi = kMaxInt32,
     .doc = "Most concurrent client connections in total; 0 = unlimited.",
     .field = &Config::max_cnxns},
    {.yaml = "max_client_send_queue_bytes", .zoo = "zkraft.maxClientSendQueueBytes",
     .type = KeyType::kInt, .lo = 0, .hi = kMaxInt64,
     .doc = "A client that lets more unsent bytes (replies, watch events) pile up is cut off; 0 = never.",
     .field = &Config::max_client_send_queue_bytes},
    // Quorum authentication (server/peer_auth.h), ZooKeeper's quorum.auth.* keys and defaults.
    {.yaml = "quorum_auth_enable_sasl", .zoo = "quorum.auth.enableSasl", .type = KeyType::kBool,
     .doc = "Authenticate peers with the JAAS file's quorum credentials (dial with them, check them).",
     .field = &Config::quorum_auth_enable_sasl},
    {.yaml = "quorum_auth_learner_require_sasl", .zoo = "quorum.auth.learnerRequireSasl",
     .type = KeyType::kBool,
     .doc = "Send Raft messages only to peers that prove they hold the quorum credentials.",
     .field = &Config::quorum_auth_learner_require_sasl},
    {.yaml = "quorum_auth_server_require_sasl", .zoo = "quorum.auth.serverRequireSasl",
     .type = KeyType::kBool,
     .doc = "Refuse peers that do not authenticate (else, while upgrading, they are let in and logged).",
     .field = &Config::quorum_auth_server_require_sasl},
    {.yaml = "quorum_auth_learner_login_context", .zoo = "quorum.auth.learner.saslLoginContext",
     .type = KeyType::kString,
     .doc = "JAAS section with this server's username and password for dialling peers.",
     .field = &Config::quorum_auth_learner_login_context},
    {.yaml = "quorum_auth_server_login_context", .zoo = "quorum.auth.server.saslLoginContext",
     .type = KeyType::kString,
     .doc = "JAAS section whose user_NAME entries are the peers' usernames and passwords.",
     .field = &Config::quorum_auth_server_login_context},
    {.yaml = "servers", .zoo = "server.N", .type = KeyType::kServers,
     .doc = "The ensemble members; empty (or only this server) = standalone."},
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

std::string join_words(const std::set<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

}  // namespace

std::span<const ConfigKey> config_keys() { return kKeys; }

const ConfigKey* find_yaml_key(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& k : kKeys) {
    if (k.yaml == name) return &k;
  }
  return nullptr;
}

const ConfigKey* find_zoo_key(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& k : kKeys) {
    if (k.type != KeyType::kServers && (k.zoo == name || k.zoo_alias == name || k.sysprop == name)) {
      return &k;
    }
  }
  return nullptr;
}

const ConfigKey* find_sysprop_key(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& k : kKeys) {
    if (k.sysprop == name) return &k;
  }
  return nullptr;
}

bool set_key(const ConfigKey& key, const std::string& name, std::string_view text, Config& cfg,
             std::string* error) {
  struct Setter {
    const ConfigKey& key;
    const std::string& name;
    std::string_view text;
    Config& cfg;
    std::string* error;
    bool operator()(std::monostate) const { return fail(error, name + ": not a single value"); }
    bool operator()(int32_t Config::*f) const {
      return parse_int_into(name, text, key.lo, key.hi, cfg.*f, error);
    }
    bool operator()(int64_t Config::*f) const {
      return parse_int_into(name, text, key.lo, key.hi, cfg.*f, error);
    }
    bool operator()(bool Config::*f) const { return parse_bool(name, text, cfg.*f, error); }
    bool operator()(std::string Config::*f) const {
      cfg.*f = std::string(text);
      return true;
    }
    bool operator()(std::set<std::string> Config::*f) const {
      cfg.*f = split_words(text);
      return true;
    }
  };
  return std::visit(Setter{key, name, text, cfg, error}, key.field);
}

std::string key_value_text(const ConfigKey& key, const Config& cfg) {
  struct Text {
    const Config& cfg;
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(int32_t Config::*f) const { return std::to_string(cfg.*f); }
    std::string operator()(int64_t Config::*f) const { return std::to_string(cfg.*f); }
    std::string operator()(bool Config::*f) const { return cfg.*f ? "true" : "false"; }
    std::string operator()(std::string Config::*f) const { return cfg.*f; }
    std::string operator()(std::set<std::string> Config::*f) const { return join_words(cfg.*f); }
  };
  return std::visit(Text{cfg}, key.field);
}

void apply_zoo_defaults(Config& cfg) {
  for (const auto& k : kKeys) {
    if (k.zoo_default != nullptr) set_key(k, std::string(k.zoo), k.zoo_default, cfg, nullptr);
  }
}

void warn_ignored_keys(const std::vector<std::pair<const ConfigKey*, std::string>>& given,
                       const Config& defaults, Config& cfg) {
  std::set<const ConfigKey*> seen;
  for (const auto& [key, name] : given) {
    if (key->ignored.empty() || !seen.insert(key).second) continue;
    const std::string value = key_value_text(*key, cfg);
    if (value == key_value_text(*key, defaults)) continue;
    cfg.warnings.push_back("config warning: " + name + "=" + value + " is ignored: " +
                           std::string(key->ignored));
  }
}

std::string config_keys_help() {
  const Config yaml_defaults;
  Config zoo_defaults;
  apply_zoo_defaults(zoo_defaults);
  std::string out =
      "Configuration keys (YAML name / zoo.cfg name, -Dsystem.property in SERVER_JVMFLAGS or "
      "JVMFLAGS, flag; type; default):\n";
  for (const auto& k : kKeys) {
    out += "  " + std::string(k.yaml.empty() ? "-" : k.yaml) + " / " +
           std::string(k.zoo.empty() ? "-" : k.zoo);
    if (!k.zoo_alias.empty()) out += " (or " + std::string(k.zoo_alias) + ")";
    if (!k.sysprop.empty()) out += ", -D" + std::string(k.sysprop);
    if (!k.flag.empty()) out += ", " + std::string(k.flag);
    out += "; ";
    switch (k.type) {
      case KeyType::kInt:
        out += "integer " + std::to_string(k.lo) + ".." + std::to_string(k.hi);
        break;
      case KeyType::kBool: out += "boolean"; break;
      case KeyType::kString: out += "text"; break;
      case KeyType::kWords: out += "list of names"; break;
      case KeyType::kServers: out += "list of servers"; break;
    }
    if (k.type != KeyType::kServers) {
      const std::string def = key_value_text(k, yaml_defaults);
      out += "; default " + (def.empty() ? std::string("empty") : def);
      if (k.zoo_default != nullptr && key_value_text(k, zoo_defaults) != def) {
        out += " (zoo.cfg " + key_value_text(k, zoo_defaults) + ")";
      }
    }
    out += "\n      " + std::string(k.doc) + "\n";
  }
  return out;
}

}  // namespace zkraft::server
