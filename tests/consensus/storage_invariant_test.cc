// LogStorage's release-build invariants before a disk write (ZKRAFT_INVARIANT,
// consensus/invariant.h): a write that would make the log unreadable after a restart aborts
// instead. Bad arguments the caller can recover from (a gap, a non-contiguous run) stay error
// values; see storage_log_test.cc.

#include <gtest/gtest.h>

#include <memory>

#include "consensus/log_storage.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::make_entry;
using testing::TempDir;

class LogStorageInvariant : public ::testing::Test {
 protected:
  // LevelDB runs background threads: re-run the test in the child instead of forking.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

std::unique_ptr<LogStorage> open_log(const std::string& dir) {
  std::string err;
  auto st = LogStorage::open(dir, StorageOptions{}, &err);
  EXPECT_NE(st, nullptr) << err;
  return st;
}

TEST_F(LogStorageInvariant, TermsNeverDecreaseAcrossWrites) {
  TempDir tmp;
  auto st = open_log(tmp.path());
  ASSERT_TRUE(st->append({make_entry(1, 2), make_entry(2, 3)}, nullptr, true).is_ok());
  // Replacing entry 2 with a term below entry 1's would leave a log recover() refuses.
  EXPECT_DEATH((void)st->append({make_entry(2, 1)}, nullptr, true),
               "invariant failed: .*log terms never decrease");
  // A replacement with a term at least the previous entry's is fine.
  ASSERT_TRUE(st->append({make_entry(2, 2)}, nullptr, true).is_ok());
  EXPECT_EQ(st->last_index(), 2u);
}

TEST_F(LogStorageInvariant, TermsNeverDecreaseWithinAWrite) {
  TempDir tmp;
  auto st = open_log(tmp.path());
  EXPECT_DEATH((void)st->append({make_entry(1, 2), make_entry(2, 1)}, nullptr, true),
               "invariant failed: .*log terms never decrease");
}

TEST_F(LogStorageInvariant, TermsNeverDecreaseAfterTheSnapshot) {
  TempDir tmp;
  auto st = open_log(tmp.path());
  ASSERT_TRUE(st->save_snapshot(SnapshotMeta{10, 5, {}}, "snap").is_ok());
  ASSERT_EQ(st->first_index(), 11u);
  EXPECT_DEATH((void)st->append({make_entry(11, 4)}, nullptr, true),
               "invariant failed: .*log terms never decrease");
  ASSERT_TRUE(st->append({make_entry(11, 5)}, nullptr, true).is_ok());
}

}  // namespace
}  // namespace zkraft::consensus
