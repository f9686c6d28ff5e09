// ZkStateMachine's snapshot side: the whole replicated state (format, last zxid, sessions,
// tree) as one byte string, and its inverse. Invariant: a load that does not parse leaves the
// state as it was (it parses into scratch tables and swaps only on success).
#include "server/zk_state_machine.h"

#include <algorithm>
#include <limits>

namespace zkraft::server {

namespace {
// A snapshot is one full segment, then any number of delta segments appended to it:
//   int 1, long last zxid, sessions, tree (ZnodeTree::serialize);
//   int 2, long last zxid, sessions, tree delta (ZnodeTree::write_delta's bytes) ...
constexpr int32_t kSnapshotFormat = 1;
constexpr int32_t kDeltaSegment = 2;
}

void ZkStateMachine::write_snapshot_header(jute::Writer& w) const {
  w.write_int(kSnapshotFormat);
  w.write_long(last_zxid_);
  sessions_.serialize(w);
}

std::string ZkStateMachine::serialize() const {
  jute::Writer w;
  write_snapshot_header(w);
  tree_.serialize(w);
  return w.take();
}

bool ZkStateMachine::serialize_to(size_t piece_bytes, const std::function<bool(std::string_view)>& out) const {
  jute::Writer w;
  write_snapshot_header(w);
  if (!tree_.serialize_in_pieces(w, piece_bytes, out)) return false;
  return w.size() == 0 || out(w.bytes());
}

tree::LiveSnapshotCheck ZkStateMachine::begin_live_snapshot(jute::Writer& w) {
  write_snapshot_header(w);
  return tree_.begin_live_snapshot(w);
}

std::optional<uint64_t> ZkStateMachine::pending_delta_bytes() const {
  if (!tree_.delta_possible()) return std::nullopt;
  return tree_.pending_delta_bytes() + 12 + 64 * sessions_.size();  // the sessions: an estimate
}

void ZkStateMachine::begin_live_delta(jute::Writer& w) {
  w.write_int(kDeltaSegment);
  w.write_long(last_zxid_);
  sessions_.serialize(w);
  tree_.begin_live_delta(w);
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
  while (r.remaining() > 0) {
    int64_t at = 0;
    session::SessionTable now;
    if (!r.read_int(format) || format != kDeltaSegment || !r.read_long(at) || at < last) return false;
    if (!now.deserialize(r) || !tree.apply_delta(r)) return false;
    sessions = std::move(now);
    last = at;
  }
  if (!r.ok()) return false;
  sessions_ = std::move(sessions);
  tree_.replace_with(std::move(tree));
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
  tree_.start_change_record();  // the storage holds this state: deltas may follow it
  // Pairs past the snapshot's zxid (never on a Raft log, whose snapshots only move forward)
  // would describe a history this state no longer has.
  while (!digest_log_.empty() && digest_log_.back().zxid > last_zxid_) digest_log_.pop_back();
  return true;
}

}  // namespace zkraft::server
