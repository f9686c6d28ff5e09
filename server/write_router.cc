#include "server/write_router.h"

#include "jute/opcodes.h"
#include "server/peer_message.h"

namespace zkraft::server {

void WriteRouter::stamp_synced(Txn& txn) const {
  if (txn.kind != TxnKind::kRequest || txn.op != jute::op::kReconfig) return;
  ReplicationStatus st = log_.replication_status();
  // Figures from before this server led (they are refreshed every few ticks) know nothing of
  // who is in sync: then the entry goes unstamped and the check is not made.
  if (st.mode != "leader") return;
  txn.synced = std::move(st.synced_peers);
  txn.synced.push_back(log_.self_id());
}

uint64_t WriteRouter::submit(Txn txn, const Waiter& waiter) {
  const uint64_t leader = log_.leader();
  if (leader == 0) return 0;
  const uint64_t rid = next_request_id_++;
  txn.origin_server = log_.self_id();
  txn.origin_request = rid;
  if (log_.is_leader()) {
    txn.time_ms = clock_.wall_ms();
    stamp_synced(txn);
    log_.propose(encode_txn(txn));
  } else {
    txn.time_ms = 0;  // the leader stamps it
    log_.send(leader, encode_peer_message(ForwardedWrite{encode_txn(txn)}));
  }
  waiters_.emplace(rid, waiter);
  return rid;
}

bool WriteRouter::propose_own(Txn txn) {
  if (!log_.is_leader()) return false;
  txn.origin_server = log_.self_id();
  txn.origin_request = 0;
  txn.time_ms = clock_.wall_ms();
  log_.propose(encode_txn(txn));
  return true;
}

void WriteRouter::on_forwarded(std::string txn) {
  if (!log_.is_leader()) return;
  if (peek_request_op(txn) == jute::op::kReconfig) {
    // Rare: decoded and encoded again to carry the leader's view of who is in sync.
    std::optional<Txn> t = decode_txn(txn);
    if (!t) return;
    stamp_synced(*t);
    txn = encode_txn(*t);
  }
  if (!stamp_txn_time(txn, clock_.wall_ms())) return;  // not a Txn: nothing to propose
  log_.propose(std::move(txn));
}

uint64_t WriteRouter::request_read_point(const Waiter& waiter) {
  if (log_.leader() == 0) return 0;
  const uint64_t rid = next_request_id_++;
  waiters_.emplace(rid, waiter);
  log_.read_index(rid);
  return rid;
}

void WriteRouter::on_read_index(uint64_t request_id, uint64_t index, bool ok) {
  if (!waiters_.count(request_id)) return;
  if (!ok) {
    failed_reads_.push_back(request_id);
  } else {
    read_points_.emplace(index, request_id);
  }
}

std::vector<WriteRouter::Released> WriteRouter::release(uint64_t applied) {
  std::vector<Released> out;
  for (uint64_t rid : failed_reads_) out.push_back(Released{rid, false});
  failed_reads_.clear();
  while (!read_points_.empty() && read_points_.begin()->first <= applied) {
    out.push_back(Released{read_points_.begin()->second, true});
    read_points_.erase(read_points_.begin());
  }
  return out;
}

std::optional<Waiter> WriteRouter::take(uint64_t request_id) {
  auto it = waiters_.find(request_id);
  if (it == waiters_.end()) return std::nullopt;
  Waiter w = it->second;
  waiters_.erase(it);
  return w;
}

std::vector<Waiter> WriteRouter::fail_all() {
  std::vector<Waiter> out;
  out.reserve(waiters_.size());
  for (auto& [rid, w] : waiters_) out.push_back(w);
  waiters_.clear();
  read_points_.clear();
  failed_reads_.clear();
  return out;
}

}  // namespace zkraft::server
