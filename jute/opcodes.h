#pragma once
// ZooKeeper request op codes and the special xids, as they appear in RequestHeader.type / .xid.
//
// Values are fixed by the wire protocol (ZooDefs.OpCode); never renumber them.

#include <cstdint>

namespace zkraft::jute {

namespace op {
inline constexpr int32_t kNotification = 0;
inline constexpr int32_t kCreate = 1;
inline constexpr int32_t kDelete = 2;
inline constexpr int32_t kExists = 3;
inline constexpr int32_t kGetData = 4;
inline constexpr int32_t kSetData = 5;
inline constexpr int32_t kGetACL = 6;
inline constexpr int32_t kSetACL = 7;
inline constexpr int32_t kGetChildren = 8;
inline constexpr int32_t kSync = 9;
inline constexpr int32_t kPing = 11;
inline constexpr int32_t kGetChildren2 = 12;
inline constexpr int32_t kCheck = 13;
inline constexpr int32_t kMulti = 14;
inline constexpr int32_t kCreate2 = 15;
inline constexpr int32_t kReconfig = 16;
inline constexpr int32_t kCheckWatches = 17;
inline constexpr int32_t kRemoveWatches = 18;
inline constexpr int32_t kCreateContainer = 19;
inline constexpr int32_t kDeleteContainer = 20;
inline constexpr int32_t kCreateTTL = 21;
inline constexpr int32_t kMultiRead = 22;
inline constexpr int32_t kAuth = 100;
inline constexpr int32_t kSetWatches = 101;
inline constexpr int32_t kSasl = 102;
inline constexpr int32_t kGetEphemerals = 103;
inline constexpr int32_t kGetAllChildrenNumber = 104;
inline constexpr int32_t kSetWatches2 = 105;
inline constexpr int32_t kAddWatch = 106;
inline constexpr int32_t kWhoAmI = 107;
inline constexpr int32_t kCreateSession = -10;
inline constexpr int32_t kCloseSession = -11;
inline constexpr int32_t kError = -1;  // MultiHeader.type of an error result; also a txn type
}  // namespace op

// Special xids. Normal client requests use xid >= 1 (the Java client wraps back to 1).
namespace xid {
inline constexpr int32_t kNotification = -1;  // server -> client watch event
inline constexpr int32_t kPing = -2;          // a ping reply always carries -2
inline constexpr int32_t kAuth = -4;          // AuthPacket (op 100) and its reply
inline constexpr int32_t kSetWatches = -8;    // SetWatches / SetWatches2 and their reply
}  // namespace xid

// The Java constant name of an op ("create", "getChildren2", ...), or "unknown".
const char* op_name(int32_t op);

// The short name ZooKeeper shows as `lop=` in the `cons` four-letter word (FinalRequestProcessor's
// lastOp): "CREA", "GETD", "PING", ... Ops that never reach that processor (auth, sasl,
// notification, unknown ones) give "NA", which is also what a connection shows before its first op.
const char* op_lop_name(int32_t op);

// The one classification of the ops that change state (one table in opcodes.cc):
//
// A client's request of these ops goes through the Raft log as a transaction: create, create2,
// createContainer, createTTL, delete, setData, setACL, multi, check, reconfig, closeSession.
// (createSession is logged from the handshake, not as a request; deleteContainer only by the
// leader's container reaper.)
bool op_is_logged(int32_t op);
// The write ops a multi (op 14) may contain: create, create2, createContainer, createTTL, delete,
// setData, check (a multi's reads are getData and getChildren: jute/multi.h is_multi_read_op).
bool op_is_multi_write(int32_t op);
// Every op whose effect is a change to the tree or the session table: op_is_logged plus
// createSession and deleteContainer. False for reads, pings, auth and watch management.
bool op_is_write(int32_t op);

}  // namespace zkraft::jute
