#pragma once
// SessionTable: the replicated table of live sessions (id -> granted timeout and password).
//
// Every replica applies the same create/close entries in log order, so the table is identical
// everywhere; it is ordered by id so iteration and snapshots are deterministic. It says nothing
// about liveness (that is SessionExpiryTracker's job, local to the leader).

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "jute/archive.h"
#include "session/session_password.h"

namespace zkraft::session {

struct SessionInfo {
  int32_t timeout_ms = 0;       // the negotiated timeout granted at creation
  SessionPassword password{};   // 16 bytes the client must present to reattach
  bool operator==(const SessionInfo&) const = default;
};

class SessionTable {
 public:
  // Adds a session; false (and no change) if the id already exists or the timeout is <= 0 (no
  // table holds one: deserialize refuses it).
  bool add(int64_t id, int32_t timeout_ms, const SessionPassword& password);
  // Removes a session; false if it was not there.
  bool remove(int64_t id);

  const SessionInfo* find(int64_t id) const;
  bool contains(int64_t id) const { return sessions_.count(id) != 0; }
  // True if the session exists and `password` (wire bytes) equals its password.
  bool password_matches(int64_t id, std::string_view password) const;

  size_t size() const { return sessions_.size(); }
  bool empty() const { return sessions_.empty(); }
  std::vector<int64_t> ids() const;  // ascending
  const std::map<int64_t, SessionInfo>& sessions() const { return sessions_; }
  void clear() { sessions_.clear(); }

  // Snapshot format: int count, then per session (ascending id): long id, int timeout,
  // buffer password (16 bytes).
  void serialize(jute::Writer& w) const;
  // Replaces the contents. Returns false on malformed input (bad count, duplicate or unordered
  // ids, wrong password length, non-positive timeout) and then leaves the table unchanged.
  bool deserialize(jute::Reader& r);

  bool operator==(const SessionTable&) const = default;

 private:
  std::map<int64_t, SessionInfo> sessions_;
};

}  // namespace zkraft::session
