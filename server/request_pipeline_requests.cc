// RequestPipeline, what a connection asks: the handshake (a new session is proposed, a known one
// reattached), then each request classified into the state its queue entry starts in: answered
// at once, in flight (a write or a sync, until its commit or read point), or a read to execute
// at the head of the queue. Invariant: every request becomes exactly one queue entry, in the
// order the connection sent it. (The queue itself: request_pipeline_queue.cc.)
#include "server/request_pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/opcodes.h"
#include "server/digest_auth.h"
#include "server/replies.h"
#include "server/slow_request_log.h"
#include "session/session_password.h"
#include "session/session_timeout.h"

namespace zkraft::server {

namespace op = jute::op;
namespace err = jute::err;

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
  auto bounds = config_.session_timeout_bounds();
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

}  // namespace zkraft::server
