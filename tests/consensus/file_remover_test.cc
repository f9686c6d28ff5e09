// FileRemover: the removals happen on its thread, in order, all of them by the time wait_idle()
// or the destructor returns, and one that fails does not stop the rest. shrink_in_steps takes a
// large file down before its removal.

#include "consensus/file_remover.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zkraft::consensus {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("file_remover_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

std::string make_file(const fs::path& dir, const std::string& name) {
  const fs::path p = dir / name;
  std::ofstream(p) << "bytes";
  return p.string();
}

FileRemover::RemoveFn remove_with_fs() {
  return [](const std::string& path) {
    std::error_code ec;
    return fs::remove(path, ec) ? std::string() : (ec ? ec.message() : std::string("no such file"));
  };
}

TEST(ShrinkInSteps, TakesAFileDownToOneStepAndLeavesTheRestToTheRemoval) {
  TempDir dir;
  const std::string path = (dir.path / "big").string();
  {
    std::ofstream out(path, std::ios::binary);
    const std::string block(1 << 20, 'x');
    for (int i = 0; i < 10; ++i) out << block;  // 10 MiB
  }
  shrink_in_steps(path, 4 << 20, std::chrono::milliseconds(0));
  EXPECT_EQ(fs::file_size(path), 2u << 20) << "10 MiB less two steps of 4 MiB";
  shrink_in_steps(path, 4 << 20, std::chrono::milliseconds(0));
  EXPECT_EQ(fs::file_size(path), 2u << 20) << "a file of one step or less is left as it is";
  // What it cannot stat, or is not a file, it leaves alone.
  shrink_in_steps((dir.path / "missing").string(), 4 << 20, std::chrono::milliseconds(0));
  shrink_in_steps(dir.path.string(), 1, std::chrono::milliseconds(0));
  EXPECT_TRUE(fs::is_directory(dir.path));
}

TEST(FileRemover, RemovesOnItsOwnThreadInOrder) {
  std::mutex mu;
  std::vector<std::string> seen;
  std::thread::id remover_thread;
  {
    FileRemover r([&](const std::string& path) {
      std::lock_guard lock(mu);
      seen.push_back(path);
      remover_thread = std::this_thread::get_id();
      return std::string();
    });
    for (const char* p : {"a", "b", "c"}) r.remove(p);
    r.wait_idle();
    std::lock_guard lock(mu);
    EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_NE(remover_thread, std::this_thread::get_id());
  }
}

TEST(FileRemover, WaitIdleReturnsOnceTheFilesAreGone) {
  TempDir dir;
  FileRemover r(remove_with_fs());
  std::vector<std::string> files;
  for (int i = 0; i < 20; ++i) files.push_back(make_file(dir.path, "f" + std::to_string(i)));
  for (const auto& f : files) r.remove(f);
  r.wait_idle();
  for (const auto& f : files) EXPECT_FALSE(fs::exists(f)) << f;
  r.wait_idle();  // with nothing queued it returns at once
}

TEST(FileRemover, TheDestructorFinishesWhatIsQueued) {
  TempDir dir;
  std::vector<std::string> files;
  for (int i = 0; i < 50; ++i) files.push_back(make_file(dir.path, "g" + std::to_string(i)));
  {
    FileRemover r(remove_with_fs());
    for (const auto& f : files) r.remove(f);
  }
  for (const auto& f : files) EXPECT_FALSE(fs::exists(f)) << f;
}

TEST(FileRemover, AFailedRemovalDoesNotStopTheRest) {
  TempDir dir;
  const std::string present = make_file(dir.path, "present");
  FileRemover r(remove_with_fs());
  r.remove((dir.path / "missing").string());  // fails: logged, and the next one still goes
  r.remove(present);
  r.wait_idle();
  EXPECT_FALSE(fs::exists(present));
}

}  // namespace
}  // namespace zkraft::consensus
