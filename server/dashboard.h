#pragma once
// The dashboard on the admin port: a page (with its script and styles, embedded in the binary
// from server/dashboard/ at build time) that polls this server's own JSON once a second and draws
// the ensemble's members, the tiles and live charts. This file owns its routes and its JSON; the
// page itself is plain HTML/JS/CSS with no fetch beyond that JSON.
//
// Routes (GET and HEAD; any other method 405), in front of the AdminServer's own:
//   /  and  /dashboard/            the page (text/html)
//   /dashboard/dashboard.js        its script
//   /dashboard/dashboard.css       its styles
//   /dashboard/status.json         what the page polls (render_dashboard_status)
// Everything else, and anything under admin.commandURL even if that is configured as one of the
// paths above, is answered by handle_admin_request unchanged: ZooKeeper's paths do not move.
//
// Invariants: the status is fetched through AdminContext::fetch_counts (the counts without the
// lists, cheap enough for a poll every second), or fetch_status without a reset; when the
// state thread does not answer, status.json says so with 503 and an "error" field, nothing made
// up. Figures this server cannot know (another member's lag on a follower) are null, not 0.

#include <optional>
#include <string>

#include "server/admin_commands.h"
#include "server/server_status.h"

namespace zkraft::server {

// The dashboard's answer, or nullopt when the request is not one of its routes.
std::optional<AdminReply> handle_dashboard_request(const AdminRequest& request,
                                                   const AdminContext& context);

// What the admin port answers: the dashboard's routes, then handle_admin_request.
AdminReply handle_admin_port_request(const AdminRequest& request, const AdminContext& context);

// status.json from a status (compact JSON). Members: every voter and learner of the membership in
// effect (and this server, and any member the leader tracks), sorted by id, each with its role
// ("leader", "follower", "observer", "standalone"); on the leader each one's match index and lag
// (this log's last index minus match), elsewhere null with "lag_known": false.
// "member_figures": term, commit and applied index by member id, for the members known here:
// this server's own; on the leader also what every follower reports of itself twice a second
// (peer_message.h's MemberFigures; "reported_ms_ago" its age; reports older than 5 s are left
// out). A follower lists only itself: only the leader hears the reports.
std::string render_dashboard_status(const ServerStatus& status);

}  // namespace zkraft::server
