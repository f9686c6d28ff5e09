#include "session/session_table.h"

#include <algorithm>

namespace zkraft::session {

bool SessionTable::add(int64_t id, int32_t timeout_ms, const SessionPassword& password) {
  // The same rule deserialize() holds a stored table to: a table that accepted a timeout it
  // cannot load again would write snapshots this server could not restart from.
  if (timeout_ms <= 0) return false;
  return sessions_.emplace(id, SessionInfo{timeout_ms, password}).second;
}

bool SessionTable::remove(int64_t id) { return sessions_.erase(id) != 0; }

const SessionInfo* SessionTable::find(int64_t id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : &it->second;
}

bool SessionTable::password_matches(int64_t id, std::string_view password) const {
  const SessionInfo* s = find(id);
  if (s == nullptr || password.size() != s->password.size()) return false;
  return std::equal(s->password.begin(), s->password.end(), password.begin(),
                    [](uint8_t a, char b) { return a == static_cast<uint8_t>(b); });
}

std::vector<int64_t> SessionTable::ids() const {
  std::vector<int64_t> out;
  out.reserve(sessions_.size());
  for (const auto& [id, info] : sessions_) out.push_back(id);
  return out;
}

void SessionTable::serialize(jute::Writer& w) const {
  w.write_count(static_cast<int32_t>(sessions_.size()));
  for (const auto& [id, info] : sessions_) {
    w.write_long(id);
    w.write_int(info.timeout_ms);
    w.write_buffer(jute::Buffer{to_bytes(info.password), false});
  }
}

bool SessionTable::deserialize(jute::Reader& r) {
  // Each session takes at least 8 + 4 + 4 + 16 bytes.
  constexpr size_t kMinSessionBytes = 32;
  int32_t n = 0;
  if (!r.read_count(n, kMinSessionBytes)) return false;
  std::map<int64_t, SessionInfo> loaded;
  for (int32_t i = 0; i < n; ++i) {
    int64_t id = 0;
    int32_t timeout = 0;
    jute::Buffer pw;
    if (!r.read_long(id) || !r.read_int(timeout) || !r.read_buffer(pw)) return false;
    SessionInfo info;
    info.timeout_ms = timeout;
    // Written in ascending order: anything else is corruption, not a table we wrote.
    if (timeout <= 0 || pw.is_null || !from_bytes(pw.bytes, info.password)) {
      r.fail();
      return false;
    }
    if (!loaded.empty() && id <= loaded.rbegin()->first) {
      r.fail();
      return false;
    }
    loaded.emplace_hint(loaded.end(), id, info);
  }
  sessions_ = std::move(loaded);
  return true;
}

}  // namespace zkraft::session
