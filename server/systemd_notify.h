#pragma once
// systemd's readiness protocol without libsystemd: a datagram to the unix socket named by
// $NOTIFY_SOCKET (a path, or "@name" for the abstract namespace), e.g. "READY=1" once the server
// serves clients (the unit says Type=notify), "STATUS=..." when that changes, "STOPPING=1" on
// shutdown. Without $NOTIFY_SOCKET (not started by systemd) nothing is sent.

#include <string_view>

namespace zkraft::server {

// False when $NOTIFY_SOCKET is unset or the datagram could not be sent.
bool systemd_notify(std::string_view message);

}  // namespace zkraft::server
