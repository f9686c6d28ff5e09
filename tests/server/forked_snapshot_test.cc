// ForkedSnapshot with real processes: the bytes arrive whole, the child sees the state as of the
// fork, a failing or killed child gives nullopt, and the child holds no descriptor of ours.

#include "server/forked_snapshot.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <future>

namespace zkraft::server {
namespace {

using namespace std::chrono_literals;

struct Result {
  std::promise<std::optional<std::string>> promise;
  std::future<std::optional<std::string>> future = promise.get_future();
  ForkedSnapshot::Done done() {
    return [this](std::optional<std::string> b) { promise.set_value(std::move(b)); };
  }
  std::optional<std::string> get() {
    EXPECT_EQ(future.wait_for(30s), std::future_status::ready);
    return future.get();
  }
};

TEST(ForkedSnapshot, DeliversEveryByteTheChildSerialised) {
  std::string big(5 << 20, '\0');  // far more than a pipe holds
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + (i >> 13));
  Result r;
  std::string error;
  auto child = ForkedSnapshot::start([&] { return big; }, r.done(), &error);
  ASSERT_TRUE(child) << error;
  auto bytes = r.get();
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(*bytes, big);
}

TEST(ForkedSnapshot, TheChildSeesTheStateAsOfTheFork) {
  std::string state = "before";
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  Result r;
  std::string error;
  // The child waits until the parent has changed its copy, then serialises its own.
  auto child = ForkedSnapshot::start(
      [&] {
        char c;
        (void)!::read(go[0], &c, 1);
        return state;
      },
      r.done(), &error);
  ASSERT_TRUE(child) << error;
  state = "after";
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  auto bytes = r.get();
  ::close(go[0]);
  ::close(go[1]);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(*bytes, "before");
}

TEST(ForkedSnapshot, AChildThatFailsGivesNothing) {
  Result r;
  std::string error;
  auto child = ForkedSnapshot::start([]() -> std::string { ::_exit(9); }, r.done(), &error);
  ASSERT_TRUE(child) << error;
  EXPECT_FALSE(r.get().has_value());
}

TEST(ForkedSnapshot, DestroyingItKillsAChildStillAtWork) {
  Result r;
  std::string error;
  auto child = ForkedSnapshot::start(
      [] {
        ::sleep(60);
        return std::string("late");
      },
      r.done(), &error);
  ASSERT_TRUE(child) << error;
  const auto t0 = std::chrono::steady_clock::now();
  child.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_FALSE(r.get().has_value());
}

TEST(ForkedSnapshot, TheChildHoldsNoDescriptorOfTheParent) {
  int fd = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: fork alone would keep it open
  ASSERT_GE(fd, 3);
  Result r;
  std::string error;
  auto child = ForkedSnapshot::start(
      [fd] { return std::string(::fcntl(fd, F_GETFD) == -1 ? "closed" : "open"); }, r.done(), &error);
  ASSERT_TRUE(child) << error;
  auto bytes = r.get();
  ::close(fd);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(*bytes, "closed");
}

}  // namespace
}  // namespace zkraft::server
