// RequestPipeline, ingress and lifecycle: construction and start, connections opened, closed
// and written, four-letter words, dropping a client, and the periodic tick (idle connections,
// leader duties). What a connection's requests become: request_pipeline_requests.cc; its queue
// and flow control: request_pipeline_queue.cc; commits: request_pipeline_log.cc; status:
// request_pipeline_status.cc.
#include "server/request_pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "server/four_letter_words.h"
#include "server/membership_text.h"
#include "server/tls_options.h"
#include "server/trace_mask.h"

namespace zkraft::server {

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

// How large the tree's change record may grow between snapshots (ZnodeTree::track_changes;
// past it, the next snapshot is written whole): it bounds the record's memory. Its count is the
// links plus a record's fixed bytes (76) per changed znode, more than the ~40 bytes a znode
// takes in its set: 100,000 creates count ~12 MB and make a delta of ~24 MB (the znodes' paths
// and data). Since a delta is written in steps, its own size needs no bound.
constexpr uint64_t kMaxChangeRecordBytes = 32u << 20;
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
                              extra_auth_schemes(config),
                              config.snapshot_appends && !config.snapshot_in_child_process, kMaxChangeRecordBytes}),
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
