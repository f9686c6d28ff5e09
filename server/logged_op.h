#pragma once
// TEMPORARY until jute::op_is_logged lands: the ops that go through the log.
#include <cstdint>
#include "jute/opcodes.h"
namespace zkraft::jute {
inline bool op_is_logged(int32_t o) {
  switch (o) {
    case op::kCreate: case op::kCreate2: case op::kCreateContainer: case op::kCreateTTL:
    case op::kDelete: case op::kSetData: case op::kSetACL: case op::kMulti: case op::kCheck:
    case op::kReconfig: case op::kCloseSession: return true;
    default: return false;
  }
}
}  // namespace zkraft::jute
