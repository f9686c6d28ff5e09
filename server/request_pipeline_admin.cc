// RequestPipeline, what the HTTP AdminServer asks of it: the status (after a statistics reset
// when the command is one), on the state thread. The AdminServer never calls this directly: it
// posts to the state thread and waits (admin_server.h).
#include "server/request_pipeline.h"

#include <spdlog/spdlog.h>

#include "jute/errors.h"
#include "server/prometheus_metrics.h"
#include "tree/acl.h"

namespace zkraft::server {

namespace err = jute::err;

namespace {
// A follower reports its figures this often; the leader shows a report this old at most (older
// ones are from a member that went quiet, or from before a leader change).
constexpr int64_t kFiguresReportMs = 500;
constexpr int64_t kFiguresFreshMs = 5000;
}  // namespace

ServerStatus RequestPipeline::admin_status(StatsReset reset, bool lists) {
  // The same resets as the 4lw crst/srst (render_status).
  if (reset == StatsReset::kConnections) {
    clients_.for_each([](Client& c) {
      c.stats.latency.reset();
      c.packets_received = c.packets_sent = 0;
    });
  } else if (reset == StatsReset::kServer) {
    stats_.latency.reset();
    stats_.packets_received = stats_.packets_sent = 0;
  }
  ServerStatus st = status(lists);
  st.server_id = static_cast<int64_t>(log_.self_id());
  st.leader_id = static_cast<int64_t>(log_.leader());
  MembershipView m = log_.membership();
  st.voters = std::move(m.voters);
  st.learners = std::move(m.learners);
  const int64_t now = clock_.monotonic_ms();
  for (auto& p : st.peers) {
    auto it = member_figures_.find(p.id);
    if (it == member_figures_.end() || now - it->second.at_ms > kFiguresFreshMs) continue;
    p.reported = true;
    p.term = it->second.figures.term;
    p.commit_index = it->second.figures.commit_index;
    p.applied_index = it->second.figures.applied_index;
    p.reported_ms_ago = now - it->second.at_ms;
  }
  return st;
}

MetricsStatus RequestPipeline::metrics_status() const {
  MetricsStatus m;
  m.server = status();
  m.replication = log_.replication_status();
  m.consensus = log_.consensus_figures();
  m.pending_syncs = static_cast<int64_t>(writes_.pending_syncs());
  m.connections_rejected = stats_.connections_rejected;
  m.read_latency_ms = stats_.read_latency_ms;
  m.update_latency_ms = stats_.update_latency_ms;
  return m;
}

bool RequestPipeline::admin_allowed(const std::vector<jute::Id>& ids, int32_t perm,
                                    std::string_view path) const {
  std::vector<jute::ACL> acl;
  jute::Stat stat;
  // Read as super: the ACL itself, unmasked; whether the caller may use it is checked below.
  if (sm_.tree().get_acl(path, {jute::Id{"super", ""}}, acl, stat) != err::kOk) return false;
  for (int32_t bit = 1; bit <= perm; bit <<= 1) {
    if ((perm & bit) != 0 && !tree::acl_allows(acl, bit, ids, sm_.tree().schemes())) return false;
  }
  return true;
}

std::string RequestPipeline::admin_snapshot(int64_t* last_zxid) const {
  if (last_zxid != nullptr) *last_zxid = sm_.last_zxid();
  return sm_.serialize();
}

void RequestPipeline::admin_restore(std::string state, RestoreDone done) {
  if (!log_.is_leader()) {
    const uint64_t leader = log_.leader();
    done(0, leader == 0 ? std::string("no leader: a restore goes through the log and needs a quorum")
                        : "a restore replaces the whole ensemble's state through the log: send it "
                          "to the leader (server " + std::to_string(leader) + ")");
    return;
  }
  Txn t;
  t.kind = TxnKind::kRestore;
  t.xid = ++next_restore_;
  t.origin_server = log_.self_id();
  t.time_ms = clock_.wall_ms();
  t.request = std::move(state);
  restores_.emplace(t.xid, std::move(done));
  log_.propose(encode_txn(t));
}

void RequestPipeline::restored(const Txn& txn, const ApplyOutcome& out) {
  if (out.state_replaced) {
    spdlog::warn("admin restore applied at zxid 0x{:x}: {} znodes, {} sessions now; closing every "
                 "client connection of this server", out.zxid, sm_.tree().node_count(),
                 sm_.sessions().size());
    std::vector<uint64_t> conns;
    clients_.for_each([&](Client& c) { conns.push_back(c.conn); });
    for (uint64_t conn : conns) {
      if (Client* c = clients_.find(conn)) drop_client(*c, "the state was restored");
    }
    // The restored sessions get a full timeout from now, as at start-up.
    duties_.reset(clock_.monotonic_ms());
  }
  if (txn.origin_server != log_.self_id()) return;
  auto it = restores_.find(txn.xid);
  if (it == restores_.end()) return;
  RestoreDone done = std::move(it->second);
  restores_.erase(it);
  done(out.zxid, out.state_replaced ? "" : "the restored state did not parse");
}

void RequestPipeline::report_member_figures(int64_t now_ms) {
  const uint64_t leader = log_.leader();
  if (leader == 0 || log_.is_leader() || config_.standalone()) return;
  if (figures_sent_ms_ >= 0 && now_ms - figures_sent_ms_ < kFiguresReportMs) return;
  figures_sent_ms_ = now_ms;
  const ReplicationStatus r = log_.replication_status();
  log_.send(leader, encode_peer_message(MemberFigures{r.term, r.commit_index, r.applied_index}));
}

void RequestPipeline::member_figures_reported(uint64_t from, const MemberFigures& figures) {
  if (!log_.is_leader()) return;  // sent to an old leader: nobody shows it
  member_figures_[from] = ReportedFigures{figures, clock_.monotonic_ms()};
}

void RequestPipeline::fail_restores(const std::string& why) {
  auto pending = std::move(restores_);
  restores_.clear();
  for (auto& [xid, done] : pending) done(0, why);
}

}  // namespace zkraft::server
