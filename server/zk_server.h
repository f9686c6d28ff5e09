#pragma once
// The ZooKeeper front end of one zkraft server: accepts client connections, runs each session's
// requests in order, turns writes into log entries, applies committed entries to the state machine,
// and sends replies and watch events. Everything runs on one io thread (the io_context passed in),
// so no locks guard this state; the log's storage thread hands results back by posting.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "jute/archive.h"
#include "jute/request.h"
#include "server/config.h"
#include "server/connection.h"
#include "server/replicated_log.h"
#include "server/server_stats.h"
#include "server/server_status.h"
#include "server/zk_state_machine.h"
#include "session/session_expiry_tracker.h"
#include "session/session_id.h"
#include "session/touch_table.h"
#include "session/watch_registry.h"

namespace zkraft::server {

class ZkServer : public FrameSink {
 public:
  ZkServer(boost::asio::io_context& io, Config config, std::unique_ptr<ReplicatedLog> log);
  ~ZkServer() override;

  // Replays the log, then listens. Returns false (and logs why) if the port cannot be bound.
  bool start();
  void stop();
  uint16_t client_port() const { return port_; }

  // FrameSink
  void on_four_letter_word(const std::shared_ptr<Connection>& c, std::string_view cmd) override;
  void on_frame(const std::shared_ptr<Connection>& c, std::string_view frame) override;
  void on_closed(const std::shared_ptr<Connection>& c) override;

 private:
  // One queued request of a client, answered strictly in arrival order.
  struct Pending {
    enum class Kind { kLocal, kLogged } kind = Kind::kLocal;
    int32_t xid = 0;
    int32_t op = 0;
    jute::RequestBody body;     // kLocal: executed when it reaches the head of the queue
    bool ready = false;         // kLogged: the committed outcome arrived
    std::string reply;          // kLogged: framed reply
    bool close_after = false;   // closeSession, auth failure, unknown op
    bool is_connect = false;
    uint64_t request_id = 0;    // kLogged: matches the committed entry (or read point)
    std::chrono::steady_clock::time_point received;
  };

  struct Client {
    std::shared_ptr<Connection> conn;
    bool connect_seen = false;
    bool old_client = false;  // sent no readOnly byte: answer with the 36-byte ConnectResponse
    int64_t session_id = 0;
    int32_t timeout_ms = 0;
    int64_t last_heard_ms = 0;
    std::vector<jute::Id> auth;
    std::deque<Pending> queue;
    ConnectionStats stats;
  };

  void accept();
  void on_accept(boost::asio::ip::tcp::socket socket);
  void handle_connect(Client& c, std::string_view frame);
  void handle_request(Client& c, std::string_view frame);
  void pump(Client& c);
  std::string execute_local(Client& c, Pending& p);
  std::string execute_set_watches(Client& c, int32_t xid, int32_t op, const jute::RequestBody& body);
  void propose(Client& c, Pending p, Txn txn);
  void on_commit(uint64_t index, std::string_view data);
  void deliver(const std::vector<tree::WatchTrigger>& triggers, int64_t zxid);
  void send_event(Client& c, int32_t type, const std::string& path, int64_t zxid);
  void finish_connect(Client& c, const Txn& txn, const ApplyOutcome& out);
  void tick();
  bool submit(std::string entry);
  void on_peer_message(uint64_t from, std::string payload);
  void on_leader_changed(uint64_t leader, bool self);
  void on_read_ready(uint64_t context, uint64_t index);
  void complete_sync(uint64_t request_id);
  void release_syncs();
  void learn_peers();
  void reconcile_membership();
  void update_flow_control(Client& c);
  std::string render_status(std::string_view cmd);
  ServerStatus status() const;
  int64_t now_ms() const;
  std::string connect_response(const Client& c, int32_t timeout, int64_t session_id,
                               const std::string& password) const;

  boost::asio::io_context& io_;
  Config config_;
  jute::Limits limits_;
  std::unique_ptr<ReplicatedLog> log_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer tick_timer_;
  uint16_t port_ = 0;
  bool stopped_ = false;

  ZkStateMachine sm_{StateMachineOptions{config_.extended_types_enabled, config_.reconfig_enabled}};
  session::WatchRegistry watches_;
  session::SessionExpiryTracker expiry_;
  session::SessionIdGenerator session_ids_;
  session::TouchTable touched_;  // sessions heard from since the last report to the leader
  std::mt19937_64 password_rng_;

  uint64_t next_connection_id_ = 1;
  uint64_t next_request_id_ = 1;
  std::unordered_map<uint64_t, Client> clients_;                 // by connection id
  std::unordered_map<int64_t, uint64_t> session_connection_;     // session -> connection id
  std::unordered_map<uint64_t, uint64_t> pending_requests_;      // request id -> connection id
  std::unordered_map<std::string, int> connections_per_ip_;
  std::set<int64_t> closing_sessions_;                           // close/expiry proposed
  std::set<std::string> reaping_;                                // reap proposed
  int64_t last_reap_ms_ = 0;
  size_t outstanding_ = 0;                                       // queued requests, all clients
  std::multimap<uint64_t, uint64_t> sync_waits_;                 // read index -> request id
  bool replaying_ = false;
  ServerStats stats_;
  // Server-to-server message tags (the first byte of a ReplicatedLog::send payload).
  static constexpr char kForwardedWrite = 'W';   // a follower's client write for the leader
  static constexpr char kSessionsAlive = 'L';    // a follower's connected sessions
  std::chrono::steady_clock::time_point started_;
  int64_t container_check_interval_ms_ = 60000;  // znode.container.checkIntervalMs
};

}  // namespace zkraft::server
