#pragma once
// CrashEnv: a leveldb::EnvWrapper that simulates power loss for the storage crash tests.
//
// It records, per file written through it, how many bytes were appended and how many were synced.
// After the DB is closed, crash() truncates every file to its synced length (unsynced data is what a
// power cut loses) and can then leave a torn write behind: a prefix of the first unsynced write, or
// random garbage. freeze() simulates the machine dying mid-run: every later append or sync fails
// without touching the file, so nothing written afterwards can become durable.

#include <leveldb/env.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace zkraft::consensus::testing {

enum class TearMode {
  kDropUnsynced,  // files end exactly at their last sync
  kTornWrite,     // the first unsynced record survives in part (header plus half its payload)
  kGarbageTail,   // random bytes follow the synced data
};

class CrashEnv : public leveldb::EnvWrapper {
 public:
  CrashEnv() : leveldb::EnvWrapper(leveldb::Env::Default()) {}

  leveldb::Status NewWritableFile(const std::string& f, leveldb::WritableFile** r) override {
    leveldb::WritableFile* base = nullptr;
    leveldb::Status s = target()->NewWritableFile(f, &base);
    if (!s.ok()) return s;
    {
      std::lock_guard lock(mu_);
      files_[f] = FileState{};
    }
    *r = new TrackedFile(this, f, base);
    return s;
  }

  leveldb::Status NewAppendableFile(const std::string& f, leveldb::WritableFile** r) override {
    uint64_t size = 0;
    if (target()->FileExists(f)) target()->GetFileSize(f, &size);
    leveldb::WritableFile* base = nullptr;
    leveldb::Status s = target()->NewAppendableFile(f, &base);
    if (!s.ok()) return s;
    {
      std::lock_guard lock(mu_);
      auto it = files_.find(f);
      if (it == files_.end()) files_[f] = FileState{size, size, {}};  // existing bytes are durable
    }
    *r = new TrackedFile(this, f, base);
    return s;
  }

  leveldb::Status RemoveFile(const std::string& f) override {
    {
      std::lock_guard lock(mu_);
      files_.erase(f);
    }
    return target()->RemoveFile(f);
  }

  leveldb::Status RenameFile(const std::string& src, const std::string& dst) override {
    leveldb::Status s = target()->RenameFile(src, dst);
    if (s.ok()) {
      std::lock_guard lock(mu_);
      auto it = files_.find(src);
      if (it != files_.end()) {
        files_[dst] = it->second;
        files_.erase(it);
      } else {
        files_.erase(dst);
      }
    }
    return s;
  }

  // From now on appends and syncs fail and write nothing.
  void freeze() { frozen_.store(true); }

  // The machine dies at a chosen boundary: the first `events` appends and syncs succeed, every
  // later one fails as after freeze(). Negative: no limit. events_seen() counts them either way,
  // so a fault-free run tells how many boundaries a workload crosses.
  void freeze_after(int64_t events) { freeze_at_.store(events); }
  int64_t events_seen() const { return events_.load(); }

  // Call only with the DB closed. Truncates every tracked file to what was synced, applies `mode`,
  // and forgets all tracking (the files are now "on disk" as found after reboot).
  void crash(TearMode mode, std::mt19937& rng) {
    std::lock_guard lock(mu_);
    for (auto& [name, st] : files_) {
      if (st.size == st.synced) continue;
      if (::truncate(name.c_str(), static_cast<off_t>(st.synced)) != 0) continue;
      std::string tail;
      if (mode == TearMode::kTornWrite && !st.pending.empty()) {
        // LevelDB appends a record header and then its payload; keep the header and half the payload.
        tail = st.pending[0];
        if (st.pending.size() > 1) {
          tail += st.pending[1].substr(0, st.pending[1].size() / 2);
        } else {
          tail.resize(tail.size() / 2);
        }
      } else if (mode == TearMode::kGarbageTail) {
        tail.resize(1 + rng() % 64);
        for (char& c : tail) c = static_cast<char>(rng());
      }
      if (!tail.empty()) {
        std::ofstream out(name, std::ios::binary | std::ios::app);
        out.write(tail.data(), static_cast<std::streamsize>(tail.size()));
      }
    }
    files_.clear();
    frozen_.store(false);
    freeze_at_.store(-1);
    events_.store(0);
  }

  // Total unsynced bytes across files (to check a test really left something to lose).
  uint64_t unsynced_bytes() {
    std::lock_guard lock(mu_);
    uint64_t n = 0;
    for (auto& [name, st] : files_) n += st.size - st.synced;
    return n;
  }

 private:
  struct FileState {
    uint64_t size = 0;
    uint64_t synced = 0;
    std::vector<std::string> pending;  // appends since the last sync, in order
  };

  class TrackedFile : public leveldb::WritableFile {
   public:
    TrackedFile(CrashEnv* env, std::string name, leveldb::WritableFile* base)
        : env_(env), name_(std::move(name)), base_(base) {}
    leveldb::Status Append(const leveldb::Slice& data) override {
      if (env_->crossing_boundary()) return leveldb::Status::IOError(name_, "crashed");
      leveldb::Status s = base_->Append(data);
      if (s.ok()) {
        std::lock_guard lock(env_->mu_);
        auto it = env_->files_.find(name_);
        if (it != env_->files_.end()) {
          it->second.size += data.size();
          if (it->second.pending.size() < 4) it->second.pending.emplace_back(data.data(), data.size());
        }
      }
      return s;
    }
    leveldb::Status Close() override { return base_->Close(); }
    leveldb::Status Flush() override {
      if (env_->frozen_.load()) return leveldb::Status::IOError(name_, "crashed");
      return base_->Flush();
    }
    leveldb::Status Sync() override {
      if (env_->crossing_boundary()) return leveldb::Status::IOError(name_, "crashed");
      leveldb::Status s = base_->Sync();
      if (s.ok()) {
        std::lock_guard lock(env_->mu_);
        auto it = env_->files_.find(name_);
        if (it != env_->files_.end()) {
          it->second.synced = it->second.size;
          it->second.pending.clear();
        }
      }
      return s;
    }

   private:
    CrashEnv* env_;
    std::string name_;
    std::unique_ptr<leveldb::WritableFile> base_;
  };

  // Counts one append or sync; true if it must fail (frozen, or past freeze_after's limit).
  bool crossing_boundary() {
    if (frozen_.load()) return true;
    const int64_t n = events_.fetch_add(1) + 1;
    const int64_t limit = freeze_at_.load();
    if (limit >= 0 && n > limit) {
      frozen_.store(true);
      return true;
    }
    return false;
  }

  std::mutex mu_;
  std::map<std::string, FileState> files_;
  std::atomic<bool> frozen_{false};
  std::atomic<int64_t> freeze_at_{-1};
  std::atomic<int64_t> events_{0};
};

}  // namespace zkraft::consensus::testing
