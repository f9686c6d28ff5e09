// zkraft-ctl slow-log's pure part: the `slow` word's answer parsed (and refused when it is not
// that), the lines' figures, what --follow prints next, and the text and JSON forms.

#include "tools/ctl/slow_log.h"

#include <gtest/gtest.h>

namespace zkraft::tools {
namespace {

const char* kAnswer =
    "7\t1796117167724\tslow request: session 0x100000001 xid 12 create /app/a b took 1200 ms: 2 ms "
    "to the state thread, 1190 ms in consensus, 8 ms waiting to be sent\n"
    "8\t1796117167800\tslow request: session 0x100000002 xid 3 sync took 40 ms: 0 ms to the state "
    "thread, 40 ms in consensus, 0 ms waiting to be sent\n";

TEST(SlowLog, ParsesEachLineWithItsFiguresAndAPathWithSpaces) {
  auto got = parse_slow_requests(kAnswer, "h1:2181");
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), 2u);
  const SlowRequest& a = (*got)[0];
  EXPECT_EQ(a.endpoint, "h1:2181");
  EXPECT_EQ(a.seq, 7u);
  EXPECT_EQ(a.wall_ms, 1796117167724);
  EXPECT_TRUE(a.parsed);
  EXPECT_EQ(a.session, "0x100000001");
  EXPECT_EQ(a.xid, 12);
  EXPECT_EQ(a.op, "create");
  EXPECT_EQ(a.path, "/app/a b");
  EXPECT_EQ((std::vector<int64_t>{a.total_ms, a.to_state_ms, a.consensus_ms, a.waiting_ms}),
            (std::vector<int64_t>{1200, 2, 1190, 8}));
  EXPECT_EQ((*got)[1].op, "sync");
  EXPECT_EQ((*got)[1].path, "");
}

TEST(SlowLog, AnEmptyAnswerIsNoSlowRequestsAndARefusalIsNotAnAnswer) {
  auto none = parse_slow_requests("", "h");
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(parse_slow_requests("slow is not executed because it is not in the whitelist.\n", "h"));
  EXPECT_FALSE(parse_slow_requests("This ZooKeeper instance is not currently serving requests\n", "h"));
}

TEST(SlowLog, FollowPrintsOnlyWhatIsNewer) {
  auto got = *parse_slow_requests(kAnswer, "h");
  EXPECT_EQ(newer_than(got, 0).size(), 2u);
  ASSERT_EQ(newer_than(got, 7).size(), 1u);
  EXPECT_EQ(newer_than(got, 7)[0].seq, 8u);
  EXPECT_TRUE(newer_than(got, 8).empty());
}

TEST(SlowLog, TextAndJsonForms) {
  auto got = *parse_slow_requests(kAnswer, "h1:2181");
  EXPECT_EQ(slow_request_text(got[1]),
            "h1:2181 2026-12-01T09:26:07.800Z #8 slow request: session 0x100000002 xid 3 sync took 40 "
            "ms: 0 ms to the state thread, 40 ms in consensus, 0 ms waiting to be sent");
  nlohmann::json j = slow_request_json(got[0]);
  EXPECT_EQ(j["seq"], 7);
  EXPECT_EQ(j["op"], "create");
  EXPECT_EQ(j["path"], "/app/a b");
  EXPECT_EQ(j["total_ms"], 1200);
  EXPECT_EQ(j["stages_ms"], (nlohmann::json{{"to_state_thread", 2}, {"consensus", 1190}, {"waiting_to_be_sent", 8}}));
  SlowRequest odd;
  odd.line = "something else";
  EXPECT_TRUE(slow_request_json(odd)["op"].is_null());
}

}  // namespace
}  // namespace zkraft::tools
