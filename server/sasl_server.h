#pragma once
// The server side of ZooKeeper's SASL exchange (op 102), through Cyrus SASL (libsasl2).
//
// SaslServer holds what every exchange shares: the DIGEST-MD5 users of the JAAS file's login
// section (user_NAME="password") and the rules that turn an authenticated name into ZooKeeper's
// identity. SaslExchange is one connection's exchange: each client token goes in, the server's
// token comes out, and once Cyrus says the client is authenticated, the identity `sasl:NAME`.
//
// Mechanisms: DIGEST-MD5 with the JAAS users, or GSSAPI (Kerberos) when the login section is a
// Krb5LoginModule with a principal and keytab: then only GSSAPI, as the principal's service on
// its host ("zookeeper/localhost@REALM": acceptor zookeeper@localhost), as ZooKeeper chooses.
//
// As ZooKeeper 3.9.4 (ZooKeeperSaslServer, SecurityUtils.createSaslServer): protocol
// "zookeeper", server name "zk-sasl-md5" for DIGEST-MD5 (so the digest realm and digest-uri are
// "zk-sasl-md5" and "zookeeper/zk-sasl-md5", whatever the host is called), quality of protection
// "auth" only (nothing after the exchange is wrapped), any requested authorization id allowed and
// then replaced by the name formed from the authentication id (SaslServerCallbackHandler).
//
// Passwords reach Cyrus through an in-process auxiliary property plugin ("zkraft-jaas"), the only
// auxprop plugin a zkraft exchange consults: no sasldb file is read or written. The plugin finds
// the users through the exchange's own proxy-policy callback context, so two SaslServers in one process
// (tests) keep their users apart.
//
// Threads: an exchange runs on the state thread, in the connection's request order. Why there
// and not on the network threads: the identity it produces must be visible to the connection's
// very next request, which the state thread handles (it owns the identities, Client::auth, and
// forwards them with every write, Txn::auth); a network-thread step would need its outcome
// sequenced back into that stream. A DIGEST-MD5 step is two MD5 passes over a few hundred bytes
// (13 us for a whole exchange, client included: tests/server/sasl_server_test.cc times it). A
// GSSAPI accept reads the keytab and checks the replay cache (local files, no network: the KDC
// is the client's business), a cost paid once per connection, not per request. Should that ever
// matter, the step can move to the network thread behind the same interface: the state thread
// would then hand the connection's SASL request over and wait for its outcome in queue order.
// Cyrus is initialised once per process (sasl_server_init); exchanges are independent.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace zkraft::server {

struct SaslSettings {
  // "DIGEST-MD5", or "GSSAPI" when the login section names a Kerberos principal and keytab (as
  // ZooKeeper: a JAAS subject with principals means GSSAPI, and only it).
  std::string mechanism = "DIGEST-MD5";
  std::map<std::string, std::string> users;  // DIGEST-MD5: user name -> password (JAAS user_NAME)
  // DIGEST-MD5: "zookeeper" and "zk-sasl-md5"; GSSAPI: the service principal's two parts
  // ("zookeeper/host@REALM" -> "zookeeper", "host").
  std::string protocol = "zookeeper";
  std::string server_name = "zk-sasl-md5";
  // GSSAPI: the keytab holding the service principal's key (JAAS keyTab). MIT Kerberos takes it
  // from KRB5_KTNAME, which SaslServer::create sets for the process: one keytab per server.
  std::string keytab;
  // zookeeper.kerberos.removeHostFromPrincipal / removeRealmFromPrincipal.
  bool remove_host = false;
  bool remove_realm = false;
  std::string default_realm;  // Kerberos default realm, for the DEFAULT auth_to_local rule
};

class SaslExchange;

class SaslServer {
 public:
  // Initialises Cyrus (once per process) and checks the mechanism is available. nullptr with
  // *error set (one line) when it cannot serve.
  static std::unique_ptr<SaslServer> create(SaslSettings settings, std::string* error);
  ~SaslServer();

  // A new exchange for one connection; nullptr with *error set if Cyrus refuses.
  std::unique_ptr<SaslExchange> start(std::string* error) const;

  const SaslSettings& settings() const { return settings_; }

 private:
  explicit SaslServer(SaslSettings settings) : settings_(std::move(settings)) {}
  SaslSettings settings_;
};

class SaslExchange {
 public:
  struct Step {
    enum class State { kContinue, kComplete, kFailed };
    State state = State::kFailed;
    std::optional<std::string> token;  // the server's token (nullopt: none, a null buffer)
    std::string name;                  // kComplete: the identity's id (sasl:NAME)
    std::string error;                 // kFailed: why, for the log
  };

  ~SaslExchange();
  SaslExchange(const SaslExchange&) = delete;
  SaslExchange& operator=(const SaslExchange&) = delete;

  // One client token (the first may be empty: DIGEST-MD5 starts with the server's challenge).
  // After kComplete or kFailed the exchange is over: any further step fails.
  Step step(std::string_view client_token);

 private:
  friend class SaslServer;
  struct Impl;
  explicit SaslExchange(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zkraft::server
