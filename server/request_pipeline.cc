// RequestPipeline, ingress: connections, the handshake, classifying requests, the per-session
// queue and flow control. (Commits: request_pipeline_log.cc; status: request_pipeline_status.cc.)
#include "server/request_pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/opcodes.h"
#include "jute/reply.h"
#include "server/digest_auth.h"
#include "server/four_letter_words.h"
#include "server/membership_text.h"
#include "server/tls_options.h"
#include "server/replies.h"
#include "server/slow_request_log.h"
#include "server/trace_mask.h"
#include "session/session_password.h"
#include "session/session_timeout.h"

namespace zkraft::server {

namespace op = jute::op;
namespace err = jute::err;

namespace {
DutyOptions duty_options(const Config& config) {
  DutyOptions o;
  o.tick_time_ms = config.tick_time_ms;
  o.standalone = config.standalone();
  o.container_check_interval_ms = config.container_check_interval_ms;
  o.container_max_per_minute = config.container_max_per_minute;
  o.container_max_never_used_ms = config.container_max_never_used_ms;
  return o;
}
}  // namespace

RequestPipeline::RequestPipeline(const Config& config, ReplicatedLog& log, ClientIo& io,
                                 const Clock& clock, RandomSource random)
    : config_(config),
      log_(log),
      io_(io),
      clock_(clock),
      random_(std::move(random)),
      started_ms_(clock.monotonic_ms()),
      sm_(StateMachineOptions{config.extended_types_enabled, config.reconfig_enabled,
                              config.enforce_quota, config.digest_enabled,
                              extra_auth_schemes(config)}),
      watches_(static_cast<size_t>(std::max(0, config.max_watches_per_connection))),
      session_ids_(config.server_id, clock.wall_ms()),
      reads_(sm_, watches_, *this),
      writes_(log, clock),
      duties_(duty_options(config), sm_, log, writes_),
      gate_(ServingPolicy::from_config(config)) {
  limits_.max_buffer = config.max_buffer;
  flow_.per_connection = static_cast<size_t>(std::max(1, config.max_outstanding_per_connection));
  flow_.global = static_cast<size_t>(std::max(1, config.global_outstanding_limit));
}

bool RequestPipeline::start(std::string* error) {
  if (!config_.standalone()) {
    sm_.mutable_tree().set_config_data(membership_text(bootstrap_servers(config_), 0));
  }
  if (!start_auth(error)) return false;
  if (!log_.start(*this, error)) return false;
  if (gate_.policy().bound_is_floored) {
    spdlog::warn("minSessionTimeout {} ms is too short for the quorum-contact bound: clients of a "
                 "cut-off server are closed {} ms after contact is lost, which may be after the "
                 "majority expires their sessions",
                 config_.min_session_timeout(), gate_.policy().contact_bound_ms);
  }
  check_serving();
  if (!config_.standalone()) duties_.learn_peers();
  for (int64_t id : sm_.sessions().ids()) session_ids_.observe(id);
  // Sessions whose client is still out there get a full timeout to come back.
  duties_.reset(clock_.monotonic_ms());
  spdlog::info("recovered: last zxid 0x{:x}, {} znodes, {} sessions", sm_.last_zxid(),
               sm_.tree().node_count(), sm_.sessions().size());
  return true;
}

void RequestPipeline::close_all_clients() {
  std::vector<uint64_t> conns;
  clients_.for_each([&](Client& c) { conns.push_back(c.conn); });
  for (uint64_t conn : conns) {
    if (Client* c = clients_.find(conn)) drop_client(*c, {});
  }
  io_.flush();
}

void RequestPipeline::on_client_messages(std::vector<ClientMessage>& batch) {
  check_serving();  // nothing is answered past the quorum-contact bound
  for (auto& m : batch) handle_message(m);
  io_.flush();
}

void RequestPipeline::handle_message(ClientMessage& m) {
  if (m.kind == ClientMessage::Kind::kOpened) {
    handle_opened(m);
    return;
  }
  Client* c = clients_.find(m.conn);
  if (!c) return;  // already dropped: what it still sent does not matter
  if (m.kind == ClientMessage::Kind::kClosed) {
    forget_client(*c);
    return;
  }
  if (m.kind == ClientMessage::Kind::kWritten) {
    const bool was_held = c->unwritten_bytes >= kMaxUnwrittenBytes;
    c->unwritten_bytes -= std::min(c->unwritten_bytes, m.written_bytes);
    if (was_held) pump(*c);
    return;
  }
  if (c->closing) return;  // answered with a close: nothing more is read
  if (m.kind == ClientMessage::Kind::kFourLetterWord) {
    handle_four_letter_word(*c, m.word, m.record);
    return;
  }
  ++c->packets_received;
  ++stats_.packets_received;
  c->last_heard_ms = clock_.monotonic_ms();
  if (m.kind == ClientMessage::Kind::kConnect) {
    handle_connect(*c, m);
  } else {
    handle_request(*c, m);
  }
}

void RequestPipeline::handle_opened(const ClientMessage& m) {
  if (config_.max_cnxns > 0 && clients_.size() >= static_cast<size_t>(config_.max_cnxns)) {
    // ZooKeeper's NIOServerCnxnFactory: "Too many connections max allowed is N".
    ++stats_.connections_rejected;
    spdlog::warn("too many connections: {} open (zookeeper.maxCnxns {}); closing the one from {}",
                 clients_.size(), config_.max_cnxns, m.remote_address);
    io_.close(m.conn, {});
    return;
  }
  if (config_.max_client_cnxns > 0 &&
      clients_.connections_from(m.remote_address) >= config_.max_client_cnxns) {
    ++stats_.connections_rejected;
    spdlog::warn("too many connections from {} (max {}); closing", m.remote_address,
                 config_.max_client_cnxns);
    io_.close(m.conn, {});
    return;
  }
  Client& c = clients_.add(m.conn, m.remote_address, m.remote_port);
  c.auth.push_back(jute::Id{"ip", m.remote_address});
  if (!m.x509_subject.empty()) {
    // X509AuthenticationProvider: the verified client certificate's subject is the x509 id; the
    // configured super user also gets super.
    if (!config_.x509_super_user.empty() && m.x509_subject == config_.x509_super_user) {
      c.auth.push_back(jute::Id{"super", m.x509_subject});
    }
    c.auth.push_back(jute::Id{"x509", m.x509_subject});
  }
  c.stats.established_ms = clock_.wall_ms();
  c.last_heard_ms = clock_.monotonic_ms();
}

void RequestPipeline::handle_four_letter_word(Client& c, const std::string& word, std::string_view rest) {
  // stmk sets the process-wide mask the AdminServer's set_trace_mask sets too (trace_mask.h).
  if (word == "stmk" && is_whitelisted(word, config_)) set_text_trace_mask_from(rest);
  std::string answer = is_whitelisted(word, config_) ? render_status(word) : not_whitelisted_text(word);
  send(c, std::move(answer));
  c.closing = true;
  io_.close_after_flush(c.conn);
}

void RequestPipeline::handle_connect(Client& c, const ClientMessage& m) {
  if (m.rc != err::kOk) {
    drop_client(c, "malformed ConnectRequest");
    return;
  }
  const jute::ConnectRequest& req = m.connect;
  c.connect_seen = true;
  c.old_client = !req.has_read_only;
  if (gate_.read_only()) {
    handle_read_only_connect(c, m);
    return;
  }
  if (!gate_.serving()) {
    drop_client(c, "not in contact with a quorum: not serving");
    return;
  }
  if (req.last_zxid_seen > sm_.last_zxid()) {
    // The client has seen a newer state than ours: it must try another server.
    drop_client(c, fmt::format("client last zxid 0x{:x} is ahead of ours 0x{:x}",
                               req.last_zxid_seen, sm_.last_zxid()));
    return;
  }
  auto bounds = session::TimeoutBounds::from_config(
      config_.tick_time_ms, config_.min_session_timeout_ms, config_.max_session_timeout_ms);
  int32_t timeout = session::negotiate_timeout(req.time_out, bounds);

  QueuedRequest p;
  p.is_connect = true;
  p.op = op::kCreateSession;
  p.received_ms = m.received_ms;
  if (req.session_id == 0) {
    int64_t id = session_ids_.next();
    while (sm_.sessions().contains(id)) id = session_ids_.next();
    Txn txn;
    txn.kind = TxnKind::kCreateSession;
    txn.session_id = id;
    txn.timeout_ms = timeout;
    txn.password = session::to_bytes(session::make_password(id, random_()));
    c.session_id = id;  // bound to this connection once the session is committed
    c.timeout_ms = timeout;
    submit(c, std::move(p), std::move(txn), false);
    return;
  }
  // Reattach: the session must exist, not be on its way out, and the password must match.
  bool valid = sm_.sessions().find(req.session_id) && !duties_.closing(req.session_id) &&
               sm_.sessions().password_matches(req.session_id, req.passwd.bytes);
  if (!valid) {
    p.state = QueuedRequest::Answered{refused_connect_reply(c.old_client), true};
    enqueue(c, std::move(p));
    return;
  }
  // Any older connection of this session is replaced by this one.
  uint64_t old = clients_.connection_of(req.session_id);
  if (old != 0 && old != c.conn) {
    if (Client* oc = clients_.find(old)) {
      clients_.unbind_session(*oc);
      drop_client(*oc, "session moved to a new connection");
    }
  }
  clients_.bind_session(c, req.session_id);
  c.timeout_ms = timeout;
  duties_.session_attached(c.session_id, timeout, clock_.monotonic_ms());
  p.state = QueuedRequest::Answered{connect_reply(c.old_client, timeout, c.session_id, req.passwd.bytes)};
  enqueue(c, std::move(p));
}

void RequestPipeline::handle_request(Client& c, ClientMessage& m) {
  const int32_t rc = m.rc;
  if (c.read_only) {
    read_only_sessions_.heard(c.session_id, clock_.monotonic_ms());
  } else if (c.session_id != 0) {
    duties_.session_heard(c.session_id, c.timeout_ms, clock_.monotonic_ms());
  }
  QueuedRequest p;
  p.xid = m.request.header.xid;
  p.op = m.request.header.type;
  p.received_ms = m.received_ms;
  p.handled_ms = c.last_heard_ms;  // now
  if (m.logged && config_.slow_request_threshold_ms > 0) p.path = write_path(p.op, m.record);
  if (refuse_unauthenticated(c, p)) {
    // answered: SessionClosedRequireAuth, then the connection closes
  } else if (rc == err::kUnimplemented) {
    // ZooKeeper answers an unknown op with Unimplemented, then drops the connection.
    spdlog::info("session 0x{:x}: unknown op {}; closing", c.session_id, p.op);
    p.state = QueuedRequest::Answered{reply_with_body(jute::ReplyHeader{p.xid, -1, err::kUnimplemented}), true};
  } else if (c.read_only && (m.logged || p.op == op::kSync)) {
    answer_read_only_write(c, p);
  } else if (m.logged && p.op != op::kCloseSession && log_.disk_full()) {
    // This server's log cannot take it (the storage thread logged "disk full" once): refused at
    // once, as a read-only server refuses writes, instead of waiting for space.
    p.state = QueuedRequest::Answered{reply_with_body(jute::ReplyHeader{p.xid, sm_.last_zxid(), err::kNotReadOnly})};
  } else if (m.logged) {
    // A write: its record is decoded once, where it is applied (a malformed one fails there
    // with MarshallingError and still takes a zxid, as in ZooKeeper).
    Txn txn;
    txn.session_id = c.session_id;
    txn.xid = p.xid;
    txn.op = p.op;
    bool close_after = false;
    if (p.op == op::kCloseSession) {
      txn.kind = TxnKind::kCloseSession;
      duties_.mark_closing(c.session_id);
      close_after = true;
    } else {
      txn.kind = TxnKind::kRequest;
      txn.auth = c.auth;
      txn.request = std::move(m.record);
    }
    submit(c, std::move(p), std::move(txn), close_after);
    return;
  } else if (rc != err::kOk) {
    spdlog::info("session 0x{:x}: malformed {} request; closing", c.session_id, jute::op_name(p.op));
    p.state = QueuedRequest::Answered{
        reply_with_body(jute::ReplyHeader{p.xid, sm_.last_zxid(), err::kMarshallingError}), true};
  } else if (p.op == op::kAuth) {
    handle_auth(c, p, std::get<jute::AuthPacket>(m.request.body));
  } else if (p.op == op::kSasl && sasl_) {
    handle_sasl(c, p, std::get<jute::GetSASLRequest>(m.request.body));
  } else if (p.op == op::kSync) {
    // Linearizable: wait for a read point confirmed by a quorum, then for it to be applied here.
    const Waiter w{c.conn, c.queue.front_seq() + c.queue.size()};
    uint64_t rid = writes_.request_read_point(w);
    if (rid == 0) {
      p.state = QueuedRequest::Answered{{}, true};  // no leader: ConnectionLoss
    } else {
      p.state = QueuedRequest::InFlight{rid, false, std::get<jute::SyncRequest>(m.request.body).path};
    }
  } else {
    p.state = QueuedRequest::Read{std::move(m.request.body)};
  }
  enqueue(c, std::move(p));
}

void RequestPipeline::handle_auth(Client& c, QueuedRequest& p, const jute::AuthPacket& a) {
  // Identities change at once, so every later request carries them. Each is kept once, as
  // ZooKeeper's ServerCnxn.addAuthInfo keeps them.
  p.xid = jute::xid::kAuth;
  auto add = [&c](jute::Id id) {
    if (std::find(c.auth.begin(), c.auth.end(), id) == c.auth.end()) c.auth.push_back(std::move(id));
  };
  if (a.scheme == "digest") {
    // DigestAuthenticationProvider: any credential digests to an id; the super digest adds super.
    std::string id = digest_id(a.auth.bytes);
    if (!config_.super_digest.empty() && id == config_.super_digest) add(jute::Id{"super", ""});
    add(jute::Id{"digest", std::move(id)});
  } else if (a.scheme == "ip") {
    // IPAuthenticationProvider ignores the data: the peer's address is the identity.
    add(jute::Id{"ip", c.remote_address});
  } else {
    ++stats_.auth_failed;
    spdlog::info("session 0x{:x}: auth failed (scheme {})", c.session_id, a.scheme);
    p.state = QueuedRequest::Answered{
        reply_with_body(jute::ReplyHeader{jute::xid::kAuth, 0, err::kAuthFailed}), true};
    return;
  }
  p.state = QueuedRequest::Answered{reply_with_body(jute::ReplyHeader{jute::xid::kAuth, 0, err::kOk})};
}

void RequestPipeline::enqueue(Client& c, QueuedRequest p) {
  c.queue.push(std::move(p));
  ++outstanding_;
  pump(c);
}

void RequestPipeline::submit(Client& c, QueuedRequest p, Txn txn, bool close_after) {
  const Waiter w{c.conn, c.queue.front_seq() + c.queue.size()};
  uint64_t rid = writes_.submit(std::move(txn), w);
  if (rid == 0) {
    // No leader to take the write: the client sees ConnectionLoss and retries elsewhere.
    p.state = QueuedRequest::Answered{{}, true};
    enqueue(c, std::move(p));
    return;
  }
  p.state = QueuedRequest::InFlight{rid, close_after, {}};
  c.queue.push(std::move(p));
  ++outstanding_;
  update_flow_control(c);
}

void RequestPipeline::pump(Client& c) {
  // A client that does not read what it is sent gets no more answers until it does (its queue
  // then fills and flow control stops reading from it).
  while (!c.queue.empty() && !c.closing && c.unwritten_bytes < kMaxUnwrittenBytes) {
    QueuedRequest& head = c.queue.front();
    ReadResult r;
    if (auto* read = std::get_if<QueuedRequest::Read>(&head.state)) {
      r = reads_.execute(ReadCaller{c.conn, c.session_id, &c.auth}, head.xid, head.op, read->body);
    } else if (auto* done = std::get_if<QueuedRequest::Answered>(&head.state)) {
      r = ReadResult{std::move(done->reply), done->close_after};
    } else {
      break;  // in flight: everything behind it waits
    }
    QueuedRequest p = c.queue.pop_front();
    --outstanding_;
    const int64_t now = clock_.monotonic_ms();
    const int64_t latency = now - p.received_ms;
    if (!p.is_connect && p.op != op::kPing) {
      stats_.latency.record(latency);
      c.stats.latency.record(latency);
      if (auto line = slow_request_line(p, c.session_id, now, config_.slow_request_threshold_ms)) {
        ++stats_.slow_requests;
        spdlog::warn("{}", *line);
        remember_slow_request(stats_, *line, clock_.wall_ms());
        stats_.last_slow_request = std::move(*line);
      }
      // ServerStats.updateLatency: a request with a txn header is an update, the rest reads.
      if (latency >= 0) {
        (jute::op_is_write(p.op) ? stats_.update_latency_ms : stats_.read_latency_ms)
            .record(static_cast<uint64_t>(latency));
      }
    }
    c.stats.last_op = p.is_connect ? op::kCreateSession : p.op;
    c.stats.last_cxid = p.xid;
    c.stats.last_zxid = sm_.last_zxid();
    c.stats.last_response_ms = clock_.wall_ms();
    ++stats_.packets_sent;
    if (!r.reply.empty()) send(c, std::move(r.reply));
    if (r.close_after) {
      c.closing = true;
      io_.close_after_flush(c.conn);
      return;
    }
  }
  if (!c.closing) update_flow_control(c);
}

void RequestPipeline::update_flow_control(Client& c) {
  // A connection with nothing queued keeps reading whatever the global count: nothing of its own
  // would ever look at it again to resume it (ZooKeeper's shouldThrottle also spares a connection
  // with no outstanding requests).
  const bool reading = c.queue.empty() || !over_flow_limits(c.queue.size(), outstanding_, flow_);
  if (reading == c.reading) return;
  c.reading = reading;
  io_.set_reading(c.conn, reading);
}

void RequestPipeline::send(Client& c, std::string framed) {
  ++c.packets_sent;
  c.unwritten_bytes += framed.size();
  const auto limit = static_cast<uint64_t>(config_.max_client_send_queue_bytes);
  if (limit > 0 && c.unwritten_bytes > limit && !c.closing) {
    // Replies stop at kMaxUnwrittenBytes, watch events do not: a client that reads nothing while
    // its watches fire would otherwise make the server hold its output for ever. Closed (not
    // forgotten: callers may be iterating over it), the network thread reports kClosed later.
    ++stats_.slow_consumers_closed;
    c.closing = true;
    io_.close(c.conn, "slow consumer: " + std::to_string(c.unwritten_bytes) +
                          " bytes unsent (max_client_send_queue_bytes " + std::to_string(limit) + ")");
    return;
  }
  io_.send(c.conn, std::move(framed));
}

void RequestPipeline::drop_client(Client& c, std::string_view reason) {
  const uint64_t conn = c.conn;
  forget_client(c);
  io_.close(conn, reason);
}

void RequestPipeline::forget_client(Client& c) {
  outstanding_ -= c.queue.size();
  watches_.remove_watcher(c.conn);
  clients_.remove(c.conn);
}

void RequestPipeline::tick() {
  check_serving();
  const int64_t now = clock_.monotonic_ms();
  report_member_figures(now);
  read_only_sessions_.expire(now);
  // A client silent for longer than its session timeout is gone (ZooKeeper closes it too); the
  // session itself lives on until the leader expires it.
  std::vector<uint64_t> idle;
  clients_.for_each([&](Client& c) {
    if (c.session_id != 0 && c.timeout_ms > 0 && now - c.last_heard_ms > c.timeout_ms) {
      idle.push_back(c.conn);
    }
  });
  for (uint64_t conn : idle) {
    if (Client* c = clients_.find(conn)) drop_client(*c, "client silent for longer than its session timeout");
  }
  duties_.tick(now, clock_.wall_ms());
  io_.flush();
}

int64_t RequestPipeline::tick_interval_ms() const {
  // Expiry is decided in tick-sized buckets; checking twice a tick keeps the lag under a tick.
  // At most a twelfth of the smallest session timeout: the quorum-contact bound's reasoning
  // (serving_gate.h) counts on it, for the gate's checks and for followers' liveness reports.
  // A reaper interval shorter than that is kept too (a rig that sets it small wants it).
  return std::max(10, std::min({config_.tick_time_ms / 2, config_.min_session_timeout() / 12,
                                config_.container_check_interval_ms}));
}

}  // namespace zkraft::server
