// Op, lop and error names, and the protocol constants that other modules switch on.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "jute/records.h"

namespace zkraft::jute {
namespace {

TEST(Names, OpNames) {
  EXPECT_STREQ(op_name(op::kCreate), "create");
  EXPECT_STREQ(op_name(op::kGetChildren2), "getChildren2");
  EXPECT_STREQ(op_name(op::kCloseSession), "closeSession");
  EXPECT_STREQ(op_name(op::kWhoAmI), "whoAmI");
  EXPECT_STREQ(op_name(10), "unknown");
  EXPECT_STREQ(op_name(12345), "unknown");
}

TEST(Names, LopNamesMatchZooKeeperConsOutput) {
  EXPECT_STREQ(op_lop_name(op::kCreate), "CREA");
  EXPECT_STREQ(op_lop_name(op::kCreate2), "CREA");
  EXPECT_STREQ(op_lop_name(op::kCreateContainer), "CREA");
  EXPECT_STREQ(op_lop_name(op::kCreateTTL), "CREA");
  EXPECT_STREQ(op_lop_name(op::kDelete), "DELE");
  EXPECT_STREQ(op_lop_name(op::kSetData), "SETD");
  EXPECT_STREQ(op_lop_name(op::kGetData), "GETD");
  EXPECT_STREQ(op_lop_name(op::kGetChildren), "GETC");
  EXPECT_STREQ(op_lop_name(op::kGetChildren2), "GETC");
  EXPECT_STREQ(op_lop_name(op::kExists), "EXIS");
  EXPECT_STREQ(op_lop_name(op::kPing), "PING");
  EXPECT_STREQ(op_lop_name(op::kCreateSession), "SESS");
  EXPECT_STREQ(op_lop_name(op::kMulti), "MULT");
  EXPECT_STREQ(op_lop_name(op::kMultiRead), "MLTR");
  EXPECT_STREQ(op_lop_name(op::kSetWatches), "SETW");
  EXPECT_STREQ(op_lop_name(op::kSetWatches2), "STW2");
  EXPECT_STREQ(op_lop_name(op::kAddWatch), "ADDW");
  EXPECT_STREQ(op_lop_name(op::kGetACL), "GETA");
  EXPECT_STREQ(op_lop_name(op::kSetACL), "SETA");
  EXPECT_STREQ(op_lop_name(op::kSync), "SYNC");
  EXPECT_STREQ(op_lop_name(op::kCheck), "CHEC");
  EXPECT_STREQ(op_lop_name(op::kCheckWatches), "CHKW");
  EXPECT_STREQ(op_lop_name(op::kRemoveWatches), "REMW");
  EXPECT_STREQ(op_lop_name(op::kWhoAmI), "HOMI");
  EXPECT_STREQ(op_lop_name(op::kGetEphemerals), "GETE");
  EXPECT_STREQ(op_lop_name(op::kGetAllChildrenNumber), "GETACN");
  EXPECT_STREQ(op_lop_name(op::kReconfig), "RECO");
  EXPECT_STREQ(op_lop_name(op::kCloseSession), "CLOS");
  EXPECT_STREQ(op_lop_name(op::kAuth), "NA");
  EXPECT_STREQ(op_lop_name(77), "NA");
}

TEST(Names, EveryErrorCodeHasItsOwnName) {
  const int32_t codes[] = {
      err::kOk, err::kSystemError, err::kRuntimeInconsistency, err::kDataInconsistency,
      err::kConnectionLoss, err::kMarshallingError, err::kUnimplemented, err::kOperationTimeout,
      err::kBadArguments, err::kUnknownSession, err::kNewConfigNoQuorum,
      err::kReconfigInProgress, err::kApiError, err::kNoNode, err::kNoAuth, err::kBadVersion,
      err::kNoChildrenForEphemerals, err::kNodeExists, err::kNotEmpty, err::kSessionExpired,
      err::kInvalidCallback, err::kInvalidAcl, err::kAuthFailed, err::kSessionMoved,
      err::kNotReadOnly, err::kEphemeralOnLocalSession, err::kNoWatcher, err::kRequestTimeout,
      err::kReconfigDisabled, err::kSessionClosedRequireSaslAuth, err::kQuotaExceeded,
      err::kThrottledOp};
  std::set<std::string> names;
  for (int32_t c : codes) {
    std::string n = error_name(c);
    EXPECT_NE(n, "UNKNOWN") << c;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), std::size(codes));
  EXPECT_STREQ(error_name(-101), "NONODE");
  EXPECT_STREQ(error_name(-103), "BADVERSION");
  EXPECT_STREQ(error_name(-126), "UNKNOWN");
}

TEST(Names, WireValuesOfConstants) {
  EXPECT_EQ(err::kNoNode, -101);
  EXPECT_EQ(err::kThrottledOp, -127);
  EXPECT_EQ(op::kCreateTTL, 21);
  EXPECT_EQ(op::kWhoAmI, 107);
  EXPECT_EQ(xid::kSetWatches, -8);
  EXPECT_EQ(event::kNodeChildrenChanged, 4);
  EXPECT_EQ(keeper_state::kSyncConnected, 3);
  EXPECT_EQ(watcher_type::kPersistentRecursive, 5);
  EXPECT_EQ(add_watch_mode::kPersistentRecursive, 1);
  EXPECT_TRUE(create_mode::is_ephemeral(create_mode::kEphemeralSequential));
  EXPECT_TRUE(create_mode::is_sequential(create_mode::kPersistentSequentialWithTTL));
  EXPECT_TRUE(create_mode::is_ttl(create_mode::kPersistentWithTTL));
  EXPECT_FALSE(create_mode::is_valid(7));
  EXPECT_FALSE(create_mode::is_valid(-1));
  EXPECT_TRUE(op_is_write(op::kMulti));
  EXPECT_FALSE(op_is_write(op::kMultiRead));
  EXPECT_FALSE(op_is_write(op::kGetData));
}

}  // namespace
}  // namespace zkraft::jute
