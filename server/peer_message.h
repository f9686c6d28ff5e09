#pragma once
// PeerMessage: what one zkraft server tells another outside the Raft log (carried as an
// application message by consensus::RaftNode). One typed, versioned message; every server-to-
// server payload the ZooKeeper layer sends is one of these.
//
// Wire form: [format u8 = 1][kind u8][jute-encoded body]. A decoder meets only its own format
// (future formats bump the byte and keep decoding old ones) and refuses anything else, bounded.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace zkraft::server {

// A follower's client write (an encoded Txn, time not yet stamped) for the leader to propose.
struct ForwardedWrite {
  std::string txn;
  bool operator==(const ForwardedWrite&) const = default;
};

// The sessions a follower heard from since its last report (ZooKeeper's touch table), so the
// leader, which decides expiry, keeps them alive.
struct SessionsAlive {
  std::vector<int64_t> session_ids;
  bool operator==(const SessionsAlive&) const = default;
};

// A server that an operator asked to lead (rqld) asks the leader to hand leadership over.
struct LeadershipRequest {
  bool operator==(const LeadershipRequest&) const = default;
};

// A member's own Raft figures, sent to the leader twice a second, so that the leader's dashboard
// shows every member's term, commit and applied index (consensus tracks only each one's match).
struct MemberFigures {
  uint64_t term = 0;
  uint64_t commit_index = 0;
  uint64_t applied_index = 0;
  bool operator==(const MemberFigures&) const = default;
};

using PeerMessage = std::variant<ForwardedWrite, SessionsAlive, LeadershipRequest, MemberFigures>;

std::string encode_peer_message(const PeerMessage& m);
// nullopt for bytes that are not a PeerMessage of a known format and kind, or that exceed
// max_sessions session ids.
std::optional<PeerMessage> decode_peer_message(std::string_view bytes,
                                               int32_t max_sessions = 1 << 20);

}  // namespace zkraft::server
