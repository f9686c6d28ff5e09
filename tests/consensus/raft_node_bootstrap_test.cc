// The bootstrap membership record: round trip, rejection of damaged files, first start wins.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "consensus/raft_node_bootstrap.h"
#include "tests/consensus/storage_test_util.h"

namespace zkraft::consensus::testing {
namespace {

TEST(RaftNodeBootstrap, EncodeDecodeRoundTrip) {
  for (const Membership& m : {Membership{{1, 2, 3}, {}}, Membership{{7}, {8, 9}}, Membership{{}, {}},
                              Membership{{18446744073709551615ull}, {}}}) {
    Membership back{{42}, {43}};
    ASSERT_TRUE(decode_bootstrap_membership(encode_bootstrap_membership(m), &back));
    EXPECT_EQ(back, m);
  }
}

TEST(RaftNodeBootstrap, RejectsMalformedText) {
  Membership m;
  EXPECT_FALSE(decode_bootstrap_membership("", &m));
  EXPECT_FALSE(decode_bootstrap_membership("voters 1 2\n", &m));
  EXPECT_FALSE(decode_bootstrap_membership("voters 1 x\nlearners\n", &m));
  EXPECT_FALSE(decode_bootstrap_membership("learners\nvoters 1\n", &m));
  EXPECT_FALSE(decode_bootstrap_membership("voters -1\nlearners\n", &m));
  EXPECT_FALSE(decode_bootstrap_membership("voters 99999999999999999999999\nlearners\n", &m));
  EXPECT_FALSE(decode_bootstrap_membership("voters 1\nlearners\nextra\n", &m));
}

TEST(RaftNodeBootstrap, FirstStartRecordsAndLaterStartsKeepIt) {
  TempDir dir;
  Membership out;
  std::string error;
  ASSERT_TRUE(load_or_record_bootstrap_membership(dir.path(), Membership{{1, 2, 3}, {}}, &out, &error)) << error;
  EXPECT_EQ(out, (Membership{{1, 2, 3}, {}}));
  // A later start with a different configured membership still gets the recorded one.
  ASSERT_TRUE(load_or_record_bootstrap_membership(dir.path(), Membership{{1, 2, 3, 4}, {5}}, &out, &error)) << error;
  EXPECT_EQ(out, (Membership{{1, 2, 3}, {}}));
}

TEST(RaftNodeBootstrap, DamagedRecordIsAnError) {
  TempDir dir;
  Membership out;
  std::string error;
  ASSERT_TRUE(load_or_record_bootstrap_membership(dir.path(), Membership{{1}, {}}, &out, &error));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    std::ofstream(entry.path(), std::ios::trunc) << "voters 1 zz\n";
  }
  EXPECT_FALSE(load_or_record_bootstrap_membership(dir.path(), Membership{{1}, {}}, &out, &error));
  EXPECT_NE(error.find("bootstrap membership"), std::string::npos) << error;
}

}  // namespace
}  // namespace zkraft::consensus::testing
