#pragma once
// Shared by the peer transport tests: polling for what real sockets and threads deliver.

#include <chrono>
#include <thread>

namespace zkraft::consensus::testing {

// Polls `pred` every 2 ms until it holds (true) or `limit` passes (false).
template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace zkraft::consensus::testing
