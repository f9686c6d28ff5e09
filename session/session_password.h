#pragma once
// The 16-byte secret a client must present to reattach to its session (ConnectRequest.passwd).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace zkraft::session {

using SessionPassword = std::array<uint8_t, 16>;

// ZooKeeper's own secret (SessionTrackerImpl / ZooKeeperServer.superSecret). Passwords made with it
// are predictable from the session id; use a random secret unless byte-for-byte ZooKeeper
// compatibility of the password is wanted (it never is by clients).
inline constexpr uint64_t kZooKeeperSuperSecret = 0xB3415C00ull;

// ZooKeeper's generatePasswd: new java.util.Random(session_id ^ secret).nextBytes(16 bytes).
// Deterministic, so replicas agree when the leader puts only the id and secret in the log.
SessionPassword make_password(int64_t session_id, uint64_t secret);

// Conversions to and from the wire (jute buffer bytes). from_bytes fails unless exactly 16 bytes.
std::string to_bytes(const SessionPassword& p);
bool from_bytes(std::string_view bytes, SessionPassword& out);

}  // namespace zkraft::session
