// LiveSnapshotFile with a real file: the pieces land in order with their size and CRC, a full
// queue is reported and its room announced, a write error reaches `done`, and a file that was
// not finished is removed.

#include "server/live_snapshot_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "consensus/storage_crc32c.h"

namespace zkraft::server {
namespace {

using namespace std::chrono_literals;

std::string temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("zkraft-live-file-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Outcome {
  std::promise<std::pair<int, consensus::SnapshotFileWritten>> promise;
  LiveSnapshotFile::Done done() {
    return [this](int err, const consensus::SnapshotFileWritten& w) { promise.set_value({err, w}); };
  }
};

TEST(LiveSnapshotFile, WritesThePiecesInOrderAndReportsSizeAndChecksum) {
  const std::string dir = temp_dir();
  consensus::SnapshotFileTarget target{7, dir + "/snap-1", 1 << 16};
  std::atomic<int> rooms{0};
  Outcome out;
  std::string all;
  {
    LiveSnapshotFile file(target, [&] { ++rooms; }, out.done());
    bool reported_full = false;
    for (int i = 0; i < 40; ++i) {
      std::string piece(10000 + i, static_cast<char>('a' + i % 26));
      all += piece;
      if (!file.push(std::move(piece))) reported_full = true;
    }
    file.finish();
    auto f = out.promise.get_future();
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    auto [err, written] = f.get();
    EXPECT_EQ(err, 0);
    EXPECT_EQ(written.token, 7u);
    EXPECT_EQ(written.size, all.size());
    EXPECT_EQ(written.crc32c, consensus::crc32c_extend(0, all.data(), all.size()));
    // Every "full" was followed by a room once the writer caught up.
    if (reported_full) EXPECT_GE(rooms.load(), 1);
  }
  EXPECT_EQ(read_file(target.path), all);
  std::filesystem::remove_all(dir);
}

TEST(LiveSnapshotFile, AQueueOfKRoomPiecesIsFull) {
  const std::string dir = temp_dir();
  consensus::SnapshotFileTarget target{1, dir + "/snap-2", 1 << 20};
  Outcome out;
  std::promise<void> room;
  // The writer takes pieces as fast as it can, so push until one push reports the queue full;
  // big pieces keep it busy long enough.
  LiveSnapshotFile file(target, [&] { room.set_value(); }, out.done());
  bool full = false;
  for (int i = 0; i < 1000 && !full; ++i) full = !file.push(std::string(4 << 20, 'x'));
  ASSERT_TRUE(full);
  EXPECT_EQ(room.get_future().wait_for(30s), std::future_status::ready);
  file.finish();
  EXPECT_EQ(out.promise.get_future().get().first, 0);
  std::filesystem::remove_all(dir);
}

TEST(LiveSnapshotFile, AnUnfinishedFileIsRemovedAndAnUnwritableOneReportsItsError) {
  const std::string dir = temp_dir();
  consensus::SnapshotFileTarget target{1, dir + "/snap-3", 1 << 20};
  {
    Outcome out;
    LiveSnapshotFile file(target, [] {}, out.done());
    file.push("some bytes");
  }  // never finished
  for (int i = 0; i < 100 && std::filesystem::exists(target.path); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(std::filesystem::exists(target.path));

  consensus::SnapshotFileTarget nowhere{1, dir + "/no-such-dir/snap", 1 << 20};
  Outcome out;
  LiveSnapshotFile file(nowhere, [] {}, out.done());
  file.push("bytes");
  file.finish();
  EXPECT_EQ(out.promise.get_future().get().first, ENOENT);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zkraft::server
