#include "jute/opcodes.h"

namespace zkraft::jute {

const char* op_name(int32_t code) {
  switch (code) {
    case op::kNotification: return "notification";
    case op::kCreate: return "create";
    case op::kDelete: return "delete";
    case op::kExists: return "exists";
    case op::kGetData: return "getData";
    case op::kSetData: return "setData";
    case op::kGetACL: return "getACL";
    case op::kSetACL: return "setACL";
    case op::kGetChildren: return "getChildren";
    case op::kSync: return "sync";
    case op::kPing: return "ping";
    case op::kGetChildren2: return "getChildren2";
    case op::kCheck: return "check";
    case op::kMulti: return "multi";
    case op::kCreate2: return "create2";
    case op::kReconfig: return "reconfig";
    case op::kCheckWatches: return "checkWatches";
    case op::kRemoveWatches: return "removeWatches";
    case op::kCreateContainer: return "createContainer";
    case op::kDeleteContainer: return "deleteContainer";
    case op::kCreateTTL: return "createTTL";
    case op::kMultiRead: return "multiRead";
    case op::kAuth: return "auth";
    case op::kSetWatches: return "setWatches";
    case op::kSasl: return "sasl";
    case op::kGetEphemerals: return "getEphemerals";
    case op::kGetAllChildrenNumber: return "getAllChildrenNumber";
    case op::kSetWatches2: return "setWatches2";
    case op::kAddWatch: return "addWatch";
    case op::kWhoAmI: return "whoAmI";
    case op::kCreateSession: return "createSession";
    case op::kCloseSession: return "closeSession";
    case op::kError: return "error";
    default: return "unknown";
  }
}

const char* op_lop_name(int32_t code) {
  switch (code) {
    case op::kCreate:
    case op::kCreate2:
    case op::kCreateContainer:
    case op::kCreateTTL: return "CREA";
    case op::kDelete:
    case op::kDeleteContainer: return "DELE";
    case op::kSetData: return "SETD";
    case op::kGetData: return "GETD";
    case op::kGetChildren:
    case op::kGetChildren2: return "GETC";
    case op::kExists: return "EXIS";
    case op::kPing: return "PING";
    case op::kCreateSession: return "SESS";
    case op::kMulti: return "MULT";
    case op::kMultiRead: return "MLTR";
    case op::kSetWatches: return "SETW";
    case op::kSetWatches2: return "STW2";
    case op::kAddWatch: return "ADDW";
    case op::kGetACL: return "GETA";
    case op::kSetACL: return "SETA";
    case op::kSync: return "SYNC";
    case op::kCheck: return "CHEC";
    case op::kCheckWatches: return "CHKW";
    case op::kRemoveWatches: return "REMW";
    case op::kWhoAmI: return "HOMI";
    case op::kGetEphemerals: return "GETE";
    case op::kGetAllChildrenNumber: return "GETACN";
    case op::kReconfig: return "RECO";
    case op::kCloseSession: return "CLOS";
    default: return "NA";
  }
}

namespace {

// Every op that changes the tree or the session table, and how it travels.
struct WriteOp {
  int32_t op;
  bool logged;    // a client's request of it is proposed to the log
  bool in_multi;  // it may be a sub-op of a multi
};
constexpr WriteOp kWriteOps[] = {
    {op::kCreate, true, true},
    {op::kCreate2, true, true},
    {op::kCreateContainer, true, true},
    {op::kCreateTTL, true, true},
    {op::kDelete, true, true},
    {op::kSetData, true, true},
    {op::kCheck, true, true},
    {op::kSetACL, true, false},
    {op::kMulti, true, false},
    {op::kReconfig, true, false},
    {op::kCloseSession, true, false},
    {op::kCreateSession, false, false},    // logged from the handshake
    {op::kDeleteContainer, false, false},  // logged by the leader's reaper
};

const WriteOp* write_op(int32_t code) {
  for (const WriteOp& w : kWriteOps) {
    if (w.op == code) return &w;
  }
  return nullptr;
}

}  // namespace

bool op_is_write(int32_t code) { return write_op(code) != nullptr; }

bool op_is_logged(int32_t code) {
  const WriteOp* w = write_op(code);
  return w != nullptr && w->logged;
}

bool op_is_multi_write(int32_t code) {
  const WriteOp* w = write_op(code);
  return w != nullptr && w->in_multi;
}

}  // namespace zkraft::jute
