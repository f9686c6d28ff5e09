// RequestPipeline, serving only while in contact with a quorum (ServingGate), and read-only mode.
#include <spdlog/spdlog.h>

#include "jute/errors.h"
#include "jute/opcodes.h"
#include "server/replies.h"
#include "server/request_pipeline.h"
#include "session/session_password.h"
#include "session/session_timeout.h"

namespace zkraft::server {

void RequestPipeline::check_serving() {
  // Until the start-up replay is done the gate stays where it starts, cut off, whatever the
  // contact (replicated_log.h): not serving, and not read-only either, since the read-only
  // grace counts from here, as ZooKeeper's starts once its database is loaded.
  if (!log_.start_up_replay_done()) return;
  const int64_t age = log_.quorum_contact_age_ms();
  const auto change = gate_.update(age, clock_.monotonic_ms());
  if (!change) return;
  // Clients that carry a session (or are in the middle of asking for one); a connection that
  // only sent a four-letter word is answered and closes on its own.
  auto close_clients = [this](bool read_only_only, std::string_view reason) {
    std::vector<uint64_t> conns;
    clients_.for_each([&](Client& c) {
      if (c.closing) return;
      if (read_only_only ? c.read_only : (c.connect_seen || c.session_id != 0)) conns.push_back(c.conn);
    });
    for (uint64_t conn : conns) {
      if (Client* c = clients_.find(conn)) drop_client(*c, reason);
    }
    io_.flush();
    return conns.size();
  };
  if (change->from == ServingMode::kServing) {
    size_t n = close_clients(false, "lost contact with a quorum");
    spdlog::warn("no contact with a quorum for {} ms (bound {} ms): not serving; closed {} client "
                 "connections",
                 age == ReplicatedLog::kNoQuorumContact ? -1 : age,
                 gate_.policy().contact_bound_ms, n);
  } else if (change->to == ServingMode::kServing) {
    size_t n = change->from == ServingMode::kReadOnly ? close_clients(true, "quorum regained") : 0;
    read_only_sessions_.clear();
    spdlog::info("in contact with a quorum again: serving{}",
                 n ? fmt::format(" (closed {} read-only connections)", n) : std::string());
  } else if (change->to == ServingMode::kReadOnly) {
    spdlog::warn("read-only mode: serving read-only clients until a quorum is back");
  }
}

void RequestPipeline::check_serving_on_contact() {
  // A leader known again means fresh contact (the log refreshed its figures before telling us):
  // opening the gate now, not at the next tick, saves up to a tick of not serving after a start
  // or an election, and after the batch that ends the start-up replay. Only the opening
  // direction is taken early; a lost leader still closes the gate when the bound passes
  // (serving_gate.h), as before.
  if (gate_.serving()) return;
  if (log_.quorum_contact_age_ms() > gate_.policy().contact_bound_ms) return;
  check_serving();
}

void RequestPipeline::handle_read_only_connect(Client& c, const ClientMessage& m) {
  // ZooKeeper's order (ZooKeeperServer.processConnectRequest on a ReadOnlyZooKeeperServer).
  const jute::ConnectRequest& req = m.connect;
  if (!req.read_only) {
    drop_client(c, "read-only mode: refusing a read/write client");
    return;
  }
  if (req.last_zxid_seen > sm_.last_zxid()) {
    drop_client(c, fmt::format("client last zxid 0x{:x} is ahead of ours 0x{:x}",
                               req.last_zxid_seen, sm_.last_zxid()));
    return;
  }
  auto bounds = config_.session_timeout_bounds();
  const int32_t timeout = session::negotiate_timeout(req.time_out, bounds);
  const int64_t now = clock_.monotonic_ms();
  int64_t id = req.session_id;
  std::string password;
  if (id == 0) {
    id = session_ids_.next();
    while (sm_.sessions().contains(id) || read_only_sessions_.contains(id)) id = session_ids_.next();
    password = session::to_bytes(session::make_password(id, random_()));
    read_only_sessions_.create(id, password, timeout, now);
  } else if (!read_only_sessions_.contains(id)) {
    // A replicated session cannot be renewed without a quorum (ZooKeeper 3.9:
    // RENEW_GLOBAL_SESSION_IN_RO_MODE); the client keeps looking for a read/write server.
    drop_client(c, "read-only mode: refusing to renew a replicated session");
    return;
  } else if (!read_only_sessions_.valid(id, req.passwd.bytes)) {
    QueuedRequest p;
    p.is_connect = true;
    p.op = jute::op::kCreateSession;
    p.received_ms = m.received_ms;
    p.state = QueuedRequest::Answered{refused_connect_reply(c.old_client), true};
    enqueue(c, std::move(p));
    return;
  } else {
    password = req.passwd.bytes;
    read_only_sessions_.heard(id, now);
    uint64_t old = clients_.connection_of(id);
    if (old != 0 && old != c.conn) {
      if (Client* oc = clients_.find(old)) {
        clients_.unbind_session(*oc);
        drop_client(*oc, "session moved to a new connection");
      }
    }
  }
  clients_.bind_session(c, id);
  c.read_only = true;
  c.timeout_ms = timeout;
  QueuedRequest p;
  p.is_connect = true;
  p.op = jute::op::kCreateSession;
  p.received_ms = m.received_ms;
  p.state = QueuedRequest::Answered{connect_reply(c.old_client, timeout, id, password, true)};
  enqueue(c, std::move(p));
}

void RequestPipeline::answer_read_only_write(Client& c, QueuedRequest& p) {
  if (p.op == jute::op::kCloseSession) {
    // A local session ends here and now; nothing to replicate.
    read_only_sessions_.remove(c.session_id);
    p.state = QueuedRequest::Answered{
        reply_with_body(jute::ReplyHeader{p.xid, sm_.last_zxid(), jute::err::kOk}), true};
    return;
  }
  // ReadOnlyRequestProcessor: every state-changing request (and sync) gets NotReadOnly.
  p.state = QueuedRequest::Answered{
      reply_with_body(jute::ReplyHeader{p.xid, sm_.last_zxid(), jute::err::kNotReadOnly})};
}

}  // namespace zkraft::server
