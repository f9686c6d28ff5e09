#pragma once
// Messages exchanged between Raft cores, and their binary encoding for the peer transport.
//
// One flat Message struct for every kind (as etcd's raftpb.Message): which fields are meaningful
// depends on `type`, documented per field. The encoding is versioned, big-endian and bounded:
// decode_message never reads past its input and rejects anything malformed or over the limits.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "consensus/types.h"

namespace zkraft::consensus {

enum class MessageType : uint8_t {
  kPreVote = 1,            // candidate asks "would you vote for me in term `term`?" (no state change)
  kPreVoteResponse = 2,
  kVote = 3,               // real vote request for term `term`
  kVoteResponse = 4,
  kAppend = 5,             // leader -> follower: entries after (index, log_term), commit
  kAppendResponse = 6,
  kHeartbeat = 7,          // leader -> follower: commit, read-index round in `context`
  kHeartbeatResponse = 8,
  kSnapshot = 9,           // one chunk of a snapshot: meta, offset, bytes, done
  kSnapshotResponse = 10,  // chunk acknowledgement: `index` = bytes received so far
  kTimeoutNow = 11,        // leadership transfer: the target campaigns at once
  kReadIndex = 12,         // follower -> leader: please run a ReadIndex round for `context`
  kReadIndexResponse = 13, // leader -> follower: `index` is safe to read at; reject if not leader
};

const char* message_type_name(MessageType t);

struct Message {
  MessageType type = MessageType::kHeartbeat;
  NodeId from = 0;
  NodeId to = 0;
  Term term = 0;  // sender's term (for kPreVote: the term it would campaign in)

  // kAppend: index/term of the entry preceding `entries`.
  // kVote/kPreVote: the candidate's last log index/term.
  // kAppendResponse accepted: highest index known to match the leader; rejected: the rejected
  //   prev index, with `reject_hint` (follower's suggestion where to probe) and `log_term`
  //   (follower's term at reject_hint) for fast backtracking.
  // kSnapshotResponse: bytes of the snapshot received so far (next offset wanted).
  // kReadIndexResponse: the commit index that is safe to read at.
  Index index = 0;
  Term log_term = 0;
  Index commit = 0;  // kAppend/kHeartbeat: leader's commit (heartbeat: min with follower's match)
  std::vector<Entry> entries;
  bool reject = false;
  Index reject_hint = 0;
  // kHeartbeat/kHeartbeatResponse: read-index round id. kReadIndex/kReadIndexResponse: caller's
  // context. kVote/kPreVote: 1 when the campaign is a leadership transfer (bypasses the lease).
  uint64_t context = 0;

  // kSnapshot only.
  SnapshotMeta snapshot;
  uint64_t snapshot_offset = 0;  // where `snapshot_chunk` starts within the snapshot bytes
  bool snapshot_done = false;    // last chunk
  std::string snapshot_chunk;

  bool operator==(const Message&) const = default;
};

// Bounds applied while decoding untrusted bytes.
struct MessageLimits {
  size_t max_entries = 1 << 20;             // entries in one message
  size_t max_bytes = 256u * 1024u * 1024u;  // total encoded message size
  size_t max_members = 1 << 16;             // voters/learners in a snapshot's membership
};

// Encodes `m` (format version 1).
std::string encode_message(const Message& m);

// Decodes one message that occupies all of `bytes`. On failure returns false, leaves `out` in an
// unspecified state and, if `error` is given, says what was wrong.
bool decode_message(std::string_view bytes, Message& out, std::string* error = nullptr,
                    const MessageLimits& limits = MessageLimits{});

// Approximate payload size of an entry (used for message byte caps).
inline size_t entry_size(const Entry& e) { return e.data.size() + 24; }

}  // namespace zkraft::consensus
