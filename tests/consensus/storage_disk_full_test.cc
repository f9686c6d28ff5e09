// A full disk under GroupCommitLog: the write that meets it (and everything behind it) waits,
// disk_full() says so, nothing fails; when space returns the writes complete and, read back from
// disk, every acknowledged entry is there. The Env tears the failing append (writes half of it),
// as a real ENOSPC can: without the reopen after it, LevelDB would keep appending behind the torn
// record and recovery would drop the acknowledged records that follow it.

#include <gtest/gtest.h>

#include <leveldb/env.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "consensus/group_commit_log.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using namespace std::chrono_literals;
using testing::make_entry;
using testing::TempDir;

// Files whose appends fail with ENOSPC's text (after writing half the data) while `full` is set;
// new files cannot be created then either.
class NoSpaceEnv : public leveldb::EnvWrapper {
 public:
  NoSpaceEnv() : leveldb::EnvWrapper(leveldb::Env::Default()) {}
  std::atomic<bool> full{false};
  std::atomic<int> failed_appends{0};

  leveldb::Status NewWritableFile(const std::string& f, leveldb::WritableFile** r) override {
    if (full) return no_space(f);
    leveldb::WritableFile* base = nullptr;
    leveldb::Status s = target()->NewWritableFile(f, &base);
    if (s.ok()) *r = new File(this, f, base);
    return s;
  }
  leveldb::Status NewAppendableFile(const std::string& f, leveldb::WritableFile** r) override {
    if (full) return no_space(f);
    leveldb::WritableFile* base = nullptr;
    leveldb::Status s = target()->NewAppendableFile(f, &base);
    if (s.ok()) *r = new File(this, f, base);
    return s;
  }

 private:
  static leveldb::Status no_space(const std::string& f) {
    return leveldb::Status::IOError(f, "No space left on device");
  }
  class File : public leveldb::WritableFile {
   public:
    File(NoSpaceEnv* env, std::string name, leveldb::WritableFile* base) : env_(env), name_(std::move(name)), base_(base) {}
    ~File() override { delete base_; }
    leveldb::Status Append(const leveldb::Slice& data) override {
      if (env_->full) {
        ++env_->failed_appends;
        base_->Append(leveldb::Slice(data.data(), data.size() / 2));  // torn
        base_->Flush();
        return no_space(name_);
      }
      return base_->Append(data);
    }
    leveldb::Status Close() override { return base_->Close(); }
    leveldb::Status Flush() override { return env_->full ? no_space(name_) : base_->Flush(); }
    leveldb::Status Sync() override { return env_->full ? no_space(name_) : base_->Sync(); }

   private:
    NoSpaceEnv* env_;
    std::string name_;
    leveldb::WritableFile* base_;
  };
};

TEST(DiskFull, WritesWaitForSpaceAndNothingAcknowledgedIsLost) {
  TempDir tmp;
  NoSpaceEnv env;
  StorageOptions so;
  so.env = &env;
  std::string err;
  auto storage = LogStorage::open(tmp.path(), so, &err);
  ASSERT_NE(storage, nullptr) << err;
  GroupCommitOptions go;
  go.no_space_retry = 20ms;
  auto owner = std::make_unique<GroupCommitLog>(std::move(storage), go);
  GroupCommitLog& log = *owner;
  log.start();

  auto submit = [&](Index i) {
    auto done = std::make_shared<std::promise<Status>>();
    log.submit({make_entry(i, 1, "entry " + std::to_string(i))}, HardState{1, 1, i}, [done](Status s) {
      done->set_value(std::move(s));
    });
    return done->get_future();
  };
  for (Index i = 1; i <= 5; ++i) ASSERT_TRUE(submit(i).get().is_ok());
  EXPECT_FALSE(log.disk_full());

  env.full = true;
  auto six = submit(6);
  auto seven = submit(7);
  ASSERT_EQ(six.wait_for(300ms), std::future_status::timeout);  // waits, does not fail
  EXPECT_TRUE(log.disk_full());
  EXPECT_GE(env.failed_appends.load(), 1);
  EXPECT_EQ(seven.wait_for(0ms), std::future_status::timeout);

  env.full = false;
  ASSERT_EQ(six.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(six.get().is_ok());
  EXPECT_TRUE(seven.get().is_ok());
  EXPECT_FALSE(log.disk_full());
  ASSERT_TRUE(submit(8).get().is_ok());
  owner.reset();  // stops and closes the LevelDB

  // Read back from disk by a fresh open (the default Env): every acknowledged entry, in order.
  auto reread = LogStorage::open(tmp.path(), StorageOptions{}, &err);
  ASSERT_NE(reread, nullptr) << err;
  EXPECT_EQ(reread->last_index(), 8u);
  std::vector<Entry> es;
  ASSERT_TRUE(reread->entries(1, 9, UINT64_MAX, &es).is_ok());
  ASSERT_EQ(es.size(), 8u);
  for (Index i = 1; i <= 8; ++i) EXPECT_EQ(es[i - 1].data, "entry " + std::to_string(i));
  EXPECT_EQ(reread->hard_state().commit, 8u);
}

TEST(DiskFull, StopWhileWaitingFailsTheWaitingWritesAsClosed) {
  TempDir tmp;
  NoSpaceEnv env;
  StorageOptions so;
  so.env = &env;
  std::string err;
  auto storage = LogStorage::open(tmp.path(), so, &err);
  ASSERT_NE(storage, nullptr) << err;
  GroupCommitLog log(std::move(storage));
  log.start();
  env.full = true;
  std::promise<Status> done;
  log.submit({make_entry(1, 1)}, std::nullopt, [&](Status s) { done.set_value(std::move(s)); });
  ASSERT_TRUE([&] {
    for (int i = 0; i < 500 && !log.disk_full(); ++i) std::this_thread::sleep_for(2ms);
    return log.disk_full();
  }());
  log.stop();  // must not hang
  EXPECT_EQ(done.get_future().get().code(), Status::Code::kClosed);
}

}  // namespace
}  // namespace zkraft::consensus
