#include "session/session_id.h"

#include <limits>

namespace zkraft::session {

int64_t initial_session_id(int64_t server_id, int64_t now_ms) {
  // Unsigned arithmetic gives Java's `<<` (wrapping) and `>>>` (logical shift) exactly.
  uint64_t sid = (static_cast<uint64_t>(now_ms) << 24) >> 8;
  sid |= static_cast<uint64_t>(server_id) << 56;
  auto id = static_cast<int64_t>(sid);
  // Long.MIN_VALUE marks container nodes as their ephemeral owner; never use it as a session.
  if (id == std::numeric_limits<int64_t>::min()) ++id;
  return id;
}

}  // namespace zkraft::session
