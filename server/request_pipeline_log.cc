// RequestPipeline, what consensus delivers: committed entries (applied to the state, then
// events, session bookkeeping and the origin's reply), snapshots, leader changes, read points
// and peer messages.
#include "server/request_pipeline.h"

#include <spdlog/spdlog.h>

#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/opcodes.h"
#include "jute/reply.h"
#include "server/peer_message.h"
#include "server/replies.h"
#include "tree/acl.h"

namespace zkraft::server {

namespace err = jute::err;

void RequestPipeline::on_apply(uint64_t index, std::string_view data) {
  std::optional<Txn> txn;
  if (!data.empty()) txn = decode_txn(data);
  if (!txn) {
    if (!data.empty()) spdlog::error("log entry {} is not a transaction; skipped", index);
    sm_.skip(static_cast<int64_t>(index));
    release_syncs();
    return;
  }
  // Only the server that holds the client builds its reply.
  const bool mine = txn->origin_server == log_.self_id() && txn->origin_request != 0 &&
                    writes_.waiting(txn->origin_request);
  ApplyOutcome out = sm_.apply(static_cast<int64_t>(index), *txn, mine);
  if (!out.quota_warning.empty()) spdlog::warn("{}", out.quota_warning);
  release_syncs();
  // Events first: a client must see the event before any reply that shows the change.
  deliver(out.triggers, out.zxid);
  session_event(*txn, out, mine);
  if (txn->kind == TxnKind::kReapNode) duties_.node_reaped(txn->path);
  if (txn->kind == TxnKind::kRestore) restored(*txn, out);
  if (out.membership_changed) duties_.learn_peers();
  if (mine) answer_own(*txn, out);
}

void RequestPipeline::session_event(const Txn& txn, const ApplyOutcome& out, bool mine) {
  if (txn.kind == TxnKind::kCreateSession) {
    if (out.session_created) duties_.session_created(txn.session_id, txn.timeout_ms, clock_.monotonic_ms());
    return;
  }
  if (txn.kind != TxnKind::kCloseSession) return;
  duties_.session_closed(txn.session_id);
  if (txn.expired) spdlog::info("session 0x{:x} expired", txn.session_id);
  // A session that expired (or was closed elsewhere) loses its connection here.
  uint64_t conn = clients_.connection_of(txn.session_id);
  Client* c = conn ? clients_.find(conn) : nullptr;
  if (c && !mine) {
    drop_client(*c, fmt::format("session 0x{:x} {}", txn.session_id, txn.expired ? "expired" : "closed"));
  }
}

void RequestPipeline::answer_own(const Txn& txn, const ApplyOutcome& out) {
  auto w = writes_.take(txn.origin_request);
  if (!w) return;
  Client* c = clients_.find(w->conn);
  if (!c) return;  // the client went away; the change stands
  QueuedRequest* p = c->queue.find(w->seq);
  if (!p) return;
  std::string reply;
  bool close_after = false;
  if (txn.kind == TxnKind::kCreateSession) {
    if (out.err == err::kOk) {
      clients_.bind_session(*c, txn.session_id);
      reply = connect_reply(c->old_client, txn.timeout_ms, txn.session_id, txn.password);
    } else {
      reply = refused_connect_reply(c->old_client);
      close_after = true;
    }
  } else if (txn.kind == TxnKind::kCloseSession) {
    reply = reply_with_body(jute::ReplyHeader{p->xid, out.zxid, err::kOk});
    clients_.unbind_session(*c);
  } else {
    reply = reply_with_body(jute::ReplyHeader{p->xid, out.zxid, out.err},
                            out.err == err::kOk ? std::string_view(out.reply) : std::string_view());
    close_after = out.err == err::kSessionExpired;
  }
  p->answered_ms = clock_.monotonic_ms();
  c->queue.answer(w->seq, std::move(reply), close_after);
  pump(*c);
}

void RequestPipeline::answer(const Waiter& w, std::string reply, bool close_after) {
  Client* c = clients_.find(w.conn);
  if (!c) return;
  if (QueuedRequest* p = c->queue.find(w.seq)) p->answered_ms = clock_.monotonic_ms();
  if (!c->queue.answer(w.seq, std::move(reply), close_after)) return;
  pump(*c);
}

void RequestPipeline::release_syncs() {
  if (!writes_.has_syncs_to_release()) return;
  for (const auto& r : writes_.release(static_cast<uint64_t>(sm_.last_zxid()))) {
    auto w = writes_.take(r.request_id);
    if (!w) continue;
    Client* c = clients_.find(w->conn);
    QueuedRequest* p = c ? c->queue.find(w->seq) : nullptr;
    if (!p) continue;
    if (!r.ok) {
      answer(*w, {}, true);  // no read point: ConnectionLoss
      continue;
    }
    const auto& in = std::get<QueuedRequest::InFlight>(p->state);
    answer(*w, jute::reply_frame(jute::ReplyHeader{p->xid, sm_.last_zxid(), err::kOk},
                                 jute::SyncResponse{in.sync_path}),
           false);
  }
}

void RequestPipeline::deliver(const std::vector<tree::WatchTrigger>& triggers, int64_t zxid) {
  if (triggers.empty() || watches_.empty()) return;
  std::vector<session::Delivery> out;
  for (const auto& t : triggers) watches_.trigger(t, out);
  for (const auto& d : out) {
    Client* c = clients_.find(d.watcher);
    if (!c) continue;
    // Since 3.8.4/3.9.2 a watcher only hears of nodes it may read (CVE-2024-23944).
    if (d.acl && !tree::acl_allows(*d.acl, jute::perms::kRead, c->auth, sm_.tree().schemes())) {
      continue;
    }
    send_event(d.watcher, static_cast<int32_t>(d.type), d.path, zxid);
  }
}

void RequestPipeline::send_event(uint64_t watcher, int32_t type, const std::string& path, int64_t zxid) {
  Client* c = clients_.find(watcher);
  if (!c) return;
  // 3.9 puts the triggering txn's zxid in the header of a notification.
  send(*c, jute::reply_frame(jute::ReplyHeader{jute::xid::kNotification, zxid, err::kOk},
                             jute::WatcherEvent{type, jute::keeper_state::kSyncConnected, path}));
  ++stats_.packets_sent;
}

void RequestPipeline::on_restore(uint64_t index, std::string_view data) {
  if (!sm_.restore(static_cast<int64_t>(index), data)) {
    spdlog::critical("snapshot at index {} does not parse; stopping", index);
    std::abort();
  }
}

std::string RequestPipeline::on_snapshot_request() { return sm_.serialize(); }

bool RequestPipeline::on_snapshot_write(size_t piece_bytes, const std::function<bool(std::string_view)>& out) {
  return sm_.serialize_to(piece_bytes, out);
}

std::optional<tree::LiveSnapshotCheck> RequestPipeline::begin_live_snapshot(jute::Writer& out) {
  return sm_.begin_live_snapshot(out);
}

bool RequestPipeline::continue_live_snapshot(jute::Writer& out, size_t max_records) {
  return sm_.continue_live_snapshot(out, max_records);
}

void RequestPipeline::on_leader_changed(uint64_t leader, bool self) {
  spdlog::info("leader is now {}{}", leader, self ? " (this server)" : "");
  duties_.leader_changed(self, clock_.monotonic_ms());
  if (leader != 0) check_serving_on_contact();
  if (!restores_.empty()) {
    fail_restores("the leader changed before the restore applied: it may still apply; check the tree");
  }
  // Writes (and syncs) in flight may or may not commit: like ZooKeeper, their clients lose the
  // connection and learn the outcome by reading after they reconnect.
  for (const Waiter& w : writes_.fail_all()) {
    if (Client* c = clients_.find(w.conn)) drop_client(*c, "leader changed with requests in flight");
  }
}

void RequestPipeline::on_read_index(uint64_t context, uint64_t index, bool ok) {
  writes_.on_read_index(context, index, ok);
  release_syncs();
}

void RequestPipeline::on_peer_message(uint64_t from, std::string payload) {
  auto m = decode_peer_message(payload);
  if (!m) {
    spdlog::warn("dropping a malformed message of {} bytes from server {}", payload.size(), from);
    return;
  }
  if (auto* w = std::get_if<ForwardedWrite>(&*m)) {
    writes_.on_forwarded(std::move(w->txn));
  } else if (std::holds_alternative<LeadershipRequest>(*m)) {
    if (log_.is_leader()) {
      spdlog::info("server {} asks for leadership (rqld): handing it over", from);
      log_.transfer_leadership(from);
    }
  } else if (auto* f = std::get_if<MemberFigures>(&*m)) {
    member_figures_reported(from, *f);
  } else {
    duties_.sessions_alive(std::get<SessionsAlive>(*m).session_ids, clock_.monotonic_ms());
  }
}

void RequestPipeline::on_batch_done() {
  check_serving_on_contact();  // the batch may have ended the start-up replay
  io_.flush();
}

}  // namespace zkraft::server
