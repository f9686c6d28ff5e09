// The slow-request log's line: the threshold, the stages, the path of reads and writes.

#include "server/slow_request_log.h"

#include <gtest/gtest.h>

#include "jute/archive.h"
#include "jute/opcodes.h"
#include "jute/requests.h"

namespace zkraft::server {
namespace {

namespace op = jute::op;

TEST(SlowRequestLog, AWriteUnderTheThresholdIsNotLogged) {
  QueuedRequest p;
  p.op = op::kSetData;
  p.received_ms = 1000;
  p.handled_ms = 1001;
  p.answered_ms = 1200;
  EXPECT_FALSE(slow_request_line(p, 0x1234, 1299, 300).has_value());
  EXPECT_FALSE(slow_request_line(p, 0x1234, 5000, 0).has_value());  // 0: off
}

TEST(SlowRequestLog, AWriteNamesItsPathAndEveryStage) {
  QueuedRequest p;
  p.xid = 7;
  p.op = op::kSetData;
  p.received_ms = 1000;
  p.handled_ms = 1004;
  p.answered_ms = 1350;
  p.path = "/locks/a";
  p.state = QueuedRequest::Answered{};
  auto line = slow_request_line(p, 0x1234, 1360, 300);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line, "slow request: session 0x1234 xid 7 setData /locks/a took 360 ms: 4 ms to the "
                   "state thread, 346 ms in consensus, 10 ms waiting to be sent");
}

TEST(SlowRequestLog, AReadSpendsNothingInConsensus) {
  QueuedRequest p;
  p.xid = 3;
  p.op = op::kGetData;
  p.received_ms = 1000;
  p.handled_ms = 1001;
  p.state = QueuedRequest::Read{jute::GetDataRequest{"/big", false}};
  auto line = slow_request_line(p, 0x99, 2001, 1000);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line, "slow request: session 0x99 xid 3 getData /big took 1001 ms: 1 ms to the state "
                   "thread, 0 ms in consensus, 1000 ms waiting to be sent");
}

TEST(SlowRequestLog, WritePathIsTheRecordsFirstString) {
  jute::Writer w;
  jute::encode(w, jute::SetDataRequest{"/a/b", {"x", false}, -1});
  EXPECT_EQ(write_path(op::kSetData, w.bytes()), "/a/b");
  EXPECT_EQ(write_path(op::kMulti, w.bytes()), "");
  EXPECT_EQ(write_path(op::kSetData, "\x7f\xff"), "");  // truncated: no path, no crash
  EXPECT_EQ(write_path(op::kSetData, std::string("\x7f\xff\xff\xff", 4)), "");  // length past the end
}

TEST(SlowRequestLog, ReadPathCoversRecordsWithAndWithoutAPath) {
  EXPECT_EQ(read_path(jute::ExistsRequest{"/e", false}), "/e");
  EXPECT_EQ(read_path(jute::SetWatches{}), "");
}

TEST(SlowRequestLog, TheSlowWordListsTheLatestLinesWithSequenceAndTime) {
  ServerStats stats;
  EXPECT_EQ(render_slow_requests(stats.recent_slow_requests), "");
  for (uint64_t i = 1; i <= kRecentSlowRequests + 2; ++i) {
    ++stats.slow_requests;
    remember_slow_request(stats, "slow request: line " + std::to_string(i), 1000 + static_cast<int64_t>(i));
  }
  ASSERT_EQ(stats.recent_slow_requests.size(), kRecentSlowRequests);  // the oldest two dropped
  EXPECT_EQ(stats.recent_slow_requests.front().seq, 3u);
  const std::string text = render_slow_requests(stats.recent_slow_requests);
  EXPECT_EQ(text.substr(0, text.find('\n') + 1), "3\t1003\tslow request: line 3\n");
  EXPECT_TRUE(text.ends_with("258\t1258\tslow request: line 258\n"));
}

}  // namespace
}  // namespace zkraft::server
