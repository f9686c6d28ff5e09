// The tree's release-build invariants (ZKRAFT_INVARIANT, tree/invariant.h) fire when broken from
// outside. The others (child list positions, the ephemeral table against each node's owner, the
// data size) guard internal bookkeeping no caller can reach, and are checked in place at O(1) per
// operation.

#include <gtest/gtest.h>

#include "tree/acl_cache.h"
#include "tree/znode_tree.h"
#include "tests/tree/tree_test_util.h"

namespace zkraft::tree {
namespace {

using testing::create;
using testing::stat;

TEST(TreeInvariant, ParentPzxidNeverGoesBack) {
  ZnodeTree t;
  ASSERT_EQ(create(t, 10, "/a"), jute::err::kOk);
  ASSERT_EQ(create(t, 11, "/a/b"), jute::err::kOk);
  EXPECT_EQ(stat(t, "/a").pzxid, 11);
  // A transaction older than one already applied (e.g. a log entry replayed twice).
  EXPECT_DEATH(create(t, 5, "/a/c"), "invariant failed: .*a parent's pzxid never goes back");
}

TEST(TreeInvariant, AclReferenceCountNeverNegative) {
  AclCache cache;
  const uint32_t id = cache.intern({{jute::perms::kAll, {"world", "anyone"}}});
  cache.add_ref(id);
  cache.release(id);
  EXPECT_DEATH(cache.release(id), "invariant failed: .*reference count never goes below zero");
}

}  // namespace
}  // namespace zkraft::tree
