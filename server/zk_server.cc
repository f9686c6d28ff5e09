#include "server/zk_server.h"

#include <spdlog/spdlog.h>

#include "jute/connect.h"
#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/frame.h"
#include "jute/headers.h"
#include "jute/opcodes.h"
#include "jute/reply.h"
#include "jute/responses.h"
#include "server/digest_auth.h"
#include "tree/acl.h"
#include "server/four_letter_words.h"
#include "server/membership_text.h"
#include "session/session_password.h"
#include "session/session_timeout.h"

namespace zkraft::server {

namespace asio = boost::asio;
namespace op = jute::op;
namespace err = jute::err;

namespace {

std::string framed(const jute::ReplyHeader& h, std::string_view body = {}) {
  jute::Writer w;
  size_t at = jute::begin_frame(w);
  jute::encode(w, h);
  w.write_raw(body);
  jute::end_frame(w, at);
  return w.take();
}

template <class T>
std::string body_of(const T& v) {
  jute::Writer w;
  jute::encode(w, v);
  return w.take();
}

}  // namespace

ZkServer::ZkServer(asio::io_context& io, Config config, std::unique_ptr<ReplicatedLog> log)
    : io_(io),
      config_(std::move(config)),
      log_(std::move(log)),
      acceptor_(io),
      tick_timer_(io),
      watches_(static_cast<size_t>(std::max(0, config_.max_watches_per_connection))),
      expiry_(config_.tick_time_ms),
      session_ids_(config_.server_id, std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count()),
      password_rng_(std::random_device{}()) {
  limits_.max_buffer = config_.max_buffer;
  started_ = std::chrono::steady_clock::now();
}

ZkServer::~ZkServer() { stop(); }

int64_t ZkServer::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool ZkServer::start() {
  // Replay what is durable: the tree and sessions as they were when the process stopped.
  ReplicatedLog::Callbacks cb;
  cb.apply = [this](uint64_t index, std::string_view data) { on_commit(index, data); };
  cb.take_snapshot = [this] { return sm_.serialize(); };
  cb.restore_snapshot = [this](uint64_t index, std::string_view data) {
    if (!sm_.restore(static_cast<int64_t>(index), data)) {
      spdlog::critical("snapshot at index {} does not parse; stopping", index);
      std::abort();
    }
  };
  if (!config_.standalone()) {
    sm_.mutable_tree().set_config_data(membership_text(bootstrap_servers(config_), 0));
  }
  cb.leader_changed = [this](uint64_t leader, bool self) { on_leader_changed(leader, self); };
  cb.read_ready = [this](uint64_t context, uint64_t index) { on_read_ready(context, index); };
  cb.message = [this](uint64_t from, std::string payload) { on_peer_message(from, std::move(payload)); };
  replaying_ = true;
  std::string error;
  if (!log_->start(std::move(cb), &error)) {
    spdlog::error("log: {}", error);
    return false;
  }
  replaying_ = false;
  if (!config_.standalone()) learn_peers();
  for (int64_t id : sm_.sessions().ids()) session_ids_.observe(id);
  // Sessions whose client is still out there get a full timeout to come back.
  expiry_.reset_from(sm_.sessions(), now_ms());
  spdlog::info("recovered: last zxid 0x{:x}, {} znodes, {} sessions", sm_.last_zxid(),
               sm_.tree().node_count(), sm_.sessions().size());

  boost::system::error_code ec;
  auto addr = asio::ip::make_address(config_.client_address, ec);
  if (ec) {
    spdlog::error("clientPortAddress {}: {}", config_.client_address, ec.message());
    return false;
  }
  asio::ip::tcp::endpoint ep(addr, static_cast<uint16_t>(config_.client_port));
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    spdlog::error("cannot listen on {}:{}: {}", config_.client_address, config_.client_port,
                  ec.message());
    return false;
  }
  port_ = acceptor_.local_endpoint().port();
  accept();
  tick();
  return true;
}

void ZkServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  tick_timer_.cancel();
  std::vector<std::shared_ptr<Connection>> conns;
  for (auto& [id, c] : clients_) conns.push_back(c.conn);
  for (auto& c : conns) c->close();
  log_->stop();
}

void ZkServer::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
    if (stopped_) return;
    if (!ec) {
      on_accept(std::move(socket));
    } else if (ec != asio::error::operation_aborted) {
      spdlog::warn("accept: {}", ec.message());
    }
    accept();
  });
}

void ZkServer::on_accept(asio::ip::tcp::socket socket) {
  ConnectionLimits limits;
  limits.max_frame = config_.max_buffer;
  auto conn = std::make_shared<Connection>(std::move(socket), next_connection_id_++, *this, limits);
  const std::string& ip = conn->remote_address();
  if (config_.max_client_cnxns > 0 && connections_per_ip_[ip] >= config_.max_client_cnxns) {
    ++stats_.connections_rejected;
    spdlog::warn("too many connections from {} (max {}); closing", ip, config_.max_client_cnxns);
    // Not registered yet: on_closed finds no client and has nothing to undo.
    conn->close();
    return;
  }
  ++connections_per_ip_[ip];
  Client& c = clients_[conn->id()];
  c.conn = conn;
  c.auth.push_back(jute::Id{"ip", ip});
  c.stats.established_ms = now_ms();
  conn->start();
}

void ZkServer::on_closed(const std::shared_ptr<Connection>& conn) {
  auto it = clients_.find(conn->id());
  if (it == clients_.end()) return;
  Client& c = it->second;
  outstanding_ -= c.queue.size();
  watches_.remove_watcher(conn->id());
  if (c.session_id != 0) {
    auto s = session_connection_.find(c.session_id);
    if (s != session_connection_.end() && s->second == conn->id()) session_connection_.erase(s);
  }
  auto ip = connections_per_ip_.find(conn->remote_address());
  if (ip != connections_per_ip_.end() && --ip->second <= 0) connections_per_ip_.erase(ip);
  clients_.erase(it);
}

void ZkServer::on_four_letter_word(const std::shared_ptr<Connection>& conn, std::string_view cmd) {
  std::string word(cmd);
  std::string answer;
  if (!is_whitelisted(word, config_)) {
    answer = not_whitelisted_text(word);
  } else {
    answer = render_status(word);
  }
  conn->send(std::move(answer));
  conn->close_after_flush();
}

void ZkServer::on_frame(const std::shared_ptr<Connection>& conn, std::string_view frame) {
  auto it = clients_.find(conn->id());
  if (it == clients_.end()) return;
  Client& c = it->second;
  ++stats_.packets_received;
  c.last_heard_ms = now_ms();
  if (!c.connect_seen) {
    handle_connect(c, frame);
  } else {
    handle_request(c, frame);
  }
}

std::string ZkServer::connect_response(const Client& c, int32_t timeout, int64_t session_id,
                                       const std::string& password) const {
  jute::ConnectResponse resp;
  resp.time_out = timeout;
  resp.session_id = session_id;
  resp.passwd = jute::Buffer{password, false};
  resp.has_read_only = !c.old_client;
  jute::Writer w;
  size_t at = jute::begin_frame(w);
  jute::encode(w, resp);
  jute::end_frame(w, at);
  return w.take();
}

void ZkServer::handle_connect(Client& c, std::string_view frame) {
  jute::ConnectRequest req;
  if (jute::decode_connect_request(frame, limits_, req) != err::kOk) {
    c.conn->close("malformed ConnectRequest");
    return;
  }
  c.connect_seen = true;
  c.old_client = !req.has_read_only;
  if (log_->leader() == 0) {
    c.conn->close("no leader yet: not serving");
    return;
  }
  if (req.last_zxid_seen > sm_.last_zxid()) {
    // The client has seen a newer state than ours: it must try another server.
    c.conn->close(fmt::format("client last zxid 0x{:x} is ahead of ours 0x{:x}",
                              req.last_zxid_seen, sm_.last_zxid()));
    return;
  }
  auto bounds = session::TimeoutBounds::from_config(
      config_.tick_time_ms, config_.min_session_timeout_ms, config_.max_session_timeout_ms);
  int32_t timeout = session::negotiate_timeout(req.time_out, bounds);

  Pending p;
  p.is_connect = true;
  p.received = std::chrono::steady_clock::now();
  if (req.session_id == 0) {
    int64_t id = session_ids_.next();
    while (sm_.sessions().contains(id)) id = session_ids_.next();
    Txn txn;
    txn.kind = TxnKind::kCreateSession;
    txn.session_id = id;
    txn.timeout_ms = timeout;
    txn.password = session::to_bytes(session::make_password(id, password_rng_()));
    c.session_id = id;
    c.timeout_ms = timeout;
    p.kind = Pending::Kind::kLogged;
    p.op = op::kCreateSession;
    propose(c, std::move(p), std::move(txn));
    return;
  }
  // Reattach: the session must exist, not be on its way out, and the password must match.
  const auto* info = sm_.sessions().find(req.session_id);
  bool valid = info && !closing_sessions_.count(req.session_id) &&
               sm_.sessions().password_matches(req.session_id, req.passwd.bytes);
  p.kind = Pending::Kind::kLogged;
  p.ready = true;
  if (!valid) {
    p.reply = connect_response(c, 0, 0, std::string(16, '\0'));
    p.close_after = true;
    c.queue.push_back(std::move(p));
    ++outstanding_;
    pump(c);
    return;
  }
  // Any older connection of this session is replaced by this one.
  auto old = session_connection_.find(req.session_id);
  if (old != session_connection_.end() && old->second != c.conn->id()) {
    auto oc = clients_.find(old->second);
    if (oc != clients_.end()) {
      oc->second.session_id = 0;
      oc->second.conn->close("session moved to a new connection");
    }
  }
  c.session_id = req.session_id;
  c.timeout_ms = timeout;
  session_connection_[c.session_id] = c.conn->id();
  expiry_.touch(c.session_id, timeout, now_ms());
  touched_.touch(c.session_id, timeout);
  p.reply = connect_response(c, timeout, c.session_id, req.passwd.bytes);
  c.queue.push_back(std::move(p));
  ++outstanding_;
  pump(c);
}

void ZkServer::handle_request(Client& c, std::string_view frame) {
  jute::DecodedRequest req;
  int32_t rc = jute::decode_request(frame, limits_, req);
  if (c.session_id != 0) {
    expiry_.touch(c.session_id, now_ms());
    touched_.touch(c.session_id, c.timeout_ms);
  }
  Pending p;
  p.xid = req.header.xid;
  p.op = req.header.type;
  p.received = std::chrono::steady_clock::now();
  if (rc == err::kUnimplemented) {
    // ZooKeeper answers an unknown op with Unimplemented, then drops the connection.
    spdlog::info("session 0x{:x}: unknown op {}; closing", c.session_id, req.header.type);
    p.ready = true;
    p.kind = Pending::Kind::kLogged;
    p.reply = framed(jute::ReplyHeader{p.xid, -1, err::kUnimplemented});
    p.close_after = true;
  } else if (rc != err::kOk && jute::op_is_logged(p.op) && p.op != op::kCloseSession &&
             frame.size() >= 8) {
    Txn txn;
    txn.kind = TxnKind::kRequest;
    txn.session_id = c.session_id;
    txn.xid = p.xid;
    txn.op = p.op;
    txn.auth = c.auth;
    txn.request = std::string(frame.substr(8));  // fails to decode at apply: kMarshallingError
    p.kind = Pending::Kind::kLogged;
    propose(c, std::move(p), std::move(txn));
    return;
  } else if (rc != err::kOk) {
    spdlog::info("session 0x{:x}: malformed {} request; closing", c.session_id,
                 jute::op_name(req.header.type));
    p.ready = true;
    p.kind = Pending::Kind::kLogged;
    p.reply = framed(jute::ReplyHeader{p.xid, sm_.last_zxid(), err::kMarshallingError});
    p.close_after = true;
  } else if (p.op == op::kAuth) {
    // Identities change at once, so every later request carries them.
    const auto& a = std::get<jute::AuthPacket>(req.body);
    p.kind = Pending::Kind::kLogged;
    p.ready = true;
    p.xid = jute::xid::kAuth;
    std::optional<std::string> id;
    if (a.scheme == "digest") id = digest_id(a.auth.bytes);
    if (id) {
      jute::Id ident{"digest", *id};
      if (std::find(c.auth.begin(), c.auth.end(), ident) == c.auth.end()) c.auth.push_back(ident);
      if (!config_.super_digest.empty() && *id == config_.super_digest) {
        c.auth.push_back(jute::Id{"super", ""});
      }
      p.reply = framed(jute::ReplyHeader{jute::xid::kAuth, 0, err::kOk});
    } else {
      ++stats_.auth_failed;
      spdlog::info("session 0x{:x}: auth failed (scheme {})", c.session_id, a.scheme);
      p.reply = framed(jute::ReplyHeader{jute::xid::kAuth, 0, err::kAuthFailed});
      p.close_after = true;
    }
  } else if (jute::op_is_logged(p.op)) {
    Txn txn;
    txn.session_id = c.session_id;
    txn.xid = p.xid;
    txn.op = p.op;
    if (p.op == op::kCloseSession) {
      txn.kind = TxnKind::kCloseSession;
      closing_sessions_.insert(c.session_id);
      p.close_after = true;
    } else {
      txn.kind = TxnKind::kRequest;
      txn.auth = c.auth;
      txn.request = std::string(frame.substr(8));  // the record after the RequestHeader
    }
    p.kind = Pending::Kind::kLogged;
    propose(c, std::move(p), std::move(txn));
    return;
  } else if (p.op == op::kSync) {
    // Linearizable: wait for a read point confirmed by a quorum, then for it to be applied here.
    uint64_t rid = next_request_id_++;
    p.kind = Pending::Kind::kLogged;
    p.request_id = rid;
    p.body = std::move(req.body);
    if (log_->read_index(rid)) {
      pending_requests_[rid] = c.conn->id();
    } else {
      p.ready = true;
      p.close_after = true;  // no leader: ConnectionLoss
    }
  } else {
    p.kind = Pending::Kind::kLocal;
    p.body = std::move(req.body);
  }
  c.queue.push_back(std::move(p));
  ++outstanding_;
  pump(c);
}

void ZkServer::propose(Client& c, Pending p, Txn txn) {
  uint64_t rid = next_request_id_++;
  txn.time_ms = now_ms();
  txn.origin_server = log_->self_id();
  txn.origin_request = rid;
  p.request_id = rid;
  if (!submit(encode_txn(txn))) {
    // No leader to take the write: the client sees ConnectionLoss and retries elsewhere.
    p.ready = true;
    p.reply.clear();
    p.close_after = true;
  } else {
    pending_requests_[rid] = c.conn->id();
  }
  c.queue.push_back(std::move(p));
  ++outstanding_;
  update_flow_control(c);
}

bool ZkServer::submit(std::string entry) {
  if (log_->is_leader()) return log_->propose(std::move(entry));
  uint64_t leader = log_->leader();
  if (leader == 0) return false;
  entry.insert(entry.begin(), kForwardedWrite);
  log_->send(leader, std::move(entry));
  return true;
}

void ZkServer::on_peer_message(uint64_t from, std::string payload) {
  if (payload.empty()) return;
  char tag = payload[0];
  if (tag == kForwardedWrite) {
    // Not the leader any more: drop it; the origin fails the request when it sees the change.
    if (log_->is_leader()) log_->propose(payload.substr(1));
  } else if (tag == kSessionsAlive) {
    jute::Reader r(std::string_view(payload).substr(1));
    int32_t n = 0;
    if (!r.read_count(n, 8)) return;
    int64_t now = now_ms();
    for (int32_t i = 0; i < n; ++i) {
      int64_t id;
      if (!r.read_long(id)) return;
      expiry_.touch(id, now);
    }
  }
}

void ZkServer::on_leader_changed(uint64_t leader, bool self) {
  spdlog::info("leader is now {}{}", leader, self ? " (this server)" : "");
  if (self) {
    // Liveness seen by the old leader is gone: every session gets a full timeout again.
    expiry_.reset_from(sm_.sessions(), now_ms());
    closing_sessions_.clear();
    reaping_.clear();
  }
  // Writes (and syncs) in flight may or may not commit: like ZooKeeper, their clients lose the
  // connection and learn the outcome by reading after they reconnect.
  std::vector<std::shared_ptr<Connection>> doomed;
  for (auto& [id, c] : clients_) {
    for (const auto& p : c.queue) {
      if (p.kind == Pending::Kind::kLogged && !p.ready) {
        doomed.push_back(c.conn);
        break;
      }
    }
  }
  for (auto& conn : doomed) conn->close("leader changed with requests in flight");
}

void ZkServer::on_read_ready(uint64_t context, uint64_t index) {
  if (static_cast<uint64_t>(sm_.last_zxid()) >= index) {
    complete_sync(context);
  } else {
    sync_waits_.emplace(index, context);
  }
}

void ZkServer::complete_sync(uint64_t request_id) {
  auto pr = pending_requests_.find(request_id);
  if (pr == pending_requests_.end()) return;
  uint64_t conn_id = pr->second;
  pending_requests_.erase(pr);
  auto cl = clients_.find(conn_id);
  if (cl == clients_.end()) return;
  Client& c = cl->second;
  for (auto& p : c.queue) {
    if (p.request_id != request_id) continue;
    p.ready = true;
    const auto& r = std::get<jute::SyncRequest>(p.body);
    p.reply = jute::reply_frame(jute::ReplyHeader{p.xid, sm_.last_zxid(), err::kOk},
                                jute::SyncResponse{r.path});
    break;
  }
  pump(c);
}

void ZkServer::pump(Client& c) {
  auto conn = c.conn;  // keep alive: closing may erase `c`
  while (!c.queue.empty() && !conn->closed()) {
    Pending& p = c.queue.front();
    std::string reply;
    if (p.kind == Pending::Kind::kLocal) {
      reply = execute_local(c, p);
    } else if (p.ready) {
      reply = std::move(p.reply);
    } else {
      break;
    }
    auto latency = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - p.received)
                       .count();
    if (!p.is_connect && p.op != op::kPing) {
      stats_.latency.record(latency);
      c.stats.latency.record(latency);
    }
    c.stats.last_op = p.is_connect ? op::kCreateSession : p.op;
    c.stats.last_cxid = p.xid;
    c.stats.last_zxid = sm_.last_zxid();
    c.stats.last_response_ms = now_ms();
    bool close = p.close_after;
    c.queue.pop_front();
    --outstanding_;
    ++stats_.packets_sent;
    if (!reply.empty()) conn->send(std::move(reply));
    if (close) {
      conn->close_after_flush();
      return;
    }
  }
  if (!conn->closed()) update_flow_control(c);
}

void ZkServer::update_flow_control(Client& c) {
  bool over = c.queue.size() >= static_cast<size_t>(config_.max_outstanding_per_connection) ||
              outstanding_ >= static_cast<size_t>(config_.global_outstanding_limit);
  if (over) {
    c.conn->pause_reading();
  } else {
    c.conn->resume_reading();
  }
}

std::string ZkServer::execute_local(Client& c, Pending& p) {
  const auto& tree = sm_.tree();
  const int64_t zxid = sm_.last_zxid();
  const uint64_t watcher = c.conn->id();
  jute::ReplyHeader h{p.xid, zxid, err::kOk};
  auto reply = [&](int32_t code, const auto& body) {
    h.err = code;
    return code == err::kOk ? jute::reply_frame(h, body) : framed(h);
  };
  auto error = [&](int32_t code) {
    h.err = code;
    return framed(h);
  };
  switch (p.op) {
    case op::kPing:
      return framed(jute::ReplyHeader{jute::xid::kPing, zxid, err::kOk});
    case op::kExists: {
      const auto& r = std::get<jute::ExistsRequest>(p.body);
      jute::Stat stat;
      int32_t rc = tree.exists(r.path, c.auth, stat);
      // An exists watch is set whether or not the node exists (not on an ACL failure).
      if (r.watch && (rc == err::kOk || rc == err::kNoNode)) watches_.add_data_watch(r.path, watcher);
      return reply(rc, jute::ExistsResponse{stat});
    }
    case op::kGetData: {
      const auto& r = std::get<jute::GetDataRequest>(p.body);
      jute::GetDataResponse resp;
      int32_t rc = tree.get_data(r.path, c.auth, resp.data, resp.stat);
      if (r.watch && rc == err::kOk) watches_.add_data_watch(r.path, watcher);
      return reply(rc, resp);
    }
    case op::kGetChildren: {
      const auto& r = std::get<jute::GetChildrenRequest>(p.body);
      jute::GetChildrenResponse resp;
      int32_t rc = tree.get_children(r.path, c.auth, resp.children, nullptr);
      if (r.watch && rc == err::kOk) watches_.add_child_watch(r.path, watcher);
      return reply(rc, resp);
    }
    case op::kGetChildren2: {
      const auto& r = std::get<jute::GetChildren2Request>(p.body);
      jute::GetChildren2Response resp;
      int32_t rc = tree.get_children(r.path, c.auth, resp.children, &resp.stat);
      if (r.watch && rc == err::kOk) watches_.add_child_watch(r.path, watcher);
      return reply(rc, resp);
    }
    case op::kGetACL: {
      const auto& r = std::get<jute::GetACLRequest>(p.body);
      jute::GetACLResponse resp;
      int32_t rc = tree.get_acl(r.path, c.auth, resp.acl, resp.stat);
      return reply(rc, resp);
    }
    case op::kGetAllChildrenNumber: {
      const auto& r = std::get<jute::GetAllChildrenNumberRequest>(p.body);
      jute::GetAllChildrenNumberResponse resp;
      int32_t rc = tree.get_all_children_number(r.path, c.auth, resp.total_number);
      return reply(rc, resp);
    }
    case op::kGetEphemerals: {
      const auto& r = std::get<jute::GetEphemeralsRequest>(p.body);
      jute::GetEphemeralsResponse resp;
      resp.ephemerals = tree.ephemerals_of(c.session_id, r.prefix_path);
      return reply(err::kOk, resp);
    }
    case op::kMultiRead: {
      const auto& r = std::get<jute::MultiRequest>(p.body);
      if (!r.is_read_only()) return error(err::kMarshallingError);
      jute::MultiResponse resp;
      for (const auto& o : r.ops) {
        jute::MultiResult mr;
        if (auto* g = std::get_if<jute::GetDataRequest>(&o.body)) {
          jute::GetDataResponse d;
          int32_t rc = tree.get_data(g->path, c.auth, d.data, d.stat);
          if (rc != err::kOk) {
            mr = jute::MultiResult::error(rc);
          } else {
            mr.type = op::kGetData, mr.body = std::move(d);
          }
        } else if (auto* gc = std::get_if<jute::GetChildrenRequest>(&o.body)) {
          jute::GetChildrenResponse ch;
          int32_t rc = tree.get_children(gc->path, c.auth, ch.children, nullptr);
          if (rc != err::kOk) {
            mr = jute::MultiResult::error(rc);
          } else {
            mr.type = op::kGetChildren, mr.body = std::move(ch);
          }
        }
        resp.results.push_back(std::move(mr));
      }
      return reply(err::kOk, resp);
    }
    case op::kSetWatches:
    case op::kSetWatches2:
      return execute_set_watches(c, p.xid, p.op, p.body);
    case op::kAddWatch: {
      const auto& r = std::get<jute::AddWatchRequest>(p.body);
      if (r.mode != jute::add_watch_mode::kPersistent &&
          r.mode != jute::add_watch_mode::kPersistentRecursive) {
        return error(err::kBadArguments);
      }
      watches_.add_persistent_watch(r.path, watcher, static_cast<session::AddWatchMode>(r.mode));
      return reply(err::kOk, jute::ErrorResponse{0});
    }
    case op::kCheckWatches: {
      const auto& r = std::get<jute::CheckWatchesRequest>(p.body);
      return error(watches_.check(r.path, r.type, watcher));
    }
    case op::kRemoveWatches: {
      const auto& r = std::get<jute::RemoveWatchesRequest>(p.body);
      return error(watches_.remove(r.path, r.type, watcher));
    }
    case op::kWhoAmI: {
      jute::WhoAmIResponse resp;
      for (const auto& id : c.auth) {
        // ZooKeeper's digest provider reports the user name only.
        std::string user = id.scheme == "digest" ? id.id.substr(0, id.id.find(':')) : id.id;
        resp.client_info.push_back(jute::ClientInfo{id.scheme, std::move(user)});
      }
      return reply(err::kOk, resp);
    }
    case op::kSasl:
      // No SASL provider is configured; ZooKeeper without one fails the exchange the same way.
      h.err = err::kAuthFailed;
      p.close_after = true;
      return framed(h);
    default:
      return error(err::kUnimplemented);
  }
}

std::string ZkServer::execute_set_watches(Client& c, int32_t xid, int32_t o,
                                         const jute::RequestBody& body) {
  const auto& tree = sm_.tree();
  const uint64_t watcher = c.conn->id();
  int64_t rel = 0;
  const std::vector<std::string>*data = nullptr, *exist = nullptr, *child = nullptr,
  *persistent = nullptr, *recursive = nullptr;
  if (o == op::kSetWatches) {
    const auto& r = std::get<jute::SetWatches>(body);
    rel = r.relative_zxid, data = &r.data_watches, exist = &r.exist_watches,
    child = &r.child_watches;
  } else {
    const auto& r = std::get<jute::SetWatches2>(body);
    rel = r.relative_zxid, data = &r.data_watches, exist = &r.exist_watches,
    child = &r.child_watches, persistent = &r.persistent_watches,
    recursive = &r.persistent_recursive_watches;
  }
  // Changes the client missed while away fire now, before the SetWatches reply.
  const int64_t zxid = sm_.last_zxid();
  jute::Stat stat;
  for (const auto& path : *data) {
    if (!tree.stat_of(path, stat)) {
      send_event(c, jute::event::kNodeDeleted, path, zxid);
    } else if (stat.mzxid > rel) {
      send_event(c, jute::event::kNodeDataChanged, path, zxid);
    } else {
      watches_.add_data_watch(path, watcher);
    }
  }
  for (const auto& path : *exist) {
    if (tree.stat_of(path, stat)) {
      send_event(c, jute::event::kNodeCreated, path, zxid);
    } else {
      watches_.add_data_watch(path, watcher);
    }
  }
  for (const auto& path : *child) {
    if (!tree.stat_of(path, stat)) {
      send_event(c, jute::event::kNodeDeleted, path, zxid);
    } else if (stat.pzxid > rel) {
      send_event(c, jute::event::kNodeChildrenChanged, path, zxid);
    } else {
      watches_.add_child_watch(path, watcher);
    }
  }
  if (persistent) {
    for (const auto& path : *persistent) {
      watches_.add_persistent_watch(path, watcher, session::AddWatchMode::kPersistent);
    }
    for (const auto& path : *recursive) {
      watches_.add_persistent_watch(path, watcher, session::AddWatchMode::kPersistentRecursive);
    }
  }
  return framed(jute::ReplyHeader{xid, zxid, err::kOk});
}

void ZkServer::send_event(Client& c, int32_t type, const std::string& path, int64_t zxid) {
  // 3.9 puts the triggering txn's zxid in the header of a notification.
  c.conn->send(jute::reply_frame(jute::ReplyHeader{jute::xid::kNotification, zxid, err::kOk},
                                 jute::WatcherEvent{type, jute::keeper_state::kSyncConnected, path}));
  ++stats_.packets_sent;
}

void ZkServer::deliver(const std::vector<tree::WatchTrigger>& triggers, int64_t zxid) {
  if (triggers.empty() || watches_.empty()) return;
  std::vector<session::Delivery> out;
  for (const auto& t : triggers) watches_.trigger(t, out);
  for (const auto& d : out) {
    auto it = clients_.find(d.watcher);
    if (it == clients_.end() || it->second.conn->closed()) continue;
    // Since 3.8.4/3.9.2 a watcher only hears of nodes it may read (CVE-2024-23944).
    if (d.acl && !tree::acl_allows(*d.acl, jute::perms::kRead, it->second.auth,
                                   sm_.tree().schemes())) {
      continue;
    }
    send_event(it->second, static_cast<int32_t>(d.type), d.path, zxid);
  }
}

void ZkServer::on_commit(uint64_t index, std::string_view data) {
  std::optional<Txn> txn;
  if (!data.empty()) txn = decode_txn(data);
  if (!txn) {
    if (!data.empty()) spdlog::error("log entry {} is not a transaction; skipped", index);
    sm_.skip(static_cast<int64_t>(index));
    release_syncs();
    return;
  }
  ApplyOutcome out = sm_.apply(static_cast<int64_t>(index), *txn);
  if (replaying_) return;  // start-up replay: no clients yet
  release_syncs();
  // Events first: a client must see the event before any reply that shows the change.
  deliver(out.triggers, out.zxid);

  if (txn->kind == TxnKind::kCloseSession || txn->kind == TxnKind::kCreateSession) {
    if (txn->kind == TxnKind::kCloseSession) {
      closing_sessions_.erase(txn->session_id);
      touched_.forget(txn->session_id);
      expiry_.remove(txn->session_id);
      // A session that expired (or was closed elsewhere) loses its connection here.
      auto sc = session_connection_.find(txn->session_id);
      if (sc != session_connection_.end()) {
        auto cl = clients_.find(sc->second);
        bool is_origin = txn->origin_server == log_->self_id() &&
                         pending_requests_.count(txn->origin_request);
        if (cl != clients_.end() && !is_origin) {
          cl->second.conn->close(fmt::format("session 0x{:x} {}", txn->session_id,
                                             txn->expired ? "expired" : "closed"));
        }
      }
      if (txn->expired) {
        spdlog::info("session 0x{:x} expired", txn->session_id);
      }
    } else if (out.session_created) {
      expiry_.touch(txn->session_id, txn->timeout_ms, now_ms());
    }
  }
  if (txn->kind == TxnKind::kReapNode) reaping_.erase(txn->path);
  if (out.membership_changed) learn_peers();

  if (txn->origin_server != log_->self_id() || txn->origin_request == 0) {
    return;
  }
  auto pr = pending_requests_.find(txn->origin_request);
  if (pr == pending_requests_.end()) return;
  uint64_t conn_id = pr->second;
  pending_requests_.erase(pr);
  auto cl = clients_.find(conn_id);
  if (cl == clients_.end()) return;  // the client went away; the change stands
  Client& c = cl->second;
  for (auto& p : c.queue) {
    if (p.request_id != txn->origin_request) continue;
    p.ready = true;
    if (txn->kind == TxnKind::kCreateSession) {
      if (out.err == err::kOk) {
        session_connection_[txn->session_id] = conn_id;
        p.reply = connect_response(c, txn->timeout_ms, txn->session_id, txn->password);
      } else {
        p.reply = connect_response(c, 0, 0, std::string(16, '\0'));
        p.close_after = true;
      }
    } else if (txn->kind == TxnKind::kCloseSession) {
      p.reply = framed(jute::ReplyHeader{p.xid, out.zxid, err::kOk});
      c.session_id = 0;
      session_connection_.erase(txn->session_id);
    } else {
      p.reply = framed(jute::ReplyHeader{p.xid, out.zxid, out.err}, out.err == err::kOk
                                                                         ? std::string_view(out.reply)
                                                                         : std::string_view());
      if (out.err == err::kSessionExpired) p.close_after = true;
    }
    break;
  }
  pump(c);
}

void ZkServer::release_syncs() {
  while (!sync_waits_.empty() &&
         sync_waits_.begin()->first <= static_cast<uint64_t>(sm_.last_zxid())) {
    uint64_t rid = sync_waits_.begin()->second;
    sync_waits_.erase(sync_waits_.begin());
    complete_sync(rid);
  }
}

// Every server learns the addresses of the members /zookeeper/config names, so that whoever
// leads can reach them.
void ZkServer::learn_peers() {
  jute::Stat stat;
  jute::Buffer data;
  const std::vector<jute::Id> super{{"super", ""}};
  if (sm_.tree().get_data("/zookeeper/config", super, data, stat) != err::kOk) return;
  std::vector<PeerConfig> members;
  if (!parse_membership_text(data.bytes, members, nullptr)) return;
  for (const auto& m : members) {
    log_->add_peer(static_cast<uint64_t>(m.id), m.host, static_cast<uint16_t>(m.peer_port));
  }
}

// The leader makes Raft's membership follow /zookeeper/config, one change at a time: new
// servers join as learners and are promoted once added; servers no longer named are removed.
void ZkServer::reconcile_membership() {
  jute::Stat stat;
  jute::Buffer data;
  const std::vector<jute::Id> super{{"super", ""}};
  if (sm_.tree().get_data("/zookeeper/config", super, data, stat) != err::kOk) return;
  if (stat.version < 0) return;  // never reconfigured: the bootstrap membership stands
  std::vector<PeerConfig> desired;
  if (!parse_membership_text(data.bytes, desired, nullptr) || desired.empty()) return;
  auto actual = log_->membership();
  auto has = [](const std::vector<uint64_t>& v, uint64_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  for (const auto& m : desired) {
    auto id = static_cast<uint64_t>(m.id);
    if (!has(actual.voters, id) && !has(actual.learners, id)) {
      log_->add_peer(id, m.host, static_cast<uint16_t>(m.peer_port));
      log_->change_membership(MembershipChange::kAddLearner, id);
      return;
    }
    if (m.role == PeerRole::kParticipant && has(actual.learners, id)) {
      log_->change_membership(MembershipChange::kPromote, id);
      return;
    }
  }
  auto wanted = [&](uint64_t id) {
    return std::any_of(desired.begin(), desired.end(),
                       [&](const PeerConfig& m) { return static_cast<uint64_t>(m.id) == id; });
  };
  // Others first: a leader that removes itself steps down once that change commits.
  for (const auto* list : {&actual.learners, &actual.voters}) {
    for (uint64_t id : *list) {
      if (!wanted(id) && id != log_->self_id()) {
        log_->change_membership(MembershipChange::kRemove, id);
        return;
      }
    }
  }
  if (!wanted(log_->self_id()) && has(actual.voters, log_->self_id())) {
    log_->change_membership(MembershipChange::kRemove, log_->self_id());
  }
}

void ZkServer::tick() {
  if (stopped_) return;
  int64_t now = now_ms();
  // A client silent for longer than its session timeout is gone (ZooKeeper closes it too); the
  // session itself lives on until the leader expires it.
  std::vector<std::shared_ptr<Connection>> idle;
  for (auto& [id, c] : clients_) {
    if (c.session_id != 0 && c.timeout_ms > 0 && now - c.last_heard_ms > c.timeout_ms) {
      idle.push_back(c.conn);
    }
  }
  for (auto& conn : idle) conn->close("client silent for longer than its session timeout");
  if (log_->is_leader()) {
    if (!config_.standalone()) reconcile_membership();
    for (int64_t id : expiry_.expired(now)) {
      if (closing_sessions_.count(id) || !sm_.sessions().contains(id)) continue;
      closing_sessions_.insert(id);
      Txn txn;
      txn.kind = TxnKind::kCloseSession;
      txn.session_id = id;
      txn.expired = true;
      txn.time_ms = now;
      txn.origin_server = log_->self_id();
      if (!log_->propose(encode_txn(txn))) closing_sessions_.erase(id);
    }
    if (now - last_reap_ms_ >= container_check_interval_ms_) {
      last_reap_ms_ = now;
      for (auto& path : sm_.tree().reap_candidates(now, 10000)) {
        if (!reaping_.insert(path).second) continue;
        Txn txn;
        txn.kind = TxnKind::kReapNode;
        txn.path = path;
        txn.time_ms = now;
        txn.origin_server = log_->self_id();
        log_->propose(encode_txn(txn));
      }
    }
  } else if (log_->leader() != 0) {
    // The leader decides expiry; tell it which of our sessions showed signs of life.
    auto alive = touched_.drain();
    if (!alive.empty()) {
      jute::Writer w;
      w.write_raw(std::string_view(&kSessionsAlive, 1));
      w.write_count(static_cast<int32_t>(alive.size()));
      for (const auto& [id, timeout] : alive) w.write_long(id);
      log_->send(log_->leader(), w.take());
    }
  } else {
    // No leader: nobody decides expiry now; the next leader restarts every clock.
    expiry_.reset_from(sm_.sessions(), now);
  }
  // Expiry is decided in tick-sized buckets; checking twice a tick keeps the lag under a tick.
  tick_timer_.expires_after(std::chrono::milliseconds(std::max(10, config_.tick_time_ms / 2)));
  tick_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

ServerStatus ZkServer::status() const {
  ServerStatus st;
  st.version = full_version();
  auto repl = log_->replication_status();
  st.mode = repl.mode;
  // Like ZooKeeper, a server that has no leader is not serving (4lw say so, clients are refused).
  st.serving = log_->leader() != 0;
  st.min_latency_ms = stats_.latency.min();
  st.avg_latency_ms = stats_.latency.avg();
  st.max_latency_ms = stats_.latency.max_ms;
  st.packets_received = static_cast<int64_t>(stats_.packets_received);
  st.packets_sent = static_cast<int64_t>(stats_.packets_sent);
  st.num_alive_connections = static_cast<int64_t>(clients_.size());
  st.outstanding_requests = static_cast<int64_t>(outstanding_);
  st.last_zxid = sm_.last_zxid();
  st.node_count = static_cast<int64_t>(sm_.tree().node_count());
  for (const auto& [id, c] : clients_) {
    ConnectionStatus cs;
    cs.remote = "/" + c.conn->remote_address() + ":" + std::to_string(c.conn->remote_port());
    cs.queued = static_cast<int64_t>(c.queue.size());
    cs.received = static_cast<int64_t>(c.conn->packets_received());
    cs.sent = static_cast<int64_t>(c.conn->packets_sent());
    cs.session_id = c.session_id;
    if (c.session_id != 0) {
      cs.last_op = c.stats.last_op == -99 ? "NA" : jute::op_lop_name(c.stats.last_op);
      if (c.stats.last_op == op::kCreateSession) cs.last_op = "SESS";
      cs.established_ms = c.stats.established_ms;
      cs.timeout_ms = c.timeout_ms;
      cs.last_cxid = c.stats.last_cxid;
      cs.last_zxid = c.stats.last_zxid;
      cs.last_response_ms = c.stats.last_response_ms;
      cs.last_latency_ms = c.stats.latency.last_ms;
      cs.min_latency_ms = c.stats.latency.min();
      cs.avg_latency_ms = static_cast<int64_t>(c.stats.latency.avg());
      cs.max_latency_ms = c.stats.latency.max_ms;
    }
    st.connections.push_back(std::move(cs));
  }
  auto summary = watches_.summary();
  st.watch_connections = static_cast<int64_t>(summary.connections);
  st.watch_paths = static_cast<int64_t>(summary.paths);
  st.watch_total = static_cast<int64_t>(summary.total);
  st.watch_count = static_cast<int64_t>(watches_.watch_count());
  auto session_of = [this](uint64_t conn_id) -> int64_t {
    auto it = clients_.find(conn_id);
    return it == clients_.end() ? 0 : it->second.session_id;
  };
  for (auto& [watcher, paths] : watches_.dump_by_watcher()) {
    st.watches_by_session.emplace_back(session_of(watcher), std::move(paths));
  }
  for (auto& [path, watchers] : watches_.dump_by_path()) {
    std::vector<int64_t> ids;
    for (auto w : watchers) ids.push_back(session_of(w));
    st.watches_by_path.emplace_back(std::move(path), std::move(ids));
  }
  st.ephemerals_count = static_cast<int64_t>(sm_.tree().ephemeral_count());
  st.approximate_data_size = sm_.tree().approximate_data_size();
  for (int64_t id : sm_.sessions().ids()) {
    auto eph = sm_.tree().ephemerals_of(id, "/");
    if (!eph.empty()) st.ephemerals_by_session.emplace_back(id, std::move(eph));
  }
  st.global_sessions = static_cast<int64_t>(sm_.sessions().size());
  st.tracked_sessions = static_cast<int64_t>(expiry_.size());
  for (const auto& b : expiry_.buckets()) {
    st.session_buckets.push_back(SessionExpiryBucket{b.deadline_ms, b.ids});
  }
  st.uptime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - started_)
                     .count();
  auto [open_fds, max_fds] = file_descriptor_counts();
  st.open_file_descriptor_count = open_fds;
  st.max_file_descriptor_count = max_fds;
  st.auth_failed_count = static_cast<int64_t>(stats_.auth_failed);
  st.extra_metrics.emplace_back("fsync_count", std::to_string(log_->fsync_count()));
  if (repl.mode == "leader") {
    st.extra_metrics.emplace_back("learners", std::to_string(repl.learners));
    st.extra_metrics.emplace_back("followers", std::to_string(repl.learners));
    st.extra_metrics.emplace_back("synced_followers", std::to_string(repl.synced_followers));
    st.extra_metrics.emplace_back("synced_non_voting_followers",
                                  std::to_string(repl.synced_observers));
    st.extra_metrics.emplace_back("synced_observers", std::to_string(repl.synced_observers));
    st.extra_metrics.emplace_back("pending_syncs", std::to_string(sync_waits_.size()));
    st.extra_metrics.emplace_back("quorum_size", std::to_string(repl.quorum_size));
  }
  st.environment = current_environment();
  return st;
}

std::string ZkServer::render_status(std::string_view cmd) {
  if (cmd == "crst") {
    for (auto& [id, c] : clients_) {
      c.stats.latency.reset();
      c.conn->reset_counters();
    }
  } else if (cmd == "srst") {
    stats_.latency.reset();
    stats_.packets_received = stats_.packets_sent = 0;
  }
  return render_four_letter_word(cmd, status(), config_);
}

}  // namespace zkraft::server
