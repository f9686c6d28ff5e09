// Unit tests for zk_load's pure parts: percentile/gap arithmetic, the --servers parser, op names,
// the mixed workload's --mix parser and draw, and where a run's window ends.

#include <gtest/gtest.h>

#include "tools/load_bench/latency_stats.h"
#include "tools/load_bench/load_ops.h"
#include "tools/load_bench/load_worker.h"
#include "tools/load_bench/zk_connection.h"

namespace zkraft::tools {
namespace {

TEST(LatencyStats, NearestRankPercentiles) {
  std::vector<uint32_t> us;
  for (uint32_t i = 1000; i >= 1; --i) us.push_back(i * 1000);  // 1..1000 ms, reversed
  LatencySummary s = summarize(us);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_DOUBLE_EQ(s.p50_ms, 500.0);
  EXPECT_DOUBLE_EQ(s.p99_ms, 990.0);
  EXPECT_DOUBLE_EQ(s.p999_ms, 999.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 1000.0);
  EXPECT_DOUBLE_EQ(s.mean_ms, 500.5);
}

TEST(LatencyStats, SingleSampleAndEmpty) {
  std::vector<uint32_t> one{2500};
  LatencySummary s = summarize(one);
  EXPECT_DOUBLE_EQ(s.p50_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.p999_ms, 2.5);
  std::vector<uint32_t> none;
  EXPECT_EQ(summarize(none).count, 0u);
}

TEST(LatencyStats, LargestGapFindsTheWidestHoleInUnsortedTimes) {
  std::vector<int64_t> t{5000, 1000, 2000, 250000, 3000, 260000};
  Gap g = largest_gap(t);
  EXPECT_DOUBLE_EQ(g.length_ms, 245.0);
  EXPECT_EQ(g.from_unix_us, 5000);
  EXPECT_EQ(g.to_unix_us, 250000);
  std::vector<int64_t> single{7};
  EXPECT_DOUBLE_EQ(largest_gap(single).length_ms, 0.0);
}

TEST(ParseServers, ListWithDefaultPort) {
  std::vector<HostPort> s;
  ASSERT_TRUE(parse_servers("127.0.0.1:2181,localhost,203.0.0.2:2999", s));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].to_string(), "127.0.0.1:2181");
  EXPECT_EQ(s[1].to_string(), "localhost:2181");
  EXPECT_EQ(s[2].port, 2999);
}

TEST(ParseServers, RejectsBadPortsAndEmptyLists) {
  std::vector<HostPort> s;
  EXPECT_FALSE(parse_servers("h:0", s));
  EXPECT_FALSE(parse_servers("h:70000", s));
  EXPECT_FALSE(parse_servers("h:abc", s));
  EXPECT_FALSE(parse_servers(":2181", s));
  EXPECT_FALSE(parse_servers("", s));
}

TEST(LoadOps, NamesRoundTripAndUnknownIsRejected) {
  for (LoadOp op : {LoadOp::kCreate, LoadOp::kCreateSeq, LoadOp::kSet, LoadOp::kGet,
                    LoadOp::kExists, LoadOp::kList, LoadOp::kDelete, LoadOp::kMixed,
                    LoadOp::kChurn, LoadOp::kWatch}) {
    ASSERT_EQ(parse_op(op_name(op)), op) << op_name(op);
  }
  EXPECT_FALSE(parse_op("getChildren").has_value());
  EXPECT_EQ(parse_op("createseq"), LoadOp::kCreateSeq);
}

TEST(LoadMix, DefaultIsTheIssuesMix) {
  Mix m;
  EXPECT_EQ(m.total(), 100);
  std::string why;
  auto parsed = parse_mix("create=1,set=8,get=45,list=45,delete=1", why);
  ASSERT_TRUE(parsed.has_value()) << why;
  EXPECT_EQ(parsed->create, m.create);
  EXPECT_EQ(parsed->set, m.set);
  EXPECT_EQ(parsed->get, m.get);
  EXPECT_EQ(parsed->list, m.list);
  EXPECT_EQ(parsed->del, m.del);
  EXPECT_EQ(parsed->exists, 0);
}

TEST(LoadMix, DrawsFollowTheWeightsInOrder) {
  std::string why;
  auto m = parse_mix("create=1,set=8,get=45,list=45,delete=1", why);
  ASSERT_TRUE(m.has_value());
  std::map<LoadOp, int> seen;
  for (int d = 0; d < m->total(); ++d) ++seen[pick(*m, d)];
  EXPECT_EQ(seen[LoadOp::kCreate], 1);
  EXPECT_EQ(seen[LoadOp::kSet], 8);
  EXPECT_EQ(seen[LoadOp::kGet], 45);
  EXPECT_EQ(seen[LoadOp::kList], 45);
  EXPECT_EQ(seen[LoadOp::kDelete], 1);
  EXPECT_EQ(pick(*m, 0), LoadOp::kCreate);
  EXPECT_EQ(pick(*m, 1), LoadOp::kSet);
  EXPECT_EQ(pick(*m, 99), LoadOp::kDelete);
  auto only_exists = parse_mix("exists=3", why);
  ASSERT_TRUE(only_exists.has_value());
  EXPECT_EQ(pick(*only_exists, 2), LoadOp::kExists);
}

TEST(LoadMix, RejectsUnknownNamesBadWeightsAndEmptyMixes) {
  std::string why;
  EXPECT_FALSE(parse_mix("create=1,rename=2", why).has_value());
  EXPECT_NE(why.find("rename"), std::string::npos);
  EXPECT_FALSE(parse_mix("set=-1,get=2", why).has_value());
  EXPECT_FALSE(parse_mix("set=x", why).has_value());
  EXPECT_FALSE(parse_mix("set=5x", why).has_value());
  EXPECT_FALSE(parse_mix("set", why).has_value());
  EXPECT_FALSE(parse_mix("set=0,get=0", why).has_value());
  EXPECT_FALSE(parse_mix("", why).has_value());
}

TEST(CreateSeqParent, RootByDefaultElseEveryGroupInTurn) {
  LoadOptions opt;
  opt.root = "/t";
  opt.sessions = 3;
  EXPECT_EQ(createseq_parent(opt, 2, 7), "/t");
  opt.parents = 4;
  // Slot = nth * sessions + index: sessions 0..2 taking turns cover g0..g3 evenly.
  std::map<std::string, int> seen;
  for (uint64_t nth = 0; nth < 4; ++nth) {
    for (int i = 0; i < 3; ++i) ++seen[createseq_parent(opt, i, nth)];
  }
  ASSERT_EQ(seen.size(), 4u);
  for (auto& [parent, n] : seen) EXPECT_EQ(n, 3) << parent;
  EXPECT_EQ(createseq_parent(opt, 1, 1), "/t/g0");  // slot 4
}

TEST(LoadShared, WindowEndsEarlyOnlyWhenAPoolRanOut) {
  LoadShared s;
  s.measure_from = Clock::time_point(std::chrono::seconds(10));
  s.measure_until = Clock::time_point(std::chrono::seconds(20));
  EXPECT_EQ(s.window_end(), s.measure_until);
  s.exhausted_at_ns = std::chrono::nanoseconds(std::chrono::seconds(15)).count();
  EXPECT_EQ(s.window_end(), Clock::time_point(std::chrono::seconds(15)));
  s.exhausted_at_ns = std::chrono::nanoseconds(std::chrono::seconds(25)).count();
  EXPECT_EQ(s.window_end(), s.measure_until);
}

}  // namespace
}  // namespace zkraft::tools
