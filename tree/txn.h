#pragma once
// What the caller hands the tree with each applied transaction, and what the tree hands back:
// the transaction context, watch triggers and the multi-op records. Create modes, TTL bounds and
// event types are the protocol's (jute/constants.h).

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "jute/archive.h"
#include "jute/constants.h"
#include "jute/data.h"

namespace zkraft::tree {

// Supplied by the caller for each applied transaction. Everything that must be identical on every
// server comes from here (zxid and time from the log entry), never from a local clock.
struct TxnContext {
  int64_t zxid = 0;                              // this txn's zxid
  int64_t time_ms = 0;                           // leader's wall time stamped into the log entry
  int64_t session_id = 0;                        // caller's session (0 for server-internal ops)
  const std::vector<jute::Id>* auth = nullptr;   // caller's identities; nullptr = none
};

// The change a WatchTrigger reports (jute/constants.h: values are WatcherEvent.type).
using jute::EventType;

// One change a watch registry must turn into events, in the order the changes happened.
// kNodeDeleted fires data and child watches on `path`; kNodeChildrenChanged fires child watches.
// `acl` is the ACL of `path` at the time of the change (of the deleted node for kNodeDeleted):
// since ZooKeeper 3.8.4/3.9.2 an event only reaches watchers with READ on it (CVE-2024-23944);
// check with acl_allows(*acl, jute::perms::kRead, ids, tree.schemes()).
struct WatchTrigger {
  EventType type;
  std::string path;
  std::shared_ptr<const std::vector<jute::ACL>> acl = nullptr;
  // Compares the change only (type and path), not the ACL handle.
  bool operator==(const WatchTrigger& o) const { return type == o.type && path == o.path; }
};

// Create modes are jute::create_mode; a TTL mode's ttl is at most jute::kMaxTtlMs.
using jute::kMaxTtlMs;

// Sub-operations of a multi (op 14). A create's ttl is -1 unless mode is a TTL mode.
struct CreateOp {
  std::string path;
  jute::Buffer data;
  std::vector<jute::ACL> acl;
  int32_t mode = 0;
  int64_t ttl = -1;
};
struct DeleteOp {
  std::string path;
  int32_t version = -1;
};
struct SetDataOp {
  std::string path;
  jute::Buffer data;
  int32_t version = -1;
};
struct CheckOp {
  std::string path;
  int32_t version = -1;
};
using MultiOp = std::variant<CreateOp, DeleteOp, SetDataOp, CheckOp>;

// Result of one sub-operation. On success: err 0, `path` = created path (create), `stat` = the
// node's Stat after the op (create and setData). On failure see ZnodeTree::multi.
struct MultiOpResult {
  int32_t err = 0;
  std::string path;
  jute::Stat stat;
};

}  // namespace zkraft::tree
