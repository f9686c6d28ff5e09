// The one classification of state-changing ops (jute/opcodes.h), the typed watch enums' values
// (jute/constants.h) and the one four-letter-word list (jute/frame.h).

#include <gtest/gtest.h>

#include <set>

#include "jute/constants.h"
#include "jute/frame.h"
#include "jute/multi.h"
#include "jute/opcodes.h"

namespace zkraft::jute {
namespace {

std::set<int32_t> ops_where(bool (*pred)(int32_t)) {
  std::set<int32_t> out;
  for (int32_t code = -20; code <= 200; ++code) {
    if (pred(code)) out.insert(code);
  }
  return out;
}

TEST(OpClass, LoggedOpsAreTheClientWritesThatGoThroughTheLog) {
  EXPECT_EQ(ops_where(op_is_logged),
            (std::set<int32_t>{op::kCreate, op::kCreate2, op::kCreateContainer, op::kCreateTTL,
                               op::kDelete, op::kSetData, op::kSetACL, op::kMulti, op::kCheck,
                               op::kReconfig, op::kCloseSession}));
}

TEST(OpClass, MultiWritesAreTheSubOpsThatChangeState) {
  EXPECT_EQ(ops_where(op_is_multi_write),
            (std::set<int32_t>{op::kCreate, op::kCreate2, op::kCreateContainer, op::kCreateTTL,
                               op::kDelete, op::kSetData, op::kCheck}));
  EXPECT_FALSE(op_is_multi_write(op::kGetData));
  EXPECT_TRUE(is_multi_read_op(op::kGetData));
}

TEST(OpClass, WritesAreTheLoggedOpsPlusSessionCreationAndContainerDeletion) {
  std::set<int32_t> want = ops_where(op_is_logged);
  want.insert(op::kCreateSession);
  want.insert(op::kDeleteContainer);
  EXPECT_EQ(ops_where(op_is_write), want);
}

TEST(WatchEnums, TypedViewsCarryTheWireValues) {
  EXPECT_EQ(static_cast<int32_t>(EventType::kNodeCreated), event::kNodeCreated);
  EXPECT_EQ(static_cast<int32_t>(EventType::kNodeDeleted), event::kNodeDeleted);
  EXPECT_EQ(static_cast<int32_t>(EventType::kNodeDataChanged), event::kNodeDataChanged);
  EXPECT_EQ(static_cast<int32_t>(EventType::kNodeChildrenChanged), event::kNodeChildrenChanged);
  EXPECT_EQ(static_cast<int32_t>(AddWatchMode::kPersistent), 0);
  EXPECT_EQ(static_cast<int32_t>(AddWatchMode::kPersistentRecursive), 1);
  EXPECT_EQ(kMaxTtlMs, 0xFFFFFFFFFFLL);
}

TEST(FourLetterWordList, EveryListedWordIsDetected) {
  EXPECT_EQ(kFourLetterWords.size(), 18u);
  for (std::string_view w : kFourLetterWords) {
    EXPECT_TRUE(is_four_letter_word(w)) << w;
    EXPECT_EQ(classify_first_bytes(std::string(w) + "\n"), FirstBytes::kFourLetterWord) << w;
  }
}

}  // namespace
}  // namespace zkraft::jute
