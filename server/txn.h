#pragma once
// The log entry zkraft replicates: one client request (or a session event) stamped by the server
// that accepted it. Applying the same Txn sequence gives the same tree on every server, because
// everything that could differ (time, identities, session passwords) is inside the entry.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jute/data.h"

namespace zkraft::server {

enum class TxnKind : int32_t {
  kRequest = 1,        // a client write: `op` and `request` are the jute request record
  kCreateSession = 2,  // session_id, timeout_ms, password
  kCloseSession = 3,   // client closeSession (op -11) or expiry
  kReapNode = 4,       // server-internal delete of an empty container or expired TTL node: `path`
  kRestore = 5,        // the admin restore command: `request` is a whole state (ZkStateMachine::
                       // serialize), which replaces the tree and the sessions; `xid` is the
                       // proposing server's token for its waiting admin request
};

struct Txn {
  TxnKind kind = TxnKind::kRequest;
  int64_t session_id = 0;
  int32_t xid = 0;
  int32_t op = 0;
  int64_t time_ms = 0;                // the leader's wall clock at proposal: ctime/mtime
  uint64_t origin_server = 0;         // who holds the client connection
  uint64_t origin_request = 0;        // that server's id for the pending request (0 = none)
  std::vector<jute::Id> auth;         // caller identities at the time of the request
  std::string request;                // encoded request record (kRequest)
  int32_t timeout_ms = 0;             // kCreateSession
  std::string password;               // kCreateSession
  std::string path;                   // kReapNode
  bool expired = false;               // kCloseSession: expiry rather than a client close
  // reconfig (kRequest, op 16): the servers the leader saw in sync when it proposed the entry,
  // itself included, so that every server applies ZooKeeper's "synced quorum in the new config"
  // check (NewConfigNoQuorum) from the same facts. Empty: not stamped (not checked).
  std::vector<uint64_t> synced;
};

std::string encode_txn(const Txn& txn);
// Sets time_ms inside an encoded Txn without decoding it: the leader stamps every entry with its
// own wall clock once, when it proposes it (a follower forwards its clients' writes unstamped).
// False (bytes unchanged) if `encoded` is not an encoded Txn.
bool stamp_txn_time(std::string& encoded, int64_t time_ms);
// The op of an encoded kRequest Txn without decoding it; nullopt for other kinds or bytes.
std::optional<int32_t> peek_request_op(std::string_view encoded);
// Returns nullopt for bytes that are not a Txn (never for bytes encode_txn produced).
std::optional<Txn> decode_txn(std::string_view bytes);

}  // namespace zkraft::server
