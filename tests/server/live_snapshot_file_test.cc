// LiveSnapshotFile with a real file: the pieces land in order with their size and CRC, a full
// queue is reported and its room announced, a write error reaches `done`, and a file that was
// not finished is removed.

#include "server/live_snapshot_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "consensus/storage_crc32c.h"
#include "jute/errors.h"
#include "tree/znode_tree.h"

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

TEST(LiveSnapshotFile, WrittenPiecesComeBackEmptyWithTheirCapacityAtMostKRoomOfThemUntilTheEnd) {
  const std::string dir = temp_dir();
  consensus::SnapshotFileTarget target{3, dir + "/snap-3", 1 << 20};
  Outcome out;
  std::string all;
  {
    LiveSnapshotFile file(target, [] {}, out.done());
    const size_t none = std::string().capacity();  // the short-string buffer: no heap
    EXPECT_EQ(file.spare_piece().capacity(), none);  // nothing written yet
    std::string first(1 << 20, 'a');
    all += first;
    ASSERT_TRUE(file.push(std::move(first)));
    std::string spare;
    for (int i = 0; i < 3000 && spare.capacity() == none; ++i) {
      spare = file.spare_piece();
      if (spare.capacity() == none) std::this_thread::sleep_for(1ms);
    }
    ASSERT_GE(spare.capacity(), size_t{1} << 20);
    EXPECT_TRUE(spare.empty());
    // The next piece is made in it, as the state thread does.
    jute::Writer w;
    w.reset(std::move(spare));
    w.write_raw(std::string(1000, 'b'));
    EXPECT_GE(w.bytes().capacity(), size_t{1} << 20);
    all += w.bytes();
    file.push(w.take());
    for (int i = 0; i < 20; ++i) {
      std::string piece(4096, static_cast<char>('c' + i % 20));
      all += piece;
      file.push(std::move(piece));
    }
    // Written pieces are kept up to kRoomPieces, never more.
    size_t most = 0;
    for (int i = 0; i < 3000 && most < LiveSnapshotFile::kRoomPieces; ++i) {
      most = std::max(most, file.spare_count());
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(most, LiveSnapshotFile::kRoomPieces);
    std::this_thread::sleep_for(20ms);  // the rest of the 22 pieces are written meanwhile
    EXPECT_EQ(file.spare_count(), LiveSnapshotFile::kRoomPieces);
    file.finish();
    auto f = out.promise.get_future();
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    EXPECT_EQ(f.get().first, 0);
    // Once the file is done none is kept: the next snapshot is far away.
    EXPECT_EQ(file.spare_count(), 0u);
    EXPECT_EQ(file.spare_piece().capacity(), none);
  }
  EXPECT_EQ(read_file(target.path), all);
  std::filesystem::remove_all(dir);
}

// A tree's live snapshot, one piece per step, and the check begin_live_snapshot gave for it.
struct TreeSnapshot {
  std::vector<std::string> pieces;
  std::optional<tree::LiveSnapshotCheck> check;
};
TreeSnapshot snapshot_of_a_tree() {
  tree::ZnodeTree t;
  TreeSnapshot out;
  std::vector<tree::WatchTrigger> triggers;
  std::string created;
  for (int i = 0; i < 100; ++i) {
    tree::TxnContext ctx;
    ctx.zxid = i + 1;
    jute::Buffer data;
    data.bytes = "v" + std::to_string(i);
    if (t.create(ctx, "/n" + std::to_string(i), data, {{jute::perms::kAll, {"world", "anyone"}}}, 0, -1, created,
                 nullptr, triggers) != jute::err::kOk) {
      return out;  // no pieces: the caller's size check fails
    }
  }
  jute::Writer w;
  out.check = t.begin_live_snapshot(w);
  for (bool done = false; !done;) {
    done = t.continue_live_snapshot(w, 9);
    out.pieces.push_back(w.take());
    w.clear();
  }
  return out;
}

// With the tree's check, the writer thread runs every piece through it: a snapshot that is the
// tree at its start is written; one that is not stops the process before it is reported written.
TEST(LiveSnapshotFile, ChecksTheTreesSnapshotAndStopsTheProcessIfItIsNotTheStart) {
  const std::string dir = temp_dir();
  {
    TreeSnapshot snap = snapshot_of_a_tree();
    ASSERT_GT(snap.pieces.size(), 5u);
    consensus::SnapshotFileTarget target{8, dir + "/snap-checked", 1 << 16};
    Outcome out;
    LiveSnapshotFile file(target, [] {}, out.done(), snap.check);
    for (auto& p : snap.pieces) file.push(p);
    file.finish();
    auto f = out.promise.get_future();
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    EXPECT_EQ(f.get().first, 0);
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto write_a_snapshot_short_of_a_piece = [&dir] {
    TreeSnapshot snap = snapshot_of_a_tree();
    snap.pieces.erase(snap.pieces.begin() + 3);  // whole records, but not all of them
    consensus::SnapshotFileTarget target{9, dir + "/snap-short", 1 << 16};
    Outcome out;
    LiveSnapshotFile file(target, [] {}, out.done(), snap.check);
    for (auto& p : snap.pieces) file.push(p);
    file.finish();
    out.promise.get_future().wait_for(30s);
  };
  EXPECT_DEATH(write_a_snapshot_short_of_a_piece(), "a live snapshot holds the tree as it was at its start");
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
