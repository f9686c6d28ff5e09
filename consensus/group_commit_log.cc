#include "consensus/group_commit_log.h"

#include <pthread.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "consensus/log_append_rule.h"

namespace zkraft::consensus {

GroupCommitLog::GroupCommitLog(std::unique_ptr<LogStorage> storage, GroupCommitOptions options)
    : storage_(std::move(storage)), options_(options) {}

GroupCommitLog::~GroupCommitLog() { stop(); }

void GroupCommitLog::start() {
  std::lock_guard lock(mu_);
  if (started_ || stopped_) return;
  started_ = true;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "zk-storage");  // shown by top -H, ps -L, perf
    loop();
  });
}

void GroupCommitLog::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopping_ = true;
    abandon_snapshots_.store(true, std::memory_order_release);
    if (!started_) {
      // Never started: run the queued work here so no callback is lost.
      started_ = true;
      thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "zk-storage");
        loop();
      });
    }
  }
  cv_.notify_all();
  snapshot_cv_.notify_all();
  // First the snapshot thread, which may still queue a publish (refused now: stopping_).
  if (snapshot_thread_.joinable()) snapshot_thread_.join();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  snapshot_jobs_.clear();
  stopped_ = true;
}

void GroupCommitLog::store_snapshot_beside(SnapshotMeta meta, SnapshotBytes data,
                                           SnapshotDone done) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  snapshot_jobs_.push_back(SnapshotJob{std::move(meta), std::move(data), std::move(done)});
  if (!snapshot_thread_.joinable()) {
    snapshot_thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "zk-snapshot");
      snapshot_loop();
    });
  }
  snapshot_cv_.notify_one();
}

void GroupCommitLog::snapshot_loop() {
  while (true) {
    SnapshotJob job;
    {
      std::unique_lock lock(mu_);
      snapshot_cv_.wait(lock, [this] { return !snapshot_jobs_.empty() || stopping_; });
      if (stopping_) return;
      job = std::move(snapshot_jobs_.front());
      snapshot_jobs_.pop_front();
    }
    auto prepared = std::make_shared<LogStorage::PreparedSnapshot>();
    Status st = storage_->write_snapshot_data(job.meta, job.data->bytes(), prepared.get(), &abandon_snapshots_);
    if (!st.is_ok()) {
      if (st.code() != Status::Code::kClosed && job.done) job.done(*storage_, std::move(st));
      continue;
    }
    job.data.reset();  // the bytes are on disk; the caller may hold them for followers
    // Behind whatever was submitted meanwhile; dropped at stop() (open() then removes the file).
    run([prepared, done = std::move(job.done)](LogStorage& s) {
      Status published = s.publish_snapshot(*prepared);
      if (done) done(s, std::move(published));
    });
  }
}

void GroupCommitLog::submit(std::vector<Entry> entries, std::optional<HardState> hs, Callback on_durable,
                            bool need_sync) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      queue_.push_back(Item{std::move(entries), hs, std::move(on_durable), nullptr, need_sync});
      if (started_) cv_.notify_one();
      return;
    }
  }
  if (on_durable) on_durable(Status::closed("group commit log is stopped"));
}

void GroupCommitLog::run(std::function<void(LogStorage&)> task) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  queue_.push_back(Item{{}, std::nullopt, nullptr, std::move(task)});
  if (started_) cv_.notify_one();
}

void GroupCommitLog::run_once_idle(std::function<void(LogStorage&)> task) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  idle_task_ = std::move(task);
  if (started_) cv_.notify_one();  // the thread may be waiting without a timeout
}

void GroupCommitLog::compact_in_steps(Index through, Index step) {
  run([this, through, step = std::max<Index>(step, 1)](LogStorage& s) {
    const Index first = s.first_index();
    if (through < first) return;  // done, or a snapshot from the leader replaced the log
    const Index upto = std::min(through, first - 1 + step);
    if (Status st = s.compact(upto); !st.is_ok()) {
      spdlog::warn("log storage {}: compacting through {} stopped at {}: {}", s.dir(), through, first - 1,
                   st.to_string());
      return;
    }
    if (upto < through) compact_in_steps(through, step);
  });
}

void GroupCommitLog::loop() {
  std::vector<Item> group;
  while (true) {
    std::deque<Item> taken;
    {
      std::unique_lock lock(mu_);
      while (queue_.empty() && !stopping_) {
        if (!idle_task_) {
          cv_.wait(lock);
          continue;
        }
        // A wake-up that brings no work (run_once_idle again, or spurious) starts the wait over.
        if (cv_.wait_for(lock, options_.idle_delay) == std::cv_status::timeout && queue_.empty() &&
            !stopping_) {
          auto task = std::move(idle_task_);
          idle_task_ = nullptr;
          lock.unlock();
          task(*storage_);
          lock.lock();
        }
      }
      if (queue_.empty() && stopping_) return;
      taken.swap(queue_);
    }
    // Everything that arrived while the previous group was being written is one new group;
    // a task splits it, since it must observe the writes submitted before it.
    for (Item& item : taken) {
      if (item.task) {
        commit_group(group);
        item.task(*storage_);
      } else {
        group.push_back(std::move(item));
      }
    }
    commit_group(group);
  }
}

void GroupCommitLog::commit_group(std::vector<Item>& group) {
  if (group.empty()) return;
  // Merge the submissions into one contiguous run, as LogStorage::append would apply them one by
  // one: a submission starting at or below the run's end replaces the run's suffix.
  std::vector<Entry> merged;
  std::vector<Status> results(group.size());
  std::optional<HardState> hs;
  Index last = storage_->last_index();
  const Index floor = storage_->first_index();  // entries below are covered by a snapshot
  uint64_t bytes = 0;
  bool need_sync = false;
  for (size_t g = 0; g < group.size(); ++g) {
    Item& item = group[g];
    need_sync = need_sync || item.need_sync;
    std::vector<Entry>& es = item.entries;
    // Checked against the run merged so far, so a bad submission fails alone.
    if (Status bad = check_append_run(es, floor, last); !bad.is_ok()) {
      results[g] = std::move(bad);
      continue;
    }
    if (!es.empty() && es.back().index >= floor) {
      const Index start = std::max(es[0].index, floor);
      // Drop the merged suffix this submission replaces.
      while (!merged.empty() && merged.back().index >= start) {
        bytes -= merged.back().data.size();
        merged.pop_back();
      }
      for (Entry& e : es) {
        if (e.index < start) continue;
        bytes += e.data.size();
        merged.push_back(std::move(e));
      }
      last = merged.back().index;
    }
    if (item.hs) hs = item.hs;
  }

  Status st = Status::ok();
  if (!merged.empty() || hs) {
    auto t0 = std::chrono::steady_clock::now();
    const bool sync = options_.sync && need_sync;
    st = storage_->append(merged, hs ? &*hs : nullptr, sync);
    if (st.code() == Status::Code::kNoSpace) st = wait_for_space(merged, hs ? &*hs : nullptr, sync, st);
    auto micros = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    groups_.fetch_add(1, std::memory_order_relaxed);
    if (sync) {
      fsyncs_.fetch_add(1, std::memory_order_relaxed);
      fsync_total_.fetch_add(micros, std::memory_order_relaxed);
      fsync_last_.store(micros, std::memory_order_relaxed);
      fsync_buckets_[log_bucket(micros)].fetch_add(1, std::memory_order_relaxed);
      if (micros > fsync_max_.load(std::memory_order_relaxed)) fsync_max_.store(micros, std::memory_order_relaxed);
      if (options_.fsync_warning_ms > 0 && micros > options_.fsync_warning_ms * 1000) {
        fsync_slow_.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("fsync of the Raft log took {} ms (warning threshold {} ms): {} entries, {} bytes "
                     "in this group; writes wait for it",
                     micros / 1000, options_.fsync_warning_ms, merged.size(), bytes);
      }
    }
    if (st.is_ok()) {
      entries_.fetch_add(merged.size(), std::memory_order_relaxed);
      bytes_.fetch_add(bytes, std::memory_order_relaxed);
    } else {
      spdlog::error("group commit: write of {} entries failed: {}", merged.size(), st.to_string());
    }
  }
  for (size_t g = 0; g < group.size(); ++g) {
    Status r = results[g].is_ok() ? st : results[g];
    submissions_.fetch_add(1, std::memory_order_relaxed);
    if (group[g].on_durable) group[g].on_durable(std::move(r));
  }
  group.clear();
}

Status GroupCommitLog::wait_for_space(const std::vector<Entry>& entries, const HardState* hs, bool sync,
                                      Status first) {
  disk_full_.store(true, std::memory_order_release);
  spdlog::error("disk full: the Raft log in {} cannot be written ({}); writes are refused and wait "
                "until there is space again, reads are still served",
                storage_->dir(), first.message());
  const auto t0 = std::chrono::steady_clock::now();
  Status st = first;
  while (st.code() == Status::Code::kNoSpace) {
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, options_.no_space_retry, [this] { return stopping_; })) {
        disk_full_.store(false, std::memory_order_release);
        return Status::closed("stopped while waiting for disk space");
      }
    }
    // LogStorage reopens its LevelDB first (it must after a failed write), then writes again.
    st = storage_->append(entries, hs, sync);
  }
  disk_full_.store(false, std::memory_order_release);
  if (st.is_ok()) {
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    spdlog::warn("disk space is back: the Raft log in {} was written after {} ms; writes resume",
                 storage_->dir(), waited.count());
  }
  return st;
}

GroupCommitStats GroupCommitLog::stats() const {
  GroupCommitStats s;
  s.submissions = submissions_.load(std::memory_order_relaxed);
  s.groups = groups_.load(std::memory_order_relaxed);
  s.fsyncs = fsyncs_.load(std::memory_order_relaxed);
  s.entries = entries_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.fsync_micros_total = fsync_total_.load(std::memory_order_relaxed);
  s.fsync_micros_max = fsync_max_.load(std::memory_order_relaxed);
  s.fsync_micros_last = fsync_last_.load(std::memory_order_relaxed);
  s.fsync_threshold_exceeded = fsync_slow_.load(std::memory_order_relaxed);
  s.fsync_micros_buckets.resize(kLogBucketCount);
  for (size_t i = 0; i < kLogBucketCount; ++i) {
    s.fsync_micros_buckets[i] = fsync_buckets_[i].load(std::memory_order_relaxed);
  }
  return s;
}

}  // namespace zkraft::consensus
