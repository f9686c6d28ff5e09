#include "server/leader_duties.h"

#include <algorithm>

#include "jute/errors.h"
#include "server/membership_text.h"
#include "server/peer_message.h"

namespace zkraft::server {

std::optional<ConfiguredMembership> configured_membership(const ZkStateMachine& sm) {
  jute::Stat stat;
  jute::Buffer data;
  const std::vector<jute::Id> super{{"super", ""}};
  if (sm.tree().get_data("/zookeeper/config", super, data, stat) != jute::err::kOk) {
    return std::nullopt;
  }
  ConfiguredMembership m;
  m.znode_version = stat.version;
  if (!parse_membership_text(data.bytes, m.servers, nullptr)) return std::nullopt;
  return m;
}

LeaderDuties::LeaderDuties(const DutyOptions& options, const ZkStateMachine& sm,
                           ReplicatedLog& log, WriteRouter& router)
    : options_(options), sm_(sm), log_(log), router_(router), expiry_(options.tick_time_ms) {}

void LeaderDuties::reset(int64_t now_ms) { expiry_.reset_from(sm_.sessions(), now_ms); }

void LeaderDuties::session_attached(int64_t id, int32_t timeout_ms, int64_t now_ms) {
  expiry_.touch(id, timeout_ms, now_ms);
  touched_.touch(id, timeout_ms);
}

void LeaderDuties::session_heard(int64_t id, int32_t timeout_ms, int64_t now_ms) {
  expiry_.touch(id, now_ms);
  touched_.touch(id, timeout_ms);
}

void LeaderDuties::sessions_alive(const std::vector<int64_t>& ids, int64_t now_ms) {
  for (int64_t id : ids) expiry_.touch(id, now_ms);
}

void LeaderDuties::session_closed(int64_t id) {
  closing_.erase(id);
  touched_.forget(id);
  expiry_.remove(id);
}

void LeaderDuties::session_created(int64_t id, int32_t timeout_ms, int64_t now_ms) {
  expiry_.touch(id, timeout_ms, now_ms);
}

void LeaderDuties::leader_changed(bool self, int64_t now_ms) {
  // A close proposed before the change may never commit: a session must not stay "closing" (and
  // refuse its client's reattach) on the strength of it. One that does commit still ends it.
  closing_.clear();
  // Removals found but not proposed belong to this term's leadership; the next check finds them.
  for (const auto& path : reap_queue_) reaping_.erase(path);
  reap_queue_.clear();
  reap_credit_ = 0;
  if (!self) return;
  // Liveness seen by the old leader is gone: every session gets a full timeout again.
  expiry_.reset_from(sm_.sessions(), now_ms);
  closing_.clear();
  reaping_.clear();
  // ZooKeeper's new leader starts a ContainerManager whose first check is one interval away: a
  // container emptied just before the election is not removed the moment a leader appears.
  last_reap_ms_ = now_ms;
}

void LeaderDuties::tick(int64_t monotonic_ms, int64_t wall_ms) {
  if (log_.is_leader()) {
    if (!options_.standalone) reconcile_membership();
    expire_sessions(monotonic_ms);
    if (!last_reap_ms_ || monotonic_ms - *last_reap_ms_ >= options_.container_check_interval_ms) {
      find_reap_candidates(monotonic_ms, wall_ms);
      last_reap_ms_ = monotonic_ms;
    }
    propose_reaps(monotonic_ms);
  } else if (log_.leader() != 0) {
    // The leader decides expiry; tell it which of our sessions showed signs of life.
    auto alive = touched_.drain();
    if (!alive.empty()) {
      SessionsAlive report;
      report.session_ids.reserve(alive.size());
      for (const auto& [id, timeout] : alive) report.session_ids.push_back(id);
      log_.send(log_.leader(), encode_peer_message(report));
    }
  } else {
    // No leader: nobody decides expiry now; the next leader restarts every clock.
    expiry_.reset_from(sm_.sessions(), monotonic_ms);
  }
}

void LeaderDuties::expire_sessions(int64_t now_ms) {
  for (int64_t id : expiry_.expired(now_ms)) {
    if (closing_.count(id) || !sm_.sessions().contains(id)) continue;
    Txn txn;
    txn.kind = TxnKind::kCloseSession;
    txn.session_id = id;
    txn.expired = true;
    if (router_.propose_own(std::move(txn))) closing_.insert(id);
  }
}

namespace {
constexpr int64_t kReapCost = 60000;  // credit units per removal: ms per minute
}  // namespace

void LeaderDuties::find_reap_candidates(int64_t monotonic_ms, int64_t wall_ms) {
  for (auto& path : sm_.tree().reap_candidates(wall_ms, SIZE_MAX, options_.container_max_never_used_ms)) {
    if (!reaping_.insert(path).second) continue;
    if (reap_queue_.empty()) {
      // ContainerManager deletes its first candidate at once and sleeps after each one.
      reap_credit_ = kReapCost;
      reap_credit_ms_ = monotonic_ms;
    }
    reap_queue_.push_back(std::move(path));
  }
}

void LeaderDuties::propose_reaps(int64_t monotonic_ms) {
  if (reap_queue_.empty()) return;
  const int64_t per_minute = std::max<int64_t>(1, options_.container_max_per_minute);
  const int64_t cap = kReapCost * static_cast<int64_t>(reap_queue_.size());
  const int64_t elapsed = std::max<int64_t>(0, monotonic_ms - reap_credit_ms_);
  // Capped before it could overflow: more credit than the queue needs buys nothing.
  reap_credit_ = elapsed >= cap / per_minute + 1 ? cap : std::min(cap, reap_credit_ + elapsed * per_minute);
  reap_credit_ms_ = monotonic_ms;
  while (!reap_queue_.empty() && reap_credit_ >= kReapCost) {
    Txn txn;
    txn.kind = TxnKind::kReapNode;
    txn.path = std::move(reap_queue_.front());
    reap_queue_.pop_front();
    reap_credit_ -= kReapCost;
    const std::string path = txn.path;
    if (!router_.propose_own(std::move(txn))) reaping_.erase(path);  // found again next check
  }
  if (reap_queue_.empty()) reap_credit_ = 0;
}

void LeaderDuties::learn_peers() {
  auto m = configured_membership(sm_);
  if (!m) return;
  for (const auto& s : m->servers) {
    log_.add_peer(static_cast<uint64_t>(s.id), s.host, static_cast<uint16_t>(s.peer_port));
  }
}

void LeaderDuties::reconcile_membership() {
  auto configured = configured_membership(sm_);
  if (!configured || configured->znode_version < 0 || configured->servers.empty()) return;
  const auto& desired = configured->servers;
  const auto actual = log_.membership();
  const uint64_t self = log_.self_id();
  auto has = [](const std::vector<uint64_t>& v, uint64_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  for (const auto& m : desired) {
    auto id = static_cast<uint64_t>(m.id);
    if (!has(actual.voters, id) && !has(actual.learners, id)) {
      log_.add_peer(id, m.host, static_cast<uint16_t>(m.peer_port));
      log_.change_membership(MembershipChange::kAddLearner, id);
      return;
    }
    if (m.role == PeerRole::kParticipant && has(actual.learners, id)) {
      log_.change_membership(MembershipChange::kPromote, id);
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
      if (!wanted(id) && id != self) {
        log_.change_membership(MembershipChange::kRemove, id);
        return;
      }
    }
  }
  if (!wanted(self) && has(actual.voters, self)) {
    log_.change_membership(MembershipChange::kRemove, self);
  }
}

}  // namespace zkraft::server
