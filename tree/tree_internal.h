#pragma once
// Small helpers shared by the ZnodeTree source files (not part of the tree's interface).

#include <cstdint>
#include <vector>

#include "jute/data.h"
#include "tree/txn.h"

namespace zkraft::tree::internal {

inline const std::vector<jute::Id>& auth_of(const TxnContext& ctx) {
  static const std::vector<jute::Id> kNoIds;
  return ctx.auth ? *ctx.auth : kNoIds;
}

// Java int arithmetic: wraps instead of overflowing.
inline int32_t wrap_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

}  // namespace zkraft::tree::internal
