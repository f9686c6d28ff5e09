#include "session/session_expiry_tracker.h"

#include <algorithm>

#include "session/session_table.h"

namespace zkraft::session {

SessionExpiryTracker::SessionExpiryTracker(int64_t tick_ms) : tick_ms_(tick_ms > 0 ? tick_ms : 1) {}

void SessionExpiryTracker::place(int64_t id, Entry& e, int64_t deadline_ms, bool is_new) {
  if (!is_new) {
    if (e.deadline_ms == deadline_ms) return;
    auto it = buckets_.find(e.deadline_ms);
    if (it != buckets_.end()) {
      it->second.erase(id);
      if (it->second.empty()) buckets_.erase(it);
    }
  }
  e.deadline_ms = deadline_ms;
  buckets_[deadline_ms].insert(id);
}

void SessionExpiryTracker::touch(int64_t id, int32_t timeout_ms, int64_t now_ms) {
  auto [it, inserted] = sessions_.try_emplace(id, Entry{timeout_ms, 0});
  it->second.timeout_ms = timeout_ms;
  place(id, it->second, round_up(now_ms + timeout_ms), inserted);
}

bool SessionExpiryTracker::touch(int64_t id, int64_t now_ms) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  place(id, it->second, round_up(now_ms + it->second.timeout_ms), false);
  return true;
}

bool SessionExpiryTracker::remove(int64_t id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  auto b = buckets_.find(it->second.deadline_ms);
  if (b != buckets_.end()) {
    b->second.erase(id);
    if (b->second.empty()) buckets_.erase(b);
  }
  sessions_.erase(it);
  return true;
}

std::vector<int64_t> SessionExpiryTracker::expired(int64_t now_ms) {
  std::vector<int64_t> out;
  // Buckets are ordered by deadline, so stop at the first one still in the future.
  while (!buckets_.empty() && buckets_.begin()->first <= now_ms) {
    for (int64_t id : buckets_.begin()->second) {
      out.push_back(id);
      sessions_.erase(id);
    }
    buckets_.erase(buckets_.begin());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void SessionExpiryTracker::reset_all(int64_t now_ms) {
  buckets_.clear();
  for (auto& [id, e] : sessions_) place(id, e, round_up(now_ms + e.timeout_ms), true);
}

void SessionExpiryTracker::reset_from(const SessionTable& table, int64_t now_ms) {
  sessions_.clear();
  buckets_.clear();
  for (const auto& [id, info] : table.sessions()) touch(id, info.timeout_ms, now_ms);
}

std::optional<int64_t> SessionExpiryTracker::deadline(int64_t id) const {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  return it->second.deadline_ms;
}

std::optional<int64_t> SessionExpiryTracker::next_deadline() const {
  if (buckets_.empty()) return std::nullopt;
  return buckets_.begin()->first;
}

std::vector<SessionExpiryTracker::Bucket> SessionExpiryTracker::buckets() const {
  std::vector<Bucket> out;
  out.reserve(buckets_.size());
  for (const auto& [deadline, ids] : buckets_) out.push_back({deadline, {ids.begin(), ids.end()}});
  return out;
}

}  // namespace zkraft::session
