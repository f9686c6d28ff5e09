// RequestPipeline, what it reports: the ServerStatus behind the four-letter words.
#include "server/request_pipeline.h"

#include "server/four_letter_words.h"
#include "server/peer_message.h"
#include "server/status_collector.h"

namespace zkraft::server {

ServerStatus RequestPipeline::status(bool lists) const {
  StatusSources s;
  s.clients = &clients_;
  s.watches = &watches_;
  s.state = &sm_;
  s.expiry = &duties_.expiry();
  s.stats = &stats_;
  s.replication = log_.replication_status();
  s.serving = gate_.mode() != ServingMode::kCutOff;
  s.read_only = gate_.read_only();
  s.fsyncs = log_.fsync_count();
  s.outstanding = outstanding_;
  s.pending_syncs = writes_.pending_syncs();
  s.monotonic_ms = clock_.monotonic_ms();
  s.wall_ms = clock_.wall_ms();
  s.started_monotonic_ms = started_ms_;
  s.lists = lists;
  if (lists) {
    s.file_descriptors = file_descriptor_counts();
    s.environment = current_environment();
  }
  ServerStatus st = collect_status(s);
  // The network threads' figures: a failed TLS handshake counts as a failed authentication, as
  // in ZooKeeper's NettyServerCnxnFactory.
  const HandshakeFigures hs = io_.handshake_figures();
  st.outstanding_tls_handshake = hs.outstanding_tls_handshakes;
  st.auth_failed_count += hs.unsuccessful_handshakes;
  return st;
}

std::string RequestPipeline::render_status(std::string_view cmd) {
  if (cmd == "csnp" || cmd == "rqld" || cmd == "ydld") {
    // ClickHouse Keeper's answers. rqld and ydld report the request sent, not its outcome: the
    // operator watches srvr's Mode for the change.
    if (cmd == "csnp") {
      // What this state machine has applied (a zxid is its log index): the snapshot consensus
      // takes covers at least that much.
      const auto at = static_cast<uint64_t>(sm_.last_zxid());
      log_.snapshot_now();
      return std::to_string(at);
    }
    if (cmd == "rqld") {
      if (log_.is_leader()) return "Sent leadership request to leader.";
      if (log_.leader() == 0) return "Failed to send leadership request to leader.";
      log_.send(log_.leader(), encode_peer_message(LeadershipRequest{}));
      return "Sent leadership request to leader.";
    }
    if (log_.is_leader() && !config_.standalone()) log_.transfer_leadership(0);
    return "Sent yield leadership request to leader.";
  }
  if (cmd == "crst") {
    clients_.for_each([](Client& c) {
      c.stats.latency.reset();
      c.packets_received = c.packets_sent = 0;
    });
  } else if (cmd == "srst") {
    stats_.latency.reset();
    stats_.packets_received = stats_.packets_sent = 0;
  }
  return render_four_letter_word(cmd, status(), config_);
}

}  // namespace zkraft::server
