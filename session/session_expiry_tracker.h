#pragma once
// SessionExpiryTracker: local liveness bookkeeping (run on the leader), in ZooKeeper's ExpiryQueue
// style. Each session's deadline is rounded UP to the next multiple of tick_ms, so sessions fall
// into a few buckets and a tick only has to look at the buckets whose time has come.
//
// Invariants: every tracked id is in exactly one bucket; a bucket's key is a multiple of tick_ms
// and strictly greater than the time of the touch that put the id there. Time is always passed in
// (milliseconds on any monotonic clock the caller chooses); nothing here reads a clock.
// Not thread-safe: one owner (the thread that runs the leader's ticks) calls everything.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace zkraft::session {

class SessionTable;

class SessionExpiryTracker {
 public:
  struct Bucket {
    int64_t deadline_ms;
    std::vector<int64_t> ids;  // ascending
  };

  // tick_ms must be > 0 (the server's tickTime).
  explicit SessionExpiryTracker(int64_t tick_ms);

  // Records activity: the session (added if unknown) now expires at round_up(now + timeout).
  void touch(int64_t id, int32_t timeout_ms, int64_t now_ms);
  // Same with the timeout remembered from the last touch; false if the id is not tracked.
  bool touch(int64_t id, int64_t now_ms);
  // Stops tracking (session closed); false if it was not tracked.
  bool remove(int64_t id);

  // Removes and returns (ascending) every session whose bucket deadline is <= now. The caller
  // proposes their expiry; a session that is touched again later is tracked afresh.
  std::vector<int64_t> expired(int64_t now_ms);

  // Gives every tracked session a fresh timeout from `now` (after a restart or leader change, so
  // nobody expires for time during which they could not reach a leader).
  void reset_all(int64_t now_ms);
  // Replaces the tracked set with the sessions of the table, each due at round_up(now + timeout).
  void reset_from(const SessionTable& table, int64_t now_ms);

  bool contains(int64_t id) const { return sessions_.count(id) != 0; }
  size_t size() const { return sessions_.size(); }
  std::optional<int64_t> deadline(int64_t id) const;
  // Earliest bucket deadline, or nullopt when nothing is tracked: when to call expired() next.
  std::optional<int64_t> next_deadline() const;
  // Buckets in deadline order, for the `dump` 4lw ("Session Sets (n)/(m):").
  std::vector<Bucket> buckets() const;
  int64_t tick_ms() const { return tick_ms_; }

  // ZooKeeper's roundToNextInterval: the next multiple of tick_ms strictly after t.
  int64_t round_up(int64_t t) const { return (t / tick_ms_ + 1) * tick_ms_; }

 private:
  struct Entry {
    int32_t timeout_ms;
    int64_t deadline_ms;
  };
  void place(int64_t id, Entry& e, int64_t deadline_ms, bool is_new);

  int64_t tick_ms_;
  std::unordered_map<int64_t, Entry> sessions_;
  std::map<int64_t, std::set<int64_t>> buckets_;  // deadline -> ids
};

}  // namespace zkraft::session
