// RaftCore's membership: the configuration in effect (the compaction point's, then every
// membership change in the log, evicted ones included), the leader's progress kept in step with
// it, and who may campaign. The type and its invariants are in raft_core.h.
#include "consensus/raft_core.h"

#include <algorithm>
#include <utility>

namespace zkraft::consensus {

// ---------------------------------------------------------------- membership

Membership RaftCore::membership_through(Index index) const {
  Membership m = base_membership_;
  for (const Entry& e : log_.evicted_conf_changes()) {
    if (e.index > index) return m;
    if (auto cc = decode_conf_change(e.data)) apply_conf_change(m, *cc);
  }
  for (Index i = log_.evicted() + 1; i <= std::min(index, log_.last_index()); ++i) {
    const Entry& e = log_.at(i);
    if (e.type != EntryType::kConfChange) continue;
    if (auto cc = decode_conf_change(e.data)) apply_conf_change(m, *cc);
  }
  return m;
}

void RaftCore::refresh_membership() {
  membership_ = membership_through(log_.last_index());
  sync_progress_with_membership();
}

void RaftCore::sync_progress_with_membership() {
  if (role_ != Role::kLeader) return;
  for (auto it = progress_.begin(); it != progress_.end();) {
    if (!is_voter(membership_, it->first) && !is_learner(membership_, it->first)) {
      it = progress_.erase(it);
    } else {
      it->second.learner = is_learner(membership_, it->first);
      ++it;
    }
  }
  // Members present at election start silent (CheckQuorum must hear them); members added later
  // get one CheckQuorum round of grace.
  const bool added_later = !progress_.empty();
  auto add = [&](NodeId id, bool learner) {
    if (id == id_ || progress_.count(id)) return;
    Progress p(cfg_.max_inflight_msgs);
    p.next = log_.last_index() + 1;
    p.learner = learner;
    p.recent_active = added_later;
    progress_.emplace(id, std::move(p));
  };
  for (NodeId v : membership_.voters) add(v, false);
  for (NodeId l : membership_.learners) add(l, true);
}

bool RaftCore::promotable() const {
  return is_voter(membership_, id_) && !pending_snapshot_.has_value();
}

}  // namespace zkraft::consensus
