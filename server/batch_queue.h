#pragma once
// BatchQueue<T>: the hand-off between two threads. Producers push items from any thread; the
// consumer's executor runs ONE drain handler per batch, which takes everything that accumulated
// since the last drain. While the consumer is busy, items pile up and cost one lock each, not one
// post each: under load a hand-off is one post per batch, not per request.
//
// Invariants: items are drained in push order; at most one drain is posted at a time; after
// close() nothing more is drained (items pushed later are dropped).

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace zkraft::server {

template <class T>
class BatchQueue {
 public:
  using Drain = std::function<void(std::vector<T>& batch)>;

  BatchQueue(boost::asio::any_io_executor consumer, Drain drain)
      : state_(std::make_shared<State>(std::move(consumer), std::move(drain))) {}
  ~BatchQueue() { close(); }
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  void push(T item) {
    bool post = false;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->closed) return;
      state_->items.push_back(std::move(item));
      post = !state_->posted;
      state_->posted = true;
    }
    if (post) schedule();
  }

  // Several items under one lock (one producer's batch).
  void push_all(std::vector<T>& items) {
    if (items.empty()) return;
    bool post = false;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->closed) return;
      if (state_->items.empty()) {
        state_->items.swap(items);
      } else {
        for (auto& i : items) state_->items.push_back(std::move(i));
      }
      post = !state_->posted;
      state_->posted = true;
    }
    items.clear();
    if (post) schedule();
  }

  // Stops draining; a drain already running finishes its batch.
  void close() {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->closed = true;
    state_->items.clear();
  }

 private:
  struct State {
    State(boost::asio::any_io_executor e, Drain d) : consumer(std::move(e)), drain(std::move(d)) {}
    boost::asio::any_io_executor consumer;
    Drain drain;
    std::mutex mu;
    std::vector<T> items;
    bool posted = false;
    bool closed = false;
  };

  void schedule() {
    boost::asio::post(state_->consumer, [s = state_] {
      std::vector<T> batch;
      {
        std::lock_guard<std::mutex> lock(s->mu);
        s->posted = false;
        if (s->closed) return;
        batch.swap(s->items);
      }
      s->drain(batch);
    });
  }

  std::shared_ptr<State> state_;
};

}  // namespace zkraft::server
