// RequestPipeline, what the HTTP AdminServer asks of it: the status (after a statistics reset
// when the command is one), on the state thread. The AdminServer never calls this directly: it
// posts to the state thread and waits (admin_server.h).
#include "server/request_pipeline.h"

namespace zkraft::server {

ServerStatus RequestPipeline::admin_status(StatsReset reset) {
  // The same resets as the 4lw crst/srst (render_status).
  if (reset == StatsReset::kConnections) {
    clients_.for_each([](Client& c) {
      c.stats.latency.reset();
      c.packets_received = c.packets_sent = 0;
    });
  } else if (reset == StatsReset::kServer) {
    stats_.latency.reset();
    stats_.packets_received = stats_.packets_sent = 0;
  }
  ServerStatus st = status();
  st.server_id = static_cast<int64_t>(log_.self_id());
  st.leader_id = static_cast<int64_t>(log_.leader());
  MembershipView m = log_.membership();
  st.voters = std::move(m.voters);
  st.learners = std::move(m.learners);
  return st;
}

}  // namespace zkraft::server
