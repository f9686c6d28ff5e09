#pragma once
// ClientTable: the state thread's view of its client connections: the session each one carries,
// its identities, its request queue and its counters; which connection holds which session; how
// many connections each IP has (maxClientCnxns). Plain data, one owner (the state thread).
//
// Invariant: session_connection(s) == c only while clients[c].session_id == s.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "jute/data.h"
#include "server/sasl_server.h"
#include "server/server_stats.h"
#include "server/session_queue.h"

namespace zkraft::server {

struct Client {
  uint64_t conn = 0;
  std::string remote_address;  // "127.0.0.1"
  uint16_t remote_port = 0;
  bool connect_seen = false;
  bool old_client = false;  // sent no readOnly byte: answer with the 36-byte ConnectResponse
  bool closing = false;     // will close once its output is flushed: nothing more is read
  bool read_only = false;   // carries a local read-only session (ReadOnlySessions)
  bool reading = true;      // what flow control last told the network thread
  int64_t session_id = 0;
  int32_t timeout_ms = 0;
  int64_t last_heard_ms = 0;  // monotonic
  std::vector<jute::Id> auth;
  std::unique_ptr<SaslExchange> sasl;  // the connection's SASL exchange, from its first sasl request
  SessionQueue queue;
  ConnectionStats stats;
  uint64_t packets_received = 0;
  uint64_t packets_sent = 0;
  uint64_t unwritten_bytes = 0;  // sent to the connection, not yet reported written (client_io.h)
};

class ClientTable {
 public:
  Client* find(uint64_t conn) {
    auto it = clients_.find(conn);
    return it == clients_.end() ? nullptr : &it->second;
  }
  const Client* find(uint64_t conn) const {
    auto it = clients_.find(conn);
    return it == clients_.end() ? nullptr : &it->second;
  }
  Client& add(uint64_t conn, std::string address, uint16_t port) {
    Client& c = clients_[conn];
    c.conn = conn;
    c.remote_address = std::move(address);
    c.remote_port = port;
    ++per_ip_[c.remote_address];
    return c;
  }
  // Forgets the connection (and its session binding).
  void remove(uint64_t conn) {
    auto it = clients_.find(conn);
    if (it == clients_.end()) return;
    unbind_session(it->second);
    auto ip = per_ip_.find(it->second.remote_address);
    if (ip != per_ip_.end() && --ip->second <= 0) per_ip_.erase(ip);
    clients_.erase(it);
  }
  int connections_from(const std::string& ip) const {
    auto it = per_ip_.find(ip);
    return it == per_ip_.end() ? 0 : it->second;
  }

  // The connection that holds `session`, or 0.
  uint64_t connection_of(int64_t session) const {
    auto it = by_session_.find(session);
    return it == by_session_.end() ? 0 : it->second;
  }
  void bind_session(Client& c, int64_t session) {
    unbind_session(c);
    c.session_id = session;
    by_session_[session] = c.conn;
  }
  void unbind_session(Client& c) {
    if (c.session_id == 0) return;
    auto it = by_session_.find(c.session_id);
    if (it != by_session_.end() && it->second == c.conn) by_session_.erase(it);
    c.session_id = 0;
  }

  size_t size() const { return clients_.size(); }
  template <class F>
  void for_each(F&& f) {
    for (auto& [id, c] : clients_) f(c);
  }
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [id, c] : clients_) f(c);
  }

 private:
  std::unordered_map<uint64_t, Client> clients_;
  std::unordered_map<int64_t, uint64_t> by_session_;
  std::unordered_map<std::string, int> per_ip_;
};

}  // namespace zkraft::server
