#pragma once
// RequestPipeline: everything a zkraft server does with its clients' requests, on the state
// thread, with no sockets, no threads and no clock of its own. It takes what the network threads
// decoded (ClientMessage batches) and what consensus committed (LogListener), owns the replicated
// state (tree + sessions), the watch registry and the client table, and produces replies and
// watch events through ClientIo. The parts it wires:
//
//   SessionQueue     per-client FIFO: replies leave in request order
//   ReadExecutor     reads and watch registration against the local tree
//   WriteRouter      propose on the leader, forward on a follower; what is in flight
//   LeaderDuties     session expiry, the container/TTL reaper, membership
//   ServingGate      answer clients only while in contact with a quorum (or read-only)
//   SaslServer       the SASL exchange (op 102) and auth enforcement (request_pipeline_auth.cc)
//   collect_status   the plain ServerStatus that the four-letter words render
//
// Ordering: a watch event always reaches a client before any reply that shows the change (events
// are sent at apply time, replies only when they reach the head of their queue).
//
// Threads: none. Every method runs on the state thread (tests call them directly).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/client_io.h"
#include "server/client_message.h"
#include "server/client_table.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/leader_duties.h"
#include "server/peer_message.h"
#include "server/read_executor.h"
#include "server/read_only_sessions.h"
#include "server/replicated_log.h"
#include "server/sasl_config.h"
#include "server/sasl_server.h"
#include "server/server_stats.h"
#include "server/server_status.h"
#include "server/serving_gate.h"
#include "server/write_router.h"
#include "server/zk_state_machine.h"
#include "session/session_id.h"
#include "session/watch_registry.h"

namespace zkraft::server {

struct MetricsStatus;  // prometheus_metrics.h

class RequestPipeline final : public LogListener, private EventSink {
 public:
  using RandomSource = std::function<uint64_t()>;

  RequestPipeline(const Config& config, ReplicatedLog& log, ClientIo& io, const Clock& clock,
                  RandomSource random);

  // Starts the log (its snapshot is restored here; the log after it follows through on_apply).
  bool start(std::string* error);
  // Closes every client connection.
  void close_all_clients();

  // What the network threads decoded, in the order each connection produced it.
  void on_client_messages(std::vector<ClientMessage>& batch);
  // Periodic work: idle connections, leader duties. Call every tick_interval_ms().
  void tick();
  int64_t tick_interval_ms() const;

  // LogListener
  void on_apply(uint64_t index, std::string_view data) override;
  void on_restore(uint64_t index, std::string_view data) override;
  std::string on_snapshot_request() override;
  bool on_snapshot_write(size_t piece_bytes, const std::function<bool(std::string_view)>& out) override;
  std::optional<tree::LiveSnapshotCheck> begin_live_snapshot(jute::Writer& out) override;
  std::optional<uint64_t> pending_delta_bytes() override { return sm_.pending_delta_bytes(); }
  void begin_live_delta(jute::Writer& out) override { sm_.begin_live_delta(out); }
  bool continue_live_snapshot(jute::Writer& out, size_t max_records) override;
  void on_leader_changed(uint64_t leader, bool self) override;
  void on_read_index(uint64_t context, uint64_t index, bool ok) override;
  void on_peer_message(uint64_t from, std::string payload) override;
  void on_batch_done() override;

  // lists false: counts only (StatusSources::lists), for the dashboard's poll.
  ServerStatus status(bool lists = true) const;
  // For the AdminServer (request_pipeline_admin.cc): resets what `reset` says, then status()
  // with the consensus figures the admin commands show (ids, term, membership).
  ServerStatus admin_status(StatsReset reset, bool lists = true);
  // For the Prometheus page (prometheus_metrics.h): status() with the consensus figures and the
  // latency distributions.
  MetricsStatus metrics_status() const;
  // For the admin snapshot command: whether `ids` have every bit of `perm` on `path` (as
  // Commands.handleAuthorization checks, one bit at a time; false if the node does not exist),
  // and the state with its last zxid.
  bool admin_allowed(const std::vector<jute::Id>& ids, int32_t perm, std::string_view path) const;
  std::string admin_snapshot(int64_t* last_zxid) const;
  // For the admin restore command: proposes `state` (the caller checked it with
  // ZkStateMachine::valid_state) as ONE log entry that replaces the tree and the sessions on
  // every member, so the ensemble stays one state machine. `done` (on the state thread) gets the
  // zxid it applied at and an empty error, or an error: this server is not the leader, or the
  // leader changed before the entry applied (it may still apply: the outcome is unknown).
  // When it applies, every server closes all its client connections: their sessions and watches
  // belong to the state that is gone (restored sessions may reconnect; the others are expired).
  using RestoreDone = std::function<void(int64_t zxid, std::string error)>;
  void admin_restore(std::string state, RestoreDone done);
  const ZkStateMachine& state() const { return sm_; }
  const ClientTable& clients() const { return clients_; }
  const ServerStats& stats() const { return stats_; }
  ServingMode serving_mode() const { return gate_.mode(); }

 private:
  // Ingress (request_pipeline.cc; the handshake and classifying requests:
  // request_pipeline_requests.cc; read-only mode: request_pipeline_serving.cc).
  void handle_message(ClientMessage& m);
  void handle_opened(const ClientMessage& m);
  void handle_connect(Client& c, const ClientMessage& m);
  void handle_read_only_connect(Client& c, const ClientMessage& m);
  // A write (or sync) on a read-only session: NotReadOnly; closeSession ends it here.
  void answer_read_only_write(Client& c, QueuedRequest& p);
  // Feeds the quorum contact age to the gate and acts on a change: closes every client when
  // contact is lost, the read-only ones when it returns. Not before the start-up replay is done.
  void check_serving();
  // On a leader change and after each batch from the log: opens the gate at once if it may.
  void check_serving_on_contact();
  void handle_request(Client& c, ClientMessage& m);
  void handle_auth(Client& c, QueuedRequest& p, const jute::AuthPacket& a);
  // SASL and enforcement (request_pipeline_auth.cc).
  bool start_auth(std::string* error);
  void handle_sasl(Client& c, QueuedRequest& p, const jute::GetSASLRequest& r);
  // Enforcement: true when `p` must be refused (it is then answered and the connection closes).
  bool refuse_unauthenticated(Client& c, QueuedRequest& p);
  void handle_four_letter_word(Client& c, const std::string& word, std::string_view rest);
  // The per-session queue and flow control (request_pipeline_queue.cc).
  void enqueue(Client& c, QueuedRequest p);
  void submit(Client& c, QueuedRequest p, Txn txn, bool close_after);
  void pump(Client& c);
  void update_flow_control(Client& c);
  void send(Client& c, std::string framed);
  // Forgets the client and closes its connection now (ZooKeeper's "close the socket").
  void drop_client(Client& c, std::string_view reason);
  void forget_client(Client& c);

  // Commits and read points (request_pipeline_log.cc).
  void answer(const Waiter& w, std::string reply, bool close_after);
  void answer_own(const Txn& txn, const ApplyOutcome& out);
  void session_event(const Txn& txn, const ApplyOutcome& out, bool mine);
  void release_syncs();
  void deliver(const std::vector<tree::WatchTrigger>& triggers, int64_t zxid);
  void send_event(uint64_t watcher, int32_t type, const std::string& path, int64_t zxid) override;

  // The admin restore (request_pipeline_admin.cc): a kRestore entry applied; in-flight ones failed.
  void restored(const Txn& txn, const ApplyOutcome& out);
  void fail_restores(const std::string& why);
  // The dashboard's view of the other members (request_pipeline_admin.cc): a follower sends its
  // figures to the leader every kFiguresReportMs; the leader keeps the latest of each.
  void report_member_figures(int64_t now_ms);
  void member_figures_reported(uint64_t from, const MemberFigures& figures);

  // Four-letter words (request_pipeline_status.cc).
  std::string render_status(std::string_view cmd);

  const Config& config_;
  jute::Limits limits_;
  ReplicatedLog& log_;
  ClientIo& io_;
  const Clock& clock_;
  RandomSource random_;
  const int64_t started_ms_;  // monotonic

  ZkStateMachine sm_;
  session::WatchRegistry watches_;
  session::SessionIdGenerator session_ids_;
  ClientTable clients_;
  ReadExecutor reads_;
  WriteRouter writes_;
  LeaderDuties duties_;
  ServingGate gate_;
  ReadOnlySessions read_only_sessions_;
  FlowLimits flow_;
  size_t outstanding_ = 0;  // queued requests, all clients
  ServerStats stats_;
  std::map<int32_t, RestoreDone> restores_;  // admin restores proposed here, by Txn::xid
  int32_t next_restore_ = 0;
  struct ReportedFigures {
    MemberFigures figures;
    int64_t at_ms = 0;  // monotonic, when it arrived
  };
  std::map<uint64_t, ReportedFigures> member_figures_;  // the leader: by member id
  int64_t figures_sent_ms_ = -1;  // a follower: when it last sent its own
  std::unique_ptr<SaslServer> sasl_;  // null: no SASL configured
  AuthEnforcement enforcement_;
};

}  // namespace zkraft::server
