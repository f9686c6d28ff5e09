#include "server/zk_state_machine.h"

#include <spdlog/spdlog.h>

#include <limits>

#include "jute/errors.h"
#include "jute/opcodes.h"
#include "jute/request.h"
#include "jute/responses.h"
#include "server/membership_text.h"
#include "tree/acl.h"

#include <algorithm>
#include <charconv>

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

namespace {
constexpr int32_t kSnapshotFormat = 1;
}

std::string ZkStateMachine::serialize() const {
  jute::Writer w;
  w.write_int(kSnapshotFormat);
  w.write_long(last_zxid_);
  sessions_.serialize(w);
  tree_.serialize(w);
  return w.take();
}

bool ZkStateMachine::load_state(std::string_view bytes, int64_t* snapshot_zxid) {
  jute::Limits limits;
  limits.max_buffer = std::numeric_limits<int32_t>::max();
  limits.max_vector = std::numeric_limits<int32_t>::max();
  jute::Reader r(bytes, limits);
  int32_t format = 0;
  int64_t last = 0;
  if (!r.read_int(format) || format != kSnapshotFormat || !r.read_long(last)) return false;
  session::SessionTable sessions;
  tree::ZnodeTree tree(tree_options(options_));
  if (!sessions.deserialize(r) || !tree.deserialize(r)) return false;
  sessions_ = std::move(sessions);
  tree_ = std::move(tree);
  *snapshot_zxid = last;
  return true;
}

bool ZkStateMachine::valid_state(std::string_view bytes) {
  ZkStateMachine scratch;
  int64_t last = 0;
  return scratch.load_state(bytes, &last);
}

bool ZkStateMachine::restore(int64_t zxid, std::string_view bytes) {
  int64_t last = 0;
  if (!load_state(bytes, &last)) return false;
  last_zxid_ = std::max(last, zxid);
  tree_.set_last_zxid(last_zxid_);
  // Pairs past the snapshot's zxid (never on a Raft log, whose snapshots only move forward)
  // would describe a history this state no longer has.
  while (!digest_log_.empty() && digest_log_.back().zxid > last_zxid_) digest_log_.pop_back();
  return true;
}

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

namespace {

// Java's StringUtils.split as ZooKeeper uses it: split on `sep`, trim, drop the empty pieces.
std::vector<std::string_view> java_split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    size_t c = s.find(sep);
    std::string_view item = s.substr(0, c);
    while (!item.empty() && static_cast<unsigned char>(item.front()) <= ' ') item.remove_prefix(1);
    while (!item.empty() && static_cast<unsigned char>(item.back()) <= ' ') item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
    if (c == std::string_view::npos) break;
    s = s.substr(c + 1);
  }
  return out;
}

// Long.parseLong: an optional sign, then decimal digits only.
bool java_parse_long(std::string_view s, int64_t& v) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;  // from_chars into an unsigned takes no sign of its own
  uint64_t u = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), u);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (u > limit) return false;
  v = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  return true;
}

// Wildcard and loopback addresses, which checkAddressDuplicate leaves out. (ZooKeeper resolves
// host names first; the state machine compares them as written.)
bool special_address(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "::1" ||
         host == "localhost" || host.starts_with("127.");
}

// QuorumServer.checkAddressDuplicate: no quorum, election or client address of one server may
// be another's, wildcard and loopback addresses aside.
bool addresses_collide(const PeerConfig& a, const PeerConfig& b) {
  auto addrs = [](const PeerConfig& p) {
    std::vector<std::pair<std::string, int32_t>> v;
    for (auto [host, port] : {std::pair<std::string, int32_t>{p.host, p.peer_port},
                              {p.host, p.election_port}, {p.client_address, p.client_port}}) {
      if (port != 0 && !special_address(host)) v.emplace_back(host, port);
    }
    return v;
  };
  for (const auto& x : addrs(a)) {
    for (const auto& y : addrs(b)) {
      if (x == y) return true;
    }
  }
  return false;
}

}  // namespace

// The checks and their order are PrepRequestProcessor's (OpCode.reconfig, 3.8 and 3.9), so a
// caller without WRITE on /zookeeper/config who sends a wrong version or bad members learns that
// first: reconfigEnabled (ReconfigDisabled) -> the session (SessionExpired) -> standalone
// (Unimplemented) -> [reconfig in progress] -> fromConfig version (BadVersion) -> the members
// (BadArguments; an id that is not a number is MarshallingError, as Long.parseLong's exception
// is in ZooKeeper) -> at least 2 voters, standaloneEnabled's rule (BadArguments) -> a majority of
// the new voters in sync with the leader (NewConfigNoQuorum) -> WRITE on /zookeeper/config
// (NoAuth).
// Who is in sync is the leader's view of the moment, not replicated state: the leader stamps it
// into the entry when it proposes it (Txn::synced), so every server decides alike; an entry
// without it (from before the field) skips that check. [reconfig in progress] is not a state
// zkraft has: the committed config is the target the leader walks Raft's membership to, one
// change at a time, and a later reconfig re-targets that walk.
void ZkStateMachine::apply_reconfig(const tree::TxnContext& ctx, const Txn& txn,
                                    const jute::ReconfigRequest& req, ApplyOutcome& out) {
  namespace err = jute::err;
  if (!options_.reconfig_enabled) {
    out.err = err::kReconfigDisabled;  // ZooKeeper's default: reconfigEnabled=false
    return;
  }
  if (!sessions_.contains(txn.session_id)) {
    out.err = err::kSessionExpired;
    return;
  }
  const std::string path = "/zookeeper/config";
  const std::vector<jute::Id> super{{"super", ""}};
  jute::Buffer data;
  jute::Stat stat;
  std::vector<PeerConfig> members;
  int64_t version = 0;
  if (tree_.get_data(path, super, data, stat) != err::kOk || data.bytes.empty() ||
      !parse_membership_text(data.bytes, members, &version)) {
    out.err = err::kUnimplemented;  // standalone: nothing to reconfigure
    return;
  }
  if (req.cur_config_id != -1 && req.cur_config_id != version) {
    out.err = err::kBadVersion;
    return;
  }
  auto upsert = [&](const PeerConfig& p) {
    std::erase_if(members, [&](const PeerConfig& m) { return m.id == p.id; });
    members.push_back(p);
  };
  if (!req.new_members.empty()) {
    // Non-incremental: the new members replace the old ones (commas or newlines between them).
    members.clear();
    std::string specs = req.new_members;
    std::replace(specs.begin(), specs.end(), '\n', ',');
    for (auto spec : java_split(specs, ',')) {
      PeerConfig p;
      if (!parse_server_spec(spec, p, nullptr)) {
        out.err = err::kBadArguments;
        return;
      }
      upsert(p);
    }
  } else {
    // Incremental: the leaving servers go first, then each joiner is added or replaced.
    for (auto id_text : java_split(req.leaving_servers, ',')) {
      int64_t id = 0;
      if (!java_parse_long(id_text, id)) {
        out.err = err::kMarshallingError;
        return;
      }
      std::erase_if(members, [&](const PeerConfig& m) { return m.id == id; });
    }
    for (auto joiner : java_split(req.joining_servers, ',')) {
      auto parts = java_split(joiner, '=');
      if (parts.size() != 2) {
        out.err = err::kBadArguments;  // "Wrong format of server string"
        return;
      }
      std::string_view id_text = parts[0].substr(parts[0].rfind('.') + 1);
      int64_t id = 0;
      if (!java_parse_long(id_text, id)) {
        out.err = err::kMarshallingError;
        return;
      }
      PeerConfig p;
      if (!parse_server_entry("server." + std::string(id_text), id_text, parts[1], p, nullptr) ||
          p.client_port == 0) {
        out.err = err::kBadArguments;  // a joiner names its three addresses
        return;
      }
      for (const auto& m : members) {
        if (m.id != p.id && addresses_collide(p, m)) {
          out.err = err::kBadArguments;
          return;
        }
      }
      upsert(p);
    }
  }
  std::sort(members.begin(), members.end(),
            [](const PeerConfig& a, const PeerConfig& b) { return a.id < b.id; });
  size_t voters = std::count_if(members.begin(), members.end(),
                                [](const PeerConfig& m) { return m.role == PeerRole::kParticipant; });
  if (voters < 2) {
    // standaloneEnabled (ZooKeeper's default, and zkraft's only mode): at least 2 followers.
    out.err = err::kBadArguments;
    return;
  }
  if (!txn.synced.empty()) {
    // Leader.isQuorumSynced: the synced servers among the new voters make a majority of them.
    size_t synced = std::count_if(members.begin(), members.end(), [&](const PeerConfig& m) {
      return m.role == PeerRole::kParticipant &&
             std::find(txn.synced.begin(), txn.synced.end(), static_cast<uint64_t>(m.id)) != txn.synced.end();
    });
    if (synced <= voters / 2) {
      out.err = err::kNewConfigNoQuorum;
      return;
    }
  }
  std::vector<jute::ACL> acl;
  if (tree_.get_acl(path, super, acl, stat) != err::kOk) {
    out.err = err::kSystemError;
    return;
  }
  if (!tree::acl_allows(acl, jute::perms::kWrite, txn.auth, tree_.schemes())) {
    out.err = err::kNoAuth;
    return;
  }
  std::string text = membership_text(members, ctx.zxid);
  tree::TxnContext as_super = ctx;
  as_super.auth = &super;
  jute::Buffer new_data{text, false};
  out.err = tree_.set_data(as_super, path, new_data, -1, stat, out.triggers);
  if (out.err == err::kOk) {
    if (want_reply_) out.reply = encode_body(jute::GetDataResponse{new_data, stat});
    out.membership_changed = true;
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
