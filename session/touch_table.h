#pragma once
// TouchTable: the sessions a follower saw activity from since its last report to the leader
// (ZooKeeper's LearnerSessionTracker touchTable). Every request or ping of a session connected
// here touches it; each tick the follower drains the table and sends it, and the leader touches
// those sessions in its SessionExpiryTracker. Without this, sessions whose clients only talk to
// followers would expire on the leader (the bug ClickHouse Keeper shipped, #111102).
//
// Not thread-safe: one owner.

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace zkraft::session {

class TouchTable {
 public:
  // Records activity; the latest timeout wins (a reconnect may have negotiated a new one).
  void touch(int64_t id, int32_t timeout_ms) { touched_[id] = timeout_ms; }
  // Drops a session (closed here): no point reporting it.
  void forget(int64_t id) { touched_.erase(id); }
  // Everything touched since the last drain, ascending by id; the table is empty afterwards.
  std::vector<std::pair<int64_t, int32_t>> drain() {
    std::vector<std::pair<int64_t, int32_t>> out(touched_.begin(), touched_.end());
    touched_.clear();
    return out;
  }
  size_t size() const { return touched_.size(); }
  bool empty() const { return touched_.empty(); }

 private:
  std::map<int64_t, int32_t> touched_;
};

}  // namespace zkraft::session
