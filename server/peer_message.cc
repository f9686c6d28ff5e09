#include "server/peer_message.h"

#include <limits>

#include "jute/archive.h"

namespace zkraft::server {

namespace {
constexpr uint8_t kFormat = 1;
enum Kind : uint8_t { kForwardedWrite = 1, kSessionsAlive = 2, kLeadershipRequest = 3, kMemberFigures = 4 };
}  // namespace

std::string encode_peer_message(const PeerMessage& m) {
  jute::Writer w;
  std::string head(2, '\0');
  head[0] = static_cast<char>(kFormat);
  if (const auto* f = std::get_if<ForwardedWrite>(&m)) {
    head[1] = static_cast<char>(kForwardedWrite);
    w.write_raw(head);
    w.write_buffer(jute::Buffer{f->txn, false});
  } else if (std::holds_alternative<LeadershipRequest>(m)) {
    head[1] = static_cast<char>(kLeadershipRequest);
    w.write_raw(head);
  } else if (const auto* f = std::get_if<MemberFigures>(&m)) {
    head[1] = static_cast<char>(kMemberFigures);
    w.write_raw(head);
    w.write_long(static_cast<int64_t>(f->term));
    w.write_long(static_cast<int64_t>(f->commit_index));
    w.write_long(static_cast<int64_t>(f->applied_index));
  } else {
    const auto& s = std::get<SessionsAlive>(m);
    head[1] = static_cast<char>(kSessionsAlive);
    w.write_raw(head);
    w.write_count(static_cast<int32_t>(s.session_ids.size()));
    for (int64_t id : s.session_ids) w.write_long(id);
  }
  return w.take();
}

std::optional<PeerMessage> decode_peer_message(std::string_view bytes, int32_t max_sessions) {
  if (bytes.size() < 2 || static_cast<uint8_t>(bytes[0]) != kFormat) return std::nullopt;
  const auto kind = static_cast<uint8_t>(bytes[1]);
  jute::Limits limits;
  limits.max_buffer = std::numeric_limits<int32_t>::max();  // bounded by the transport's frame
  jute::Reader r(bytes.substr(2), limits);
  if (kind == kForwardedWrite) {
    jute::Buffer txn;
    if (!r.read_buffer(txn) || !r.ok()) return std::nullopt;
    return ForwardedWrite{std::move(txn.bytes)};
  }
  if (kind == kSessionsAlive) {
    int32_t n = 0;
    if (!r.read_count(n, 8) || n > max_sessions) return std::nullopt;
    SessionsAlive s;
    s.session_ids.resize(static_cast<size_t>(n));
    for (auto& id : s.session_ids) {
      if (!r.read_long(id)) return std::nullopt;
    }
    return s;
  }
  if (kind == kLeadershipRequest && bytes.size() == 2) return LeadershipRequest{};
  if (kind == kMemberFigures) {
    int64_t term = 0, commit = 0, applied = 0;
    if (!r.read_long(term) || !r.read_long(commit) || !r.read_long(applied) || r.remaining() != 0) {
      return std::nullopt;
    }
    return MemberFigures{static_cast<uint64_t>(term), static_cast<uint64_t>(commit),
                         static_cast<uint64_t>(applied)};
  }
  return std::nullopt;
}

}  // namespace zkraft::server
