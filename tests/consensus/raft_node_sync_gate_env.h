#pragma once
// SyncGateEnv: a leveldb::EnvWrapper whose file syncs can be held back, for RaftNode tests that
// must observe a node while its fsync is still running (nothing may be acknowledged meanwhile).
//
// close_gate(): every Sync() from now on blocks (counted by blocked_syncs()) until open_gate().
// Appends and everything else pass through. Open the gate before the node is destroyed.
// SyncGateEnv("/snapshot-") gates only the files whose path contains that text.

#include <leveldb/env.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace zkraft::consensus::testing {

class SyncGateEnv : public leveldb::EnvWrapper {
 public:
  explicit SyncGateEnv(std::string only_paths_containing = "")
      : leveldb::EnvWrapper(leveldb::Env::Default()), filter_(std::move(only_paths_containing)) {}
  ~SyncGateEnv() override { open_gate(); }

  leveldb::Status NewWritableFile(const std::string& f, leveldb::WritableFile** r) override {
    leveldb::WritableFile* base = nullptr;
    leveldb::Status s = target()->NewWritableFile(f, &base);
    if (s.ok()) *r = gated(f, base);
    return s;
  }
  leveldb::Status NewAppendableFile(const std::string& f, leveldb::WritableFile** r) override {
    leveldb::WritableFile* base = nullptr;
    leveldb::Status s = target()->NewAppendableFile(f, &base);
    if (s.ok()) *r = gated(f, base);
    return s;
  }

  void close_gate() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  void open_gate() {
    {
      std::lock_guard lock(mu_);
      closed_ = false;
    }
    cv_.notify_all();
  }
  int blocked_syncs() {
    std::lock_guard lock(mu_);
    return blocked_;
  }
  // True once a Sync() is held at the closed gate; false if none came within `limit`.
  bool wait_until_blocked(std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [this] { return blocked_ > 0; });
  }

 private:
  leveldb::WritableFile* gated(const std::string& path, leveldb::WritableFile* base) {
    if (path.find(filter_) == std::string::npos) return base;
    return new GatedFile(this, base);
  }

  void pass_gate() {
    std::unique_lock lock(mu_);
    ++blocked_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !closed_; });
    --blocked_;
  }

  class GatedFile : public leveldb::WritableFile {
   public:
    GatedFile(SyncGateEnv* env, leveldb::WritableFile* base) : env_(env), base_(base) {}
    leveldb::Status Append(const leveldb::Slice& data) override { return base_->Append(data); }
    leveldb::Status Close() override { return base_->Close(); }
    leveldb::Status Flush() override { return base_->Flush(); }
    leveldb::Status Sync() override {
      env_->pass_gate();
      return base_->Sync();
    }

   private:
    SyncGateEnv* env_;
    std::unique_ptr<leveldb::WritableFile> base_;
  };

  const std::string filter_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int blocked_ = 0;
};

}  // namespace zkraft::consensus::testing
