// BatchQueue: the hand-off between threads. The consumer here is a real io_context that the test
// thread runs itself, so every drain happens at a point the test chooses (no sleeping).

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <thread>
#include <vector>

#include "server/batch_queue.h"

namespace zkraft::server {
namespace {

struct Consumer {
  boost::asio::io_context io;
  std::vector<std::vector<int>> batches;
  BatchQueue<int> queue{io.get_executor(), [this](std::vector<int>& b) { batches.push_back(b); }};

  std::vector<int> all() const {
    std::vector<int> out;
    for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
    return out;
  }
};

TEST(BatchQueue, PushesBeforeTheConsumerRunsAreDrainedInOneBatchInOrder) {
  Consumer c;
  std::vector<int> want;
  for (int i = 0; i < 100; ++i) {
    c.queue.push(i);
    want.push_back(i);
  }
  EXPECT_TRUE(c.batches.empty());  // nothing runs on the producer's thread
  EXPECT_EQ(c.io.run(), 1u);       // one posted handler for the whole batch
  ASSERT_EQ(c.batches.size(), 1u);
  EXPECT_EQ(c.batches[0], want);
}

TEST(BatchQueue, PushesFromAnotherThreadArriveInTheirOrder) {
  Consumer c;
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) c.queue.push(i);
  });
  producer.join();
  c.io.run();
  std::vector<int> want;
  for (int i = 0; i < 1000; ++i) want.push_back(i);
  EXPECT_EQ(c.all(), want);
  EXPECT_EQ(c.batches.size(), 1u);
}

TEST(BatchQueue, APushAfterADrainStartsANewBatch) {
  Consumer c;
  c.queue.push(1);
  c.io.run();
  c.io.restart();
  c.queue.push(2);
  c.queue.push(3);
  c.io.run();
  ASSERT_EQ(c.batches.size(), 2u);
  EXPECT_EQ(c.batches[0], std::vector<int>{1});
  EXPECT_EQ(c.batches[1], (std::vector<int>{2, 3}));
}

TEST(BatchQueue, AnItemPushedByTheDrainItselfGoesToTheNextBatch) {
  boost::asio::io_context io;
  std::vector<std::vector<int>> batches;
  BatchQueue<int>* self = nullptr;
  BatchQueue<int> q(io.get_executor(), [&](std::vector<int>& b) {
    batches.push_back(b);
    if (b.front() == 1) self->push(2);
  });
  self = &q;
  q.push(1);
  EXPECT_EQ(io.run(), 2u);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], std::vector<int>{2});
}

TEST(BatchQueue, PushAllAppendsAfterQueuedItemsAndEmptiesTheProducersVector) {
  Consumer c;
  c.queue.push(1);
  std::vector<int> mine{2, 3};
  c.queue.push_all(mine);
  EXPECT_TRUE(mine.empty());
  std::vector<int> more{4};
  c.queue.push_all(more);
  std::vector<int> none;
  c.queue.push_all(none);
  EXPECT_EQ(c.io.run(), 1u);
  ASSERT_EQ(c.batches.size(), 1u);
  EXPECT_EQ(c.batches[0], (std::vector<int>{1, 2, 3, 4}));
}

TEST(BatchQueue, NothingIsDrainedAfterClose) {
  Consumer c;
  c.queue.push(1);  // queued, then closed before the consumer ran
  c.queue.close();
  c.queue.push(2);  // dropped
  std::vector<int> v{3};
  c.queue.push_all(v);
  c.io.run();
  EXPECT_TRUE(c.all().empty());
}

TEST(BatchQueue, DestroyingTheQueueBeforeItsDrainRunsDropsTheItems) {
  boost::asio::io_context io;
  int drained = 0;
  {
    BatchQueue<int> q(io.get_executor(), [&](std::vector<int>& b) { drained += static_cast<int>(b.size()); });
    q.push(1);
  }
  io.run();  // the posted handler outlives the queue and must not touch it
  EXPECT_EQ(drained, 0);
}

}  // namespace
}  // namespace zkraft::server
