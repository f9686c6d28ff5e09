#pragma once
// Plain data shared by the Raft core, its storage and its transport. Entries are opaque bytes:
// nothing in consensus/ knows what a ZooKeeper transaction is.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace zkraft::consensus {

using NodeId = uint64_t;  // 0 means "none"
using Term = uint64_t;
using Index = uint64_t;

// A snapshot's bytes, read-only and shared, never copied: a 1,000,000-znode tree is ~190 MB, and
// the core (which sends it to followers), the storage thread (which writes it) and the
// application (which restores it) may each hold it at once. In memory (snapshot_in_memory), or a
// stored snapshot file mapped read-only (LogStorage::map_snapshot): then the bytes are the
// kernel's page cache, which it may drop and read again at any time, and never the heap's.
class SnapshotData {
 public:
  virtual ~SnapshotData() = default;
  virtual std::string_view bytes() const = 0;
  size_t size() const { return bytes().size(); }
};
// Null when there is none.
using SnapshotBytes = std::shared_ptr<const SnapshotData>;
SnapshotBytes snapshot_in_memory(std::string bytes);

// Where the application may write its own snapshot itself, so that the bytes never pass through
// the driver whole (RaftDriverStorage::own_snapshot_file): a new file at `path`, synced every
// `sync_bytes` while written. `token` names it to the storage that handed it out.
//
// The stored snapshot, when its data is a file: the application may instead append to that file
// what turns its state into the new one (an incremental snapshot: the stored bytes followed by
// the appended ones are the new snapshot), if its own state was at stored_index when the stored
// one was taken. `stored_size` bytes are the stored snapshot's, with CRC-32C `stored_crc`;
// `stored_full_size` of them were written whole, the rest appended since.
struct SnapshotFileTarget {
  uint64_t token = 0;
  std::string path;
  uint64_t sync_bytes = 0;
  uint64_t stored_index = 0;  // 0: nothing to append to
  uint64_t stored_generation = 0;
  std::string stored_path;
  uint64_t stored_size = 0;
  uint32_t stored_crc = 0;
  uint64_t stored_full_size = 0;
};

// A snapshot file the application wrote at a target's path: `size` bytes with CRC-32C `crc32c`,
// synced, and its directory entry synced too, so a record naming it may be published. Appended:
// the stored file (generation `token`) holds `size` bytes now, of which the first `appended_to`
// were the stored snapshot's when the target was handed out; `crc32c` covers all `size`.
struct SnapshotFileWritten {
  uint64_t token = 0;
  uint64_t size = 0;
  uint32_t crc32c = 0;
  bool appended = false;
  uint64_t appended_to = 0;
};

enum class EntryType : uint8_t {
  kNormal = 0,      // application data (data may be empty: the leader's no-op)
  kConfChange = 1,  // a membership change, encoded by the core
};

struct Entry {
  Term term = 0;
  Index index = 0;
  EntryType type = EntryType::kNormal;
  std::string data;
  bool operator==(const Entry&) const = default;
};

// What must be durable before a vote or an append acknowledgement leaves the node.
struct HardState {
  Term term = 0;
  NodeId vote = 0;
  Index commit = 0;
  bool operator==(const HardState&) const = default;
};

// Voters and learners of the cluster.
struct Membership {
  std::vector<NodeId> voters;
  std::vector<NodeId> learners;
  bool operator==(const Membership&) const = default;
};

struct SnapshotMeta {
  Index index = 0;  // last log index the snapshot covers
  Term term = 0;    // term of that entry
  Membership membership;
  bool operator==(const SnapshotMeta&) const = default;
};

// One chunk of a leader's snapshot as a follower received it, for its storage to write in order
// (Ready::snapshot_chunks): offset 0 starts the snapshot's file (dropping an unfinished one),
// every later chunk continues it where the one before ended, and `last` ends it. Unsynced until
// the snapshot is stored (RaftDriverStorage::store_snapshot), which a crash before loses.
struct SnapshotChunk {
  SnapshotMeta meta;
  uint64_t offset = 0;
  std::string bytes;
  bool last = false;
  bool operator==(const SnapshotChunk&) const = default;
};

}  // namespace zkraft::consensus
