#pragma once
// Plain data shared by the Raft core, its storage and its transport. Entries are opaque bytes:
// nothing in consensus/ knows what a ZooKeeper transaction is.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zkraft::consensus {

using NodeId = uint64_t;  // 0 means "none"
using Term = uint64_t;
using Index = uint64_t;

// A snapshot's bytes, shared and never copied: a 1,000,000-znode tree is ~100 MB, and the core
// (which sends it to followers), the storage thread (which writes it) and the application (which
// restores it) each hold it at once. Null when there is none.
using SnapshotBytes = std::shared_ptr<const std::string>;

// Where the application may write its own snapshot itself, so that the bytes never pass through
// the driver whole (RaftDriverStorage::own_snapshot_file): a new file at `path`, synced every
// `sync_bytes` while written. `token` names it to the storage that handed it out.
struct SnapshotFileTarget {
  uint64_t token = 0;
  std::string path;
  uint64_t sync_bytes = 0;
};

// A snapshot file the application wrote at a target's path: `size` bytes with CRC-32C `crc32c`,
// synced, and its directory entry synced too, so a record naming it may be published.
struct SnapshotFileWritten {
  uint64_t token = 0;
  uint64_t size = 0;
  uint32_t crc32c = 0;
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

}  // namespace zkraft::consensus
