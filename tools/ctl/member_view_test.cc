// zkraft-ctl's pure part: parsing srvr and lgif, finding the leader, lag, the table and the JSON.

#include "tools/ctl/member_view.h"

#include <gtest/gtest.h>

namespace zkraft::tools {
namespace {

const char* kLgif =
    "first_log_idx\t1\nfirst_log_term\t1\nlast_log_idx\t120\nlast_log_term\t2\n"
    "last_committed_log_idx\t118\nleader_committed_log_idx\t120\ntarget_committed_log_idx\t120\n"
    "last_snapshot_idx\t100\n";

TEST(MemberView, SrvrGivesModeAndZxid) {
  MemberView m;
  parse_srvr("Zookeeper version: 3.9.4-zkraft\nLatency min/avg/max: 0/0.1/3\nZxid: 0x2a\nMode: follower\n", m);
  EXPECT_TRUE(m.serving);
  EXPECT_EQ(m.mode, "follower");
  EXPECT_EQ(m.zxid, "0x2a");
  MemberView n;
  parse_srvr("This ZooKeeper instance is not currently serving requests\n", n);
  EXPECT_FALSE(n.serving);
  EXPECT_EQ(n.mode, "");
}

TEST(MemberView, LgifParsesOrIsRefused) {
  auto log = parse_lgif(kLgif);
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->at("last_log_idx"), 120u);
  EXPECT_EQ(log->at("last_snapshot_idx"), 100u);
  EXPECT_FALSE(parse_lgif("lgif is not executed because it is not in the whitelist.\n").has_value());
  EXPECT_FALSE(parse_lgif("last_log_idx\tmany\n").has_value());
}

TEST(MemberView, LagIsTheLeadersLastIndexMinusAppliedNeverNegative) {
  std::vector<MemberView> ms(2);
  ms[0].endpoint = "a:1";
  ms[0].reachable = ms[0].serving = true;
  ms[0].mode = "leader";
  ms[0].log = *parse_lgif(kLgif);
  ms[1].endpoint = "b:2";
  ms[1].reachable = ms[1].serving = true;
  ms[1].mode = "follower";
  ms[1].log = ms[0].log;
  ms[1].log["last_committed_log_idx"] = 100;
  EXPECT_EQ(find_leader(ms), &ms[0]);
  EXPECT_EQ(lag_of(ms[1], &ms[0]), 20);
  EXPECT_EQ(lag_of(ms[0], &ms[0]), 2);
  ms[1].log["last_committed_log_idx"] = 130;  // polled after the leader moved on
  EXPECT_EQ(lag_of(ms[1], &ms[0]), 0);
  ms[1].log.clear();
  EXPECT_FALSE(lag_of(ms[1], &ms[0]).has_value());
  EXPECT_FALSE(lag_of(ms[0], nullptr).has_value());
}

TEST(MemberView, TableAndJsonShowEveryMember) {
  std::vector<MemberView> ms(2);
  ms[0].endpoint = "a:1";
  ms[0].reachable = ms[0].serving = true;
  ms[0].mode = "leader";
  ms[0].zxid = "0x78";
  ms[0].log = *parse_lgif(kLgif);
  ms[1].endpoint = "b:2";
  ms[1].error = "b:2: cannot connect: Connection refused";
  const std::string table = members_table(ms);
  EXPECT_EQ(table,
            "ENDPOINT  MODE         ZXID         APPLIED    COMMIT      LAST  SNAPSHOT     LAG\n"
            "a:1       leader       0x78             118       120       120       100       2\n"
            "b:2       unreachable  -                  -         -         -         -       -\n");
  auto j = members_json(ms);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["leader"], true);
  EXPECT_EQ(j[0]["lag"], 2);
  EXPECT_EQ(j[1]["reachable"], false);
  EXPECT_EQ(j[1]["error"], "b:2: cannot connect: Connection refused");
  EXPECT_FALSE(j[1].contains("lag"));
}

}  // namespace
}  // namespace zkraft::tools
