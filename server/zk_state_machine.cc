// ZkStateMachine's apply: each committed Txn kind (session create/close, container/TTL reap,
// restore, client request) changes the tree and the session table in log order, and the reply
// record is built only where it is wanted. The snapshot side is zk_state_machine_snapshot.cc,
// the reconfig op zk_state_machine_reconfig.cc.
#include "server/zk_state_machine.h"

#include "jute/errors.h"
#include "jute/opcodes.h"
#include "jute/request.h"
#include "jute/responses.h"

namespace zkraft::server {

namespace {

template <class T>
std::string encode_body(const T& v) {
  jute::Writer w;
  jute::encode(w, v);
  return w.take();
}

// create (op 1) answers with the path only; create2, createContainer and createTTL add the Stat.
bool create_returns_stat(int32_t op) { return op != jute::op::kCreate; }

}  // namespace

void ZkStateMachine::skip(int64_t zxid) {
  last_zxid_ = zxid;
  log_digest(zxid);
}

void ZkStateMachine::log_digest(int64_t zxid) {
  if (zxid % kDigestLogInterval != 0) return;
  const int64_t digest = options_.digest_enabled ? static_cast<int64_t>(tree_.tree_digest()) : 0;
  digest_log_.push_back(ZxidDigest{zxid, digest});
  if (digest_log_.size() > kDigestLogLimit) digest_log_.pop_front();
}

ApplyOutcome ZkStateMachine::apply(int64_t zxid, const Txn& txn, bool want_reply) {
  want_reply_ = want_reply;
  ApplyOutcome out;
  out.zxid = zxid;
  last_zxid_ = zxid;
  tree_.set_last_zxid(zxid);
  tree::TxnContext ctx;
  ctx.zxid = zxid;
  ctx.time_ms = txn.time_ms;
  ctx.session_id = txn.session_id;
  ctx.auth = &txn.auth;

  switch (txn.kind) {
    case TxnKind::kCreateSession: {
      session::SessionPassword pw{};
      session::from_bytes(txn.password, pw);
      out.session_created = sessions_.add(txn.session_id, txn.timeout_ms, pw);
      if (!out.session_created) out.err = jute::err::kSessionExpired;
      break;
    }
    case TxnKind::kCloseSession:
      if (sessions_.remove(txn.session_id)) {
        tree_.close_session(ctx, txn.session_id, out.triggers);
        out.session_closed = true;
      } else {
        out.err = jute::err::kSessionExpired;
      }
      break;
    case TxnKind::kReapNode:
      out.err = tree_.delete_container(ctx, txn.path, out.triggers);
      break;
    case TxnKind::kRestore: {
      // The zxid goes on from this entry's, not from the restored state's: zxids are log
      // indexes here and must keep growing for clients (which refuse a server behind them).
      int64_t restored_zxid = 0;
      if (load_state(txn.request, &restored_zxid)) {
        out.state_replaced = true;
      } else {
        out.err = jute::err::kMarshallingError;  // checked before proposing: only a bug gets here
      }
      break;
    }
    case TxnKind::kRequest:
      // reconfig checks its session after reconfigEnabled, as ZooKeeper does (apply_reconfig).
      if (txn.op != jute::op::kReconfig && !sessions_.contains(txn.session_id)) {
        // The session expired between the request and its commit.
        out.err = jute::err::kSessionExpired;
        break;
      }
      apply_request(ctx, txn, out);
      break;
  }
  tree_.set_last_zxid(zxid);
  out.quota_warning = tree_.take_quota_warning();
  log_digest(zxid);
  return out;
}

void ZkStateMachine::apply_request(const tree::TxnContext& ctx, const Txn& txn,
                                   ApplyOutcome& out) {
  namespace op = jute::op;
  jute::Limits limits;
  limits.max_buffer = 64 << 20;
  jute::Reader r(txn.request, limits);
  jute::RequestBody body;
  if (jute::decode_request_body(txn.op, r, body) != jute::err::kOk) {
    out.err = jute::err::kMarshallingError;
    return;
  }
  switch (txn.op) {
    case op::kCreate:
    case op::kCreate2:
    case op::kCreateContainer:
    case op::kCreateTTL: {
      std::string path;
      jute::Buffer data;
      std::vector<jute::ACL> acl;
      int32_t flags = 0;
      int64_t ttl = -1;
      if (auto* c = std::get_if<jute::CreateRequest>(&body)) {
        path = c->path, data = c->data, acl = c->acl, flags = c->flags;
      } else if (auto* t = std::get_if<jute::CreateTTLRequest>(&body)) {
        path = t->path, data = t->data, acl = t->acl, flags = t->flags, ttl = t->ttl;
      }
      if (txn.op == op::kCreateContainer && flags != jute::create_mode::kContainer) {
        out.err = jute::err::kBadArguments;
        return;
      }
      if (txn.op == op::kCreateTTL && !options_.extended_types_enabled) {
        out.err = jute::err::kUnimplemented;  // zookeeper.extendedTypesEnabled=false
        return;
      }
      if (txn.op == op::kCreateTTL && !jute::create_mode::is_ttl(flags)) {
        out.err = jute::err::kBadArguments;
        return;
      }
      if (txn.op != op::kCreateTTL && jute::create_mode::is_ttl(flags)) {
        out.err = jute::err::kBadArguments;
        return;
      }
      std::string created;
      jute::Stat stat;
      out.err = tree_.create(ctx, path, data, acl, flags, ttl, created, &stat, out.triggers);
      if (out.err == jute::err::kOk && want_reply_) {
        out.reply = create_returns_stat(txn.op) ? encode_body(jute::Create2Response{created, stat})
                                                : encode_body(jute::CreateResponse{created});
      }
      return;
    }
    case op::kDelete: {
      const auto& d = std::get<jute::DeleteRequest>(body);
      out.err = tree_.remove(ctx, d.path, d.version, out.triggers);
      return;
    }
    case op::kSetData: {
      const auto& s = std::get<jute::SetDataRequest>(body);
      jute::Stat stat;
      out.err = tree_.set_data(ctx, s.path, s.data, s.version, stat, out.triggers);
      if (out.err == jute::err::kOk && want_reply_) out.reply = encode_body(jute::SetDataResponse{stat});
      return;
    }
    case op::kSetACL: {
      const auto& s = std::get<jute::SetACLRequest>(body);
      jute::Stat stat;
      out.err = tree_.set_acl(ctx, s.path, s.acl, s.version, stat);
      if (out.err == jute::err::kOk && want_reply_) out.reply = encode_body(jute::SetACLResponse{stat});
      return;
    }
    case op::kMulti:
      apply_multi(ctx, std::get<jute::MultiRequest>(body), out);
      return;
    case op::kCheck: {
      const auto& k = std::get<jute::CheckVersionRequest>(body);
      out.err = tree_.check_version(k.path, txn.auth, k.version);
      jute::SetDataResponse resp;
      if (out.err == jute::err::kOk) tree_.stat_of(k.path, resp.stat);
      if (out.err == jute::err::kOk && want_reply_) out.reply = encode_body(resp);
      return;
    }
    case op::kReconfig:
      apply_reconfig(ctx, txn, std::get<jute::ReconfigRequest>(body), out);
      return;
    default:
      out.err = jute::err::kUnimplemented;
      return;
  }
}

void ZkStateMachine::apply_multi(const tree::TxnContext& ctx, const jute::MultiRequest& req,
                                 ApplyOutcome& out) {
  namespace op = jute::op;
  std::vector<tree::MultiOp> ops;
  ops.reserve(req.ops.size());
  for (const auto& o : req.ops) {
    if (auto* c = std::get_if<jute::CreateRequest>(&o.body)) {
      ops.push_back(tree::CreateOp{c->path, c->data, c->acl, c->flags, -1});
    } else if (auto* t = std::get_if<jute::CreateTTLRequest>(&o.body)) {
      if (!options_.extended_types_enabled) {
        out.err = jute::err::kUnimplemented;
        return;
      }
      ops.push_back(tree::CreateOp{t->path, t->data, t->acl, t->flags, t->ttl});
    } else if (auto* d = std::get_if<jute::DeleteRequest>(&o.body)) {
      ops.push_back(tree::DeleteOp{d->path, d->version});
    } else if (auto* s = std::get_if<jute::SetDataRequest>(&o.body)) {
      ops.push_back(tree::SetDataOp{s->path, s->data, s->version});
    } else if (auto* k = std::get_if<jute::CheckVersionRequest>(&o.body)) {
      ops.push_back(tree::CheckOp{k->path, k->version});
    } else {
      // A read inside a write multi: ZooKeeper rejects the whole request.
      out.err = jute::err::kMarshallingError;
      return;
    }
  }
  bool ok = false;
  auto results = tree_.multi(ctx, ops, out.triggers, ok);
  out.err = jute::err::kOk;  // a multi's header says ok; the per-op results carry the errors
  if (!want_reply_) return;
  jute::MultiResponse resp;
  resp.results.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& res = results[i];
    if (!ok) {
      resp.results.push_back(jute::MultiResult::error(res.err));
      continue;
    }
    jute::MultiResult mr;
    mr.type = req.ops[i].type;
    mr.err = 0;
    if (const auto* create = std::get_if<tree::CreateOp>(&ops[i])) {
      // ZooKeeper 3.9's Op.Create: a container or TTL mode makes the op createContainer or
      // createTTL, otherwise the op code stays; every create but a plain create (1) answers as
      // create2 (15) with its Stat (OpResult.CreateResult), never 19 or 21.
      const bool by_mode = jute::create_mode::is_container(create->mode) || jute::create_mode::is_ttl(create->mode);
      if (mr.type == op::kCreate && !by_mode) {
        mr.body = jute::CreateResponse{res.path};
      } else {
        mr.type = op::kCreate2;
        mr.body = jute::Create2Response{res.path, res.stat};
      }
    } else if (mr.type == op::kSetData) {
      mr.body = jute::SetDataResponse{res.stat};
    } else {
      mr.body = jute::EmptyResponse{};
    }
    resp.results.push_back(std::move(mr));
  }
  out.reply = encode_body(resp);
}

}  // namespace zkraft::server
