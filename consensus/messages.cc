#include "consensus/messages.h"

namespace zkraft::consensus {

namespace {

constexpr uint8_t kFormatVersion = 1;

class Encoder {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) u8(static_cast<uint8_t>(v >> s));
  }
  void u64(uint64_t v) {
    for (int s = 56; s >= 0; s -= 8) u8(static_cast<uint8_t>(v >> s));
  }
  void bytes(std::string_view b) {
    u32(static_cast<uint32_t>(b.size()));
    out_.append(b);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Sticky-failing bounded reader: the first failure records a reason and every later read fails.
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}
  bool u8(uint8_t& v) {
    if (!need(1)) return false;
    v = static_cast<uint8_t>(in_[pos_++]);
    return true;
  }
  bool u32(uint32_t& v) {
    if (!need(4)) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(in_[pos_++]);
    return true;
  }
  bool u64(uint64_t& v) {
    if (!need(8)) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in_[pos_++]);
    return true;
  }
  bool boolean(bool& v) {
    uint8_t b = 0;
    if (!u8(b)) return false;
    if (b > 1) return fail("bad boolean");
    v = b == 1;
    return true;
  }
  bool bytes(std::string& v) {
    uint32_t n = 0;
    if (!u32(n)) return false;
    if (!need(n)) return false;
    v.assign(in_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  // A count of elements each at least `min_size` bytes long, bounded by `max`.
  bool count(uint32_t& n, size_t min_size, size_t max) {
    if (!u32(n)) return false;
    if (n > max) return fail("too many elements");
    if (static_cast<uint64_t>(n) * min_size > in_.size() - pos_) return fail("count exceeds input");
    return true;
  }
  bool fail(const char* why) {
    if (ok_) error_ = why;
    ok_ = false;
    return false;
  }
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  const std::string& error() const { return error_; }

 private:
  bool need(size_t n) {
    if (!ok_) return false;
    if (in_.size() - pos_ < n) return fail("truncated input");
    return true;
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
  std::string error_;
};

void encode_ids(Encoder& e, const std::vector<NodeId>& ids) {
  e.u32(static_cast<uint32_t>(ids.size()));
  for (NodeId id : ids) e.u64(id);
}

bool decode_ids(Decoder& d, std::vector<NodeId>& ids, const MessageLimits& limits) {
  uint32_t n = 0;
  if (!d.count(n, 8, limits.max_members)) return false;
  ids.resize(n);
  for (auto& id : ids) d.u64(id);
  return d.ok();
}

}  // namespace

const char* message_type_name(MessageType t) {
  switch (t) {
    case MessageType::kPreVote: return "PreVote";
    case MessageType::kPreVoteResponse: return "PreVoteResp";
    case MessageType::kVote: return "Vote";
    case MessageType::kVoteResponse: return "VoteResp";
    case MessageType::kAppend: return "Append";
    case MessageType::kAppendResponse: return "AppendResp";
    case MessageType::kHeartbeat: return "Heartbeat";
    case MessageType::kHeartbeatResponse: return "HeartbeatResp";
    case MessageType::kSnapshot: return "Snapshot";
    case MessageType::kSnapshotResponse: return "SnapshotResp";
    case MessageType::kTimeoutNow: return "TimeoutNow";
    case MessageType::kReadIndex: return "ReadIndex";
    case MessageType::kReadIndexResponse: return "ReadIndexResp";
  }
  return "Unknown";
}

std::string encode_message(const Message& m) {
  Encoder e;
  e.u8(kFormatVersion);
  e.u8(static_cast<uint8_t>(m.type));
  e.u64(m.from);
  e.u64(m.to);
  e.u64(m.term);
  e.u64(m.index);
  e.u64(m.log_term);
  e.u64(m.commit);
  e.u8(m.reject ? 1 : 0);
  e.u64(m.reject_hint);
  e.u64(m.context);
  e.u32(static_cast<uint32_t>(m.entries.size()));
  for (const Entry& en : m.entries) {
    e.u64(en.term);
    e.u64(en.index);
    e.u8(static_cast<uint8_t>(en.type));
    e.bytes(en.data);
  }
  const bool has_snapshot = m.type == MessageType::kSnapshot;
  e.u8(has_snapshot ? 1 : 0);
  if (has_snapshot) {
    e.u64(m.snapshot.index);
    e.u64(m.snapshot.term);
    encode_ids(e, m.snapshot.membership.voters);
    encode_ids(e, m.snapshot.membership.learners);
    e.u64(m.snapshot_offset);
    e.u8(m.snapshot_done ? 1 : 0);
    e.bytes(m.snapshot_chunk);
  }
  return e.take();
}

bool decode_message(std::string_view bytes, Message& out, std::string* error,
                    const MessageLimits& limits) {
  auto failed = [&](const std::string& why) {
    if (error) *error = why;
    return false;
  };
  if (bytes.size() > limits.max_bytes) return failed("message too large");
  Decoder d(bytes);
  uint8_t version = 0, type = 0;
  if (!d.u8(version)) return failed(d.error());
  if (version != kFormatVersion) return failed("unknown message format version");
  d.u8(type);
  if (d.ok() && (type < static_cast<uint8_t>(MessageType::kPreVote) ||
                 type > static_cast<uint8_t>(MessageType::kReadIndexResponse))) {
    return failed("unknown message type");
  }
  out = Message{};
  out.type = static_cast<MessageType>(type);
  d.u64(out.from);
  d.u64(out.to);
  d.u64(out.term);
  d.u64(out.index);
  d.u64(out.log_term);
  d.u64(out.commit);
  d.boolean(out.reject);
  d.u64(out.reject_hint);
  d.u64(out.context);
  uint32_t n = 0;
  // Each entry takes at least 21 bytes (term, index, type, length).
  if (d.count(n, 21, limits.max_entries)) {
    out.entries.resize(n);
    for (Entry& en : out.entries) {
      uint8_t et = 0;
      d.u64(en.term);
      d.u64(en.index);
      d.u8(et);
      if (d.ok() && et > static_cast<uint8_t>(EntryType::kConfChange)) d.fail("bad entry type");
      en.type = static_cast<EntryType>(et);
      d.bytes(en.data);
      if (!d.ok()) break;
    }
  }
  bool has_snapshot = false;
  d.boolean(has_snapshot);
  if (d.ok() && has_snapshot != (out.type == MessageType::kSnapshot)) {
    d.fail("snapshot section does not match message type");
  }
  if (d.ok() && has_snapshot) {
    d.u64(out.snapshot.index);
    d.u64(out.snapshot.term);
    decode_ids(d, out.snapshot.membership.voters, limits);
    decode_ids(d, out.snapshot.membership.learners, limits);
    d.u64(out.snapshot_offset);
    d.boolean(out.snapshot_done);
    d.bytes(out.snapshot_chunk);
  }
  if (d.ok() && !d.at_end()) d.fail("trailing bytes");
  if (!d.ok()) return failed(d.error());
  return true;
}

}  // namespace zkraft::consensus
