#pragma once
// Config: everything a zkraft server is told at start-up, with ZooKeeper's defaults.
//
// Two file formats fill it: our YAML (conf/standalone.yaml documents every key) and ZooKeeper's
// zoo.cfg (key=value), so one zoo.cfg can start either Apache ZooKeeper or zkraft. Command-line
// flags override the file. Every key is named once, in the table of server/config_keys.cc, which
// drives both parsers, the flags and --help. Every function here reports a problem as ONE line in
// *error, ready to print as is, e.g. `config error: tickTime: not a positive integer "abc"`; the
// caller exits with status 2. Nothing throws. Things worth a line in the log but not fatal
// (unknown zoo.cfg keys, keys zkraft accepts but does not act on) go to Config::warnings.
//
// Files: config_keys (the table), zoo_cfg, yaml_config, config_file (load, myid, identity,
// validation), command_line; server specs (server.N=...) are parsed in membership_text.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "session/session_timeout.h"

namespace zkraft::server {

struct ConfigKey;  // config_keys.h

enum class PeerRole { kParticipant, kObserver };

// One ensemble member (zoo.cfg `server.N=host:peer:election[:role][;[addr:]port]`).
struct PeerConfig {
  int64_t id = 0;
  std::string host;
  int32_t peer_port = 0;        // Raft traffic between servers
  int32_t election_port = 0;    // accepted for zoo.cfg compatibility; Raft needs only peer_port
  PeerRole role = PeerRole::kParticipant;
  std::string client_address;   // empty: not given
  int32_t client_port = 0;      // 0: not given
  bool operator==(const PeerConfig&) const = default;
};

struct Config {
  // Client listener. Port 0 = an ephemeral port chosen by the OS (tests). Our YAML default binds
  // loopback; a zoo.cfg without clientPortAddress binds all interfaces, like ZooKeeper.
  int32_t client_port = 2181;
  std::string client_address = "127.0.0.1";

  std::string data_dir;        // required: myid, and the Raft log unless data_log_dir
  std::string data_log_dir;    // the Raft log's (and snapshots') parent, see raft_log_dir; empty = data_dir

  int32_t tick_time_ms = 2000;
  int32_t min_session_timeout_ms = -1;  // -1: 2 * tick_time_ms
  int32_t max_session_timeout_ms = -1;  // -1: 20 * tick_time_ms
  int32_t init_limit = 10;              // ticks (ensemble); accepted, Raft does not use it
  int32_t sync_limit = 5;               // ticks (ensemble)

  int32_t max_client_cnxns = 60;        // per client IP; 0 = unlimited
  int32_t max_buffer = 0xfffff;         // jute.maxbuffer: largest frame / znode data
  int32_t global_outstanding_limit = 1000;
  int32_t max_outstanding_per_connection = 1000;
  int32_t max_watches_per_connection = 0;  // distinct watched paths per connection; 0 = unlimited

  // 4lw commands allowed on the client port. "*" allows all. ZooKeeper's default is srvr only.
  // Ask is_whitelisted() (four_letter_words.h), which also applies ZooKeeper's srvr rule.
  std::set<std::string> four_letter_words{"srvr"};

  int64_t server_id = 1;                // standalone default; ensembles: myid / server_id
  // HTTP AdminServer (admin_server.h), ZooKeeper's keys and defaults. No listener when
  // admin_port is 0 or admin_enabled is false (which also zeroes admin_port).
  int32_t admin_port = 8080;
  std::string admin_address = "127.0.0.1";  // zoo.cfg default: 0.0.0.0 (admin.serverAddress)
  bool admin_enabled = true;            // zoo.cfg admin.enableServer
  std::string admin_command_url = "/commands";  // admin.commandURL
  int32_t admin_idle_timeout_ms = 30000;        // admin.idleTimeout

  // Prometheus /metrics (prometheus_metrics.h), ZooKeeper's metricsProvider.* keys: served when
  // metrics_provider names ZooKeeper's PrometheusMetricsProvider and metrics_port is not 0.
  std::string metrics_provider;            // metricsProvider.className
  std::string metrics_host = "127.0.0.1";  // zoo.cfg default: 0.0.0.0 (metricsProvider.httpHost)
  int32_t metrics_port = 7000;             // metricsProvider.httpPort
  bool metrics_export_jvm_info = true;     // metricsProvider.exportJvmInfo: no JVM, accepted
  bool fsync = true;
  int64_t fsync_warning_threshold_ms = 1000;  // fsync.warningthresholdms; 0 = never warn
  std::string log_level = "info";             // trace debug info warn error critical off
  bool reconfig_enabled = false;        // zoo.cfg reconfigEnabled: the reconfig op (16)
  bool extended_types_enabled = false;  // zookeeper.extendedTypesEnabled: TTL nodes
  bool read_only_mode = false;          // readonlymode.enabled: serve read-only clients when cut off
  bool digest_enabled = true;           // zookeeper.digest.enabled: the digest `hash` prints
  std::string super_digest;             // "super:<base64 sha1>": that digest id bypasses ACLs
  // This server is not in the ensemble yet: it starts with the others as its membership and
  // waits to be added by a reconfig (zoo.cfg zkraft.joining=true, ignored by ZooKeeper).
  bool joining = false;
  int64_t snap_count = 100000;          // snapshot after about this many entries
  // zookeeper.snapSizeLimitInKb: also snapshot once the log since the last snapshot holds this
  // many KiB; <= 0 = no size trigger. ZooKeeper's default is 4 GiB of log on disk; zkraft's
  // log tail lives in memory, hence 64 MiB (see raft_options.cc).
  int64_t snap_size_limit_kb = 65536;

  // The container/TTL reaper (ZooKeeper's ContainerManager, run by the leader): how often it
  // looks for empty containers and expired TTL nodes, how many removals it proposes per minute
  // at most, and how long a container that never had a child is kept (0 = for ever).
  int32_t container_check_interval_ms = 60000;  // znode.container.checkIntervalMs
  int32_t container_max_per_minute = 10000;     // znode.container.maxPerMinute
  int64_t container_max_never_used_ms = 0;      // znode.container.maxNeverUsedIntervalMs
  // zookeeper.enforceQuota: a create or setData that would pass a hard quota limit fails with
  // QuotaExceeded. Applied by every server, so it must be the same on all of them.
  bool enforce_quota = false;

  // SASL and authentication enforcement (sasl_config.h), ZooKeeper's system properties.
  // The JAAS file whose login section (`sasl_login_context`) lists the DIGEST-MD5 users
  // (java.security.auth.login.config); empty = no SASL. With it the `sasl` ACL scheme exists, so
  // it must be set alike on every server of an ensemble (ACLs are checked where they apply).
  std::string jaas_config_file;
  std::string sasl_login_context = "Server";  // zookeeper.sasl.serverconfig
  std::string sasl_super_user;                // zookeeper.superUser: that sasl id is also super
  bool kerberos_remove_host = false;          // zookeeper.kerberos.removeHostFromPrincipal
  bool kerberos_remove_realm = false;         // zookeeper.kerberos.removeRealmFromPrincipal
  bool enforce_auth_enabled = false;          // zookeeper.enforce.auth.enabled
  std::set<std::string> enforce_auth_schemes; // zookeeper.enforce.auth.schemes
  bool session_require_client_sasl_auth = false;  // zookeeper.sessionRequireClientSASLAuth

  // Threads serving client connections (NetworkPool); 0 = one per core, at most 4.
  int32_t network_threads = 0;
  // Requests slower than this (received to replied) are logged with the time of each stage.
  int32_t slow_request_threshold_ms = 1000;
  bool snapshot_in_child_process = false;  // zkraft.snapshotInChildProcess: fork, not live
  bool snapshot_appends = true;            // zkraft.snapshotAppends: incremental snapshots

  int32_t max_cnxns = 0;  // zookeeper.maxCnxns: client connections in total; 0 = unlimited
  // A connection whose unsent output (replies and watch events the client does not read) passes
  // this is closed: a slow consumer cannot make the server hold unbounded memory. 0 = never.
  int64_t max_client_send_queue_bytes = 16 << 20;

  // Quorum authentication (peer_auth.h), ZooKeeper's quorum.auth.* keys: credentials from the
  // JAAS file's DigestLoginModule sections. ZooKeeper's rules: a require_* needs enable_sasl, and
  // server_require needs learner_require.
  bool quorum_auth_enable_sasl = false;
  bool quorum_auth_learner_require_sasl = false;
  bool quorum_auth_server_require_sasl = false;
  std::string quorum_auth_learner_login_context = "QuorumLearner";
  std::string quorum_auth_server_login_context = "QuorumServer";
  // Client TLS (server/tls_options.h): ZooKeeper's secureClientPort and ssl.* keys, defaults as
  // ZooKeeper 3.9's X509Util. TLS is on when secure_client_port is set or the client port is
  // unified (TLS and plain on one port, told apart by the first byte).
  int32_t secure_client_port = 0;      // 0 = no TLS-only port
  std::string secure_client_address;   // empty = client_address
  std::string ssl_keystore_location;   // the server's certificate chain and key (PEM or PKCS12)
  std::string ssl_keystore_password;
  std::string ssl_keystore_type;       // PEM, PKCS12; empty = from the file name
  std::string ssl_truststore_location; // CAs client certificates must chain to; empty = system's
  std::string ssl_truststore_password;
  std::string ssl_truststore_type;
  std::string ssl_client_auth;         // need (empty), want, none
  std::string ssl_protocol = "TLSv1.3";
  std::string ssl_enabled_protocols;   // empty: TLSv1.3 and TLSv1.2 (TLSv1.2 alone if ssl.protocol is)
  std::string ssl_ciphersuites;        // IANA names; empty = ZooKeeper's default list
  bool ssl_hostname_verification = true;
  int32_t ssl_handshake_timeout_ms = 5000;  // ssl.handshakeDetectionTimeoutMillis
  bool client_port_unification = false;     // zookeeper.client.portUnification
  bool client_cert_reload = false;          // zookeeper.client.certReload
  std::string x509_super_user;              // zookeeper.X509AuthenticationProvider.superUser
  // A connection that has sent no ConnectRequest (nor a four-letter word) this long after it was
  // accepted is closed (zookeeper.nio.sessionlessCnxnTimeout): slowloris.
  int32_t sessionless_timeout_ms = 10000;
  // Peer TLS (sslQuorum): mutual TLS between servers with the ssl.quorum.* stores; ZooKeeper's
  // names and defaults (hostname verification on: a peer's certificate must name its host).
  bool ssl_quorum = false;
  std::string ssl_quorum_keystore_location;
  std::string ssl_quorum_keystore_password;
  std::string ssl_quorum_keystore_type;
  std::string ssl_quorum_truststore_location;
  std::string ssl_quorum_truststore_password;
  std::string ssl_quorum_truststore_type;
  std::string ssl_quorum_protocol = "TLSv1.3";
  std::string ssl_quorum_enabled_protocols;
  std::string ssl_quorum_ciphersuites;
  bool ssl_quorum_hostname_verification = true;

  std::vector<PeerConfig> servers;      // empty (or just this server) = standalone

  std::string source_file;              // the file read, if any (for logs and `conf`)
  // One line each, for the start-up log: unknown zoo.cfg keys, accepted-but-ignored settings.
  std::vector<std::string> warnings;

  session::TimeoutBounds session_timeout_bounds() const {
    return session::TimeoutBounds::from_config(tick_time_ms, min_session_timeout_ms,
                                               max_session_timeout_ms);
  }
  int32_t min_session_timeout() const { return session_timeout_bounds().min_ms; }
  int32_t max_session_timeout() const { return session_timeout_bounds().max_ms; }
  bool standalone() const { return servers.size() <= 1; }
  // This server's entry in `servers`, or nullptr.
  const PeerConfig* self() const;
};

// Where the Raft log lives: <data_log_dir>/raft when data_log_dir is set, else <data_dir>/raft.
std::string raft_log_dir(const Config& cfg);

// Parses our YAML format into cfg (only keys present change cfg). Unknown keys are errors.
// Keys that are accepted but not acted on add a line to cfg.warnings when set to a non-default.
// `given`, if not null, collects the keys the text set (so a later source can tell what the file
// decided, see parse_command_line).
bool parse_yaml_config(std::string_view text, Config& cfg, std::string* error,
                       std::set<const ConfigKey*>* given = nullptr);

// Parses a zoo.cfg (java.util.Properties syntax: key=value, key: value or key value; # and !
// comments) into cfg. Sets ZooKeeper's own defaults first where they differ from ours
// (client_address and admin_address "0.0.0.0", tick_time_ms 3000). Unknown keys are accepted,
// as ZooKeeper turns them into system properties, and named in ONE line of cfg.warnings.
// A key may also be spelled as the Java system property ZooKeeper reads for it
// (zookeeper.enforceQuota, znode.container.checkIntervalMs): see ConfigKey::sysprop.
bool parse_zoo_cfg(std::string_view text, Config& cfg, std::string* error,
                   std::set<const ConfigKey*>* given = nullptr);

// Reads `path` and parses it as YAML if it ends in .yaml/.yml, as zoo.cfg if it ends in .cfg or
// .properties, otherwise by content (a `key=value` line before any `key:` line means zoo.cfg).
bool load_config_file(const std::string& path, Config& cfg, std::string* error,
                      std::set<const ConfigKey*>* given = nullptr);

// The words of ZooKeeper's JVM flag variables, as zkServer.sh hands them to java: SERVER_JVMFLAGS,
// then JVMFLAGS (so a property in JVMFLAGS wins), split on whitespace as the shell splits an
// unquoted variable. Null pointers are empty variables.
std::vector<std::string> jvm_flag_words(const char* server_jvmflags, const char* jvmflags);

// Applies the `-Dname=value` words among `words` whose name is a key's system property
// (ConfigKey::sysprop), later words winning, to every key not in `skip`. Other words (-Xmx512m,
// -Dlog4j..., unknown properties) are ignored silently, as a JVM ignores properties nobody reads.
// A known property with a bad value is an error naming the word.
bool apply_system_properties(const std::vector<std::string>& words, Config& cfg, std::string* error,
                             const std::set<const ConfigKey*>& skip = {});

// If <data_dir>/myid exists, sets server_id from it (an integer 0..255, whitespace trimmed).
bool read_myid(Config& cfg, std::string* error);

// After the file and flags: replaces "{id}" in data_dir and data_log_dir by server_id and, when
// this server has an entry in `servers`, takes client_address / client_port from it where the
// entry gives them (unless the flags set them: keep_client_address / keep_client_port).
void apply_server_identity(Config& cfg, bool keep_client_port, bool keep_client_address);

// Range and consistency checks (ports, positive times, min <= max session timeout, unique peer
// ids, this server present in an ensemble, data_dir given).
bool validate_config(const Config& cfg, std::string* error);

// The server's command line: --config FILE, then one override flag per key that has one in the
// table (--client-port, --client-address, --data-dir, --tick-time, --server-id, --admin-port,
// --network-threads). Order of application: defaults, the -D words of `jvm_words` (see
// apply_system_properties) for the keys the file does not set, the file, flags, myid (only if
// --server-id was not given and data_dir has no "{id}"), apply_server_identity, validate.
// So a file beats a system property, as in ZooKeeper, where QuorumPeerConfig turns a zoo.cfg key
// K it does not know into System.setProperty("zookeeper." + K), overwriting the -D value before
// the server reads it; the flags beat both.
// Returns true when the server should run. False with *error set: a bad configuration (exit 2).
// False with *error empty: --help or --version, whose text is in *output (print it, exit 0).
bool parse_command_line(int argc, char** argv, Config& cfg, std::string* error,
                        std::string* output, const std::vector<std::string>& jvm_words);
// No -D words.
bool parse_command_line(int argc, char** argv, Config& cfg, std::string* error,
                        std::string* output);
// The older form: on --help / --version it prints *output to stdout and calls std::exit(0).
// Kept only because existing death tests call it; the server uses the form above.
bool parse_command_line(int argc, char** argv, Config& cfg, std::string* error);

}  // namespace zkraft::server
