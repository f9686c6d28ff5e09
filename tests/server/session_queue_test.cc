// SessionQueue: per-session FIFO, outcomes found by sequence number, reply-order invariants, and
// the flow-control predicate.

#include <gtest/gtest.h>

#include "server/session_queue.h"

namespace zkraft::server {
namespace {

QueuedRequest read(int32_t xid) {
  QueuedRequest r;
  r.xid = xid;
  r.state = QueuedRequest::Read{};
  return r;
}
QueuedRequest in_flight(int32_t xid, uint64_t request_id, bool close_after = false) {
  QueuedRequest r;
  r.xid = xid;
  r.state = QueuedRequest::InFlight{request_id, close_after, {}};
  return r;
}
QueuedRequest answered(int32_t xid, std::string reply) {
  QueuedRequest r;
  r.xid = xid;
  r.state = QueuedRequest::Answered{std::move(reply), false};
  return r;
}

TEST(SessionQueue, RequestsLeaveInArrivalOrderWithConsecutiveSequenceNumbers) {
  SessionQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.push(read(1)), 1u);
  EXPECT_EQ(q.push(answered(2, "r2")), 2u);
  EXPECT_EQ(q.push(read(3)), 3u);
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.front_seq(), 1u);
  EXPECT_EQ(q.pop_front().xid, 1);
  EXPECT_EQ(q.front_seq(), 2u);
  EXPECT_EQ(q.pop_front().xid, 2);
  EXPECT_EQ(q.pop_front().xid, 3);
  EXPECT_TRUE(q.empty());
  // Numbering goes on where it stopped: a later outcome can never match an earlier request.
  EXPECT_EQ(q.push(read(4)), 4u);
  EXPECT_EQ(q.front_seq(), 4u);
}

TEST(SessionQueue, FindNamesExactlyTheQueuedRequests) {
  SessionQueue q;
  q.push(read(10));
  q.push(read(11));
  q.push(read(12));
  ASSERT_NE(q.find(2), nullptr);
  EXPECT_EQ(q.find(2)->xid, 11);
  EXPECT_EQ(q.find(0), nullptr);
  EXPECT_EQ(q.find(4), nullptr);
  q.pop_front();
  EXPECT_EQ(q.find(1), nullptr);  // gone
  ASSERT_NE(q.find(3), nullptr);
  EXPECT_EQ(q.find(3)->xid, 12);
}

TEST(SessionQueue, OutcomesArrivingOutOfOrderStillLeaveInRequestOrder) {
  SessionQueue q;
  auto s1 = q.push(in_flight(1, 101));
  auto s2 = q.push(in_flight(2, 102));
  auto s3 = q.push(in_flight(3, 103));
  EXPECT_TRUE(q.answer(s3, "third", false));
  EXPECT_TRUE(std::holds_alternative<QueuedRequest::InFlight>(q.front().state));  // head still waits
  EXPECT_TRUE(q.answer(s1, "first", false));
  EXPECT_TRUE(q.answer(s2, "second", false));
  std::vector<std::pair<int32_t, std::string>> out;
  while (!q.empty()) {
    QueuedRequest r = q.pop_front();
    out.emplace_back(r.xid, std::get<QueuedRequest::Answered>(r.state).reply);
  }
  std::vector<std::pair<int32_t, std::string>> want{{1, "first"}, {2, "second"}, {3, "third"}};
  EXPECT_EQ(out, want);
}

TEST(SessionQueue, AnswerOfARequestNoLongerQueuedIsRefused) {
  SessionQueue q;
  auto s = q.push(in_flight(1, 1));
  EXPECT_TRUE(q.answer(s, "r", false));
  q.pop_front();
  EXPECT_FALSE(q.answer(s, "again", false));
  EXPECT_FALSE(q.answer(s + 5, "future", false));
}

TEST(SessionQueue, InFlightCountsRequestsAwaitingAnOutcome) {
  SessionQueue q;
  q.push(read(1));
  auto a = q.push(in_flight(2, 1));
  auto b = q.push(in_flight(3, 2));
  q.push(answered(4, "x"));
  EXPECT_EQ(q.in_flight(), 2u);
  q.answer(b, "b", false);
  EXPECT_EQ(q.in_flight(), 1u);
  q.answer(a, "a", false);
  EXPECT_EQ(q.in_flight(), 0u);
  EXPECT_EQ(q.size(), 4u);
}

TEST(SessionQueue, CloseAfterOfTheRequestSurvivesItsAnswer) {
  SessionQueue q;
  auto s = q.push(in_flight(1, 1, /*close_after=*/true));  // closeSession
  q.answer(s, "bye", false);
  EXPECT_TRUE(std::get<QueuedRequest::Answered>(q.pop_front().state).close_after);
  auto t = q.push(in_flight(2, 2));
  q.answer(t, "expired", true);  // the outcome may ask for a close too
  EXPECT_TRUE(std::get<QueuedRequest::Answered>(q.pop_front().state).close_after);
}

TEST(SessionQueueDeathTest, PopOfAnInFlightHeadDies) {
  SessionQueue q;
  q.push(in_flight(1, 1));
  q.push(answered(2, "r"));
  EXPECT_DEATH(q.pop_front(), "reply order");
}

TEST(SessionQueueDeathTest, AnsweringARequestTwiceDies) {
  SessionQueue q;
  auto s = q.push(in_flight(1, 1));
  q.answer(s, "once", false);
  EXPECT_DEATH(q.answer(s, "twice", false), "answered twice");
}

TEST(SessionQueueDeathTest, AnsweringARequestThatNeverWaitedDies) {
  SessionQueue q;
  auto s = q.push(read(1));
  EXPECT_DEATH(q.answer(s, "r", false), "answered twice");
}

TEST(SessionQueueDeathTest, PopOfAnEmptyQueueDies) {
  SessionQueue q;
  EXPECT_DEATH(q.pop_front(), "empty");
}

TEST(FlowLimits, StopReadingAtThePerConnectionOrTheGlobalLimit) {
  FlowLimits limits{3, 10};
  EXPECT_FALSE(over_flow_limits(2, 9, limits));
  EXPECT_TRUE(over_flow_limits(3, 3, limits));   // this connection has its share
  EXPECT_TRUE(over_flow_limits(0, 10, limits));  // the server as a whole is full
  EXPECT_FALSE(over_flow_limits(0, 0, limits));
}

}  // namespace
}  // namespace zkraft::server
