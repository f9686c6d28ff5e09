// GroupCommitLog: batching (fewer fsyncs than submissions), callback order, durability, merging of
// overlapping submissions, ordering of run() tasks, tasks that wait for a pause (run_once_idle).

#include <gtest/gtest.h>

#include <leveldb/env.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "consensus/group_commit_log.h"
#include "raft_node_sync_gate_env.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::make_entries;
using testing::make_entry;
using testing::open_ok;
using testing::SyncGateEnv;
using testing::TempDir;

TEST(GroupCommit, ConcurrentSubmittersShareFsyncsAndKeepOrder) {
  TempDir tmp;
  auto log = std::make_unique<GroupCommitLog>(open_ok(tmp.path()));
  // Hold the storage thread in a task so submissions pile up behind it deterministically; the
  // queue then has to be written as groups rather than one fsync each.
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool gate_open = false;
  log->run([&](LogStorage&) {
    std::unique_lock lock(gate_mu);
    gate_cv.wait(lock, [&] { return gate_open; });
  });
  log->start();

  const int threads = 8, per_thread = 50;
  std::mutex order_mu;
  Index next = 1;
  std::vector<Index> completed;  // written only on the storage thread
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) {
        std::lock_guard lock(order_mu);
        Index idx = next++;
        log->submit({make_entry(idx, 1)}, HardState{1, 1, idx - 1}, [&completed, idx](Status s) {
          EXPECT_TRUE(s.is_ok()) << s.to_string();
          completed.push_back(idx);
        });
      }
    });
  }
  for (auto& th : ts) th.join();
  {
    std::lock_guard lock(gate_mu);
    gate_open = true;
  }
  gate_cv.notify_all();
  log->stop();

  const int total = threads * per_thread;
  ASSERT_EQ(completed.size(), static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) EXPECT_EQ(completed[i], static_cast<Index>(i + 1));
  GroupCommitStats stats = log->stats();
  EXPECT_EQ(stats.submissions, static_cast<uint64_t>(total));
  EXPECT_EQ(stats.entries, static_cast<uint64_t>(total));
  EXPECT_LT(stats.fsyncs, static_cast<uint64_t>(total));
  EXPECT_GE(stats.fsyncs, 1u);
  EXPECT_EQ(stats.fsyncs, stats.groups);

  log.reset();
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->last_index(), static_cast<Index>(total));
  EXPECT_EQ(st->hard_state(), (HardState{1, 1, static_cast<Index>(total - 1)}));
  std::vector<Entry> got;
  ASSERT_TRUE(st->entries(1, total + 1, UINT64_MAX, &got).is_ok());
  for (int i = 0; i < total; ++i) EXPECT_EQ(got[i], make_entry(i + 1, 1));
}

// The fsync histogram behind zkraft_fsync_duration_seconds and fsynctime: one count per fsync, in
// the bucket of its microseconds, which add up to the total within the buckets' width.
TEST(GroupCommit, FsyncBucketsCountEveryFsync) {
  TempDir tmp;
  GroupCommitLog log(open_ok(tmp.path()));
  log.start();
  for (Index i = 1; i <= 5; ++i) {
    std::promise<void> done;
    log.submit({make_entry(i, 1)}, std::nullopt, [&done](Status) { done.set_value(); });
    done.get_future().wait();  // one group, one fsync each
  }
  log.stop();
  GroupCommitStats stats = log.stats();
  ASSERT_EQ(stats.fsync_micros_buckets.size(), kLogBucketCount);
  uint64_t counted = 0, lowest = 0;
  for (size_t i = 0; i < kLogBucketCount; ++i) {
    counted += stats.fsync_micros_buckets[i];
    lowest += stats.fsync_micros_buckets[i] * log_bucket_lower(i);
  }
  EXPECT_EQ(stats.fsyncs, 5u);
  EXPECT_EQ(counted, stats.fsyncs);
  EXPECT_LE(lowest, stats.fsync_micros_total);
  EXPECT_GT(stats.fsync_micros_buckets[log_bucket(stats.fsync_micros_max)], 0u);
}

TEST(GroupCommit, OverlappingSubmissionsInOneGroupReplaceTheSuffix) {
  TempDir tmp;
  GroupCommitLog log(open_ok(tmp.path()));
  std::vector<std::string> results;
  auto record = [&](const char* name) {
    return [&results, name](Status s) { results.push_back(std::string(name) + ":" + s.to_string()); };
  };
  // Queued before start(): all four are one group.
  log.submit(make_entries(1, 5, 1), std::nullopt, record("a"));
  log.submit(make_entries(4, 6, 2), std::nullopt, record("b"));    // replaces 4..5
  log.submit(make_entries(9, 9, 2), std::nullopt, record("gap"));  // fails alone
  log.submit(make_entries(7, 8, 2), HardState{2, 0, 3}, record("c"));
  log.start();
  log.stop();
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0], "a:ok");
  EXPECT_EQ(results[1], "b:ok");
  EXPECT_EQ(results[2].rfind("gap:invalid argument", 0), 0u) << results[2];
  EXPECT_EQ(results[3], "c:ok");
  EXPECT_EQ(log.stats().fsyncs, 1u);
  const LogStorage& st = log.storage();
  EXPECT_EQ(st.last_index(), 8u);
  std::vector<Entry> got;
  ASSERT_TRUE(st.entries(1, 9, UINT64_MAX, &got).is_ok());
  std::vector<Entry> want = make_entries(1, 3, 1);
  for (auto& e : make_entries(4, 8, 2)) want.push_back(e);
  EXPECT_EQ(got, want);
  EXPECT_EQ(st.hard_state(), (HardState{2, 0, 3}));
}

TEST(GroupCommit, TasksSeeEverythingSubmittedBeforeThem) {
  TempDir tmp;
  GroupCommitLog log(open_ok(tmp.path()));
  log.start();
  std::vector<Index> seen;
  for (Index i = 1; i <= 30; ++i) {
    log.submit({make_entry(i, 1)}, std::nullopt, nullptr);
    if (i % 10 == 0) log.run([&seen](LogStorage& st) { seen.push_back(st.last_index()); });
  }
  log.run([](LogStorage& st) {
    ASSERT_TRUE(st.save_snapshot(SnapshotMeta{20, 1, {}}, "snap").is_ok());
    ASSERT_TRUE(st.compact(20).is_ok());
  });
  log.stop();
  EXPECT_EQ(seen, (std::vector<Index>{10, 20, 30}));
  EXPECT_EQ(log.storage().first_index(), 21u);
  EXPECT_EQ(log.storage().last_index(), 30u);
}

// A snapshot's compaction must not hold up writes submitted after it: one LevelDB batch of
// ~100,000 deletes stalled every write for ~100 ms (2026-12-01, 16x32 setData, slow request log).
TEST(GroupCommit, CompactionInStepsLetsLaterWritesGoFirst) {
  TempDir tmp;
  GroupCommitLog log(open_ok(tmp.path()));
  // Queued before start(): the storage thread then sees exactly this order.
  log.submit(make_entries(1, 20000, 1), std::nullopt, nullptr);
  std::vector<Index> first_seen_by_steps;
  log.run([&log](LogStorage& st) {
    ASSERT_TRUE(st.save_snapshot(SnapshotMeta{20000, 1, {}}, "snap").is_ok());
    log.compact_in_steps(19000, 4096);
  });
  Index first_when_written = 0;
  log.submit({make_entry(20001, 1)}, std::nullopt,
             [&](Status s) {
               ASSERT_TRUE(s.is_ok());
               first_when_written = log.storage().first_index();
             });
  log.start();
  // Each step queues the next; stop() would drop those not queued yet, so wait for the last.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (log.storage().first_index() != 19001 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  log.stop();
  EXPECT_EQ(first_when_written, 1u) << "the write waited for the compaction";
  EXPECT_EQ(log.storage().first_index(), 19001u);
  EXPECT_EQ(log.storage().last_index(), 20001u);
  std::vector<Entry> tail;
  ASSERT_TRUE(log.storage().entries(19001, 20002, UINT64_MAX, &tail).is_ok());
  EXPECT_EQ(tail.size(), 1001u);
}

// A step finding the log already replaced past it (a leader's snapshot) does nothing.
TEST(GroupCommit, CompactionStepsStopWhenTheLogMovedPastThem) {
  TempDir tmp;
  GroupCommitLog log(open_ok(tmp.path()));
  log.submit(make_entries(1, 100, 1), std::nullopt, nullptr);
  log.run([](LogStorage& st) { ASSERT_TRUE(st.save_snapshot(SnapshotMeta{100, 1, {}}, "snap").is_ok()); });
  // A newer snapshot whose entry the log does not hold discards the log; the step queued after
  // it (before start(), so the order is exact) must not fail or touch the new log.
  log.run([](LogStorage& st) { ASSERT_TRUE(st.save_snapshot(SnapshotMeta{500, 2, {}}, "leader").is_ok()); });
  log.compact_in_steps(90, 10);
  log.submit({make_entry(501, 2)}, std::nullopt, [](Status s) { EXPECT_TRUE(s.is_ok()); });
  log.start();
  log.stop();
  EXPECT_EQ(log.storage().first_index(), 501u);
  EXPECT_EQ(log.storage().last_index(), 501u);
}

// An own snapshot's data is written beside the log: a write submitted after it is durable, and
// its callback runs, while the snapshot file is still being written; the publish follows, then
// the compaction. Writing the 194 MB of a 1,000,000-znode snapshot in order on the storage thread
// held every write for ~2 s (2026-12-01, 64x32 creates, 3 servers: the leader lost quorum contact).
TEST(GroupCommit, OwnSnapshotIsWrittenBesideTheLogWhileLaterWritesGoOn) {
  TempDir tmp;
  SyncGateEnv gate("/snapshot-");
  gate.close_gate();
  auto storage = open_ok(tmp.path(), StorageOptions{.env = &gate});
  ASSERT_NE(storage, nullptr);
  GroupCommitLog log(std::move(storage));
  log.start();
  std::promise<void> base;
  log.submit(make_entries(1, 100, 1), std::nullopt, [&](Status s) {
    EXPECT_TRUE(s.is_ok());
    base.set_value();
  });
  base.get_future().wait();
  std::mutex mu;
  std::vector<std::string> order;
  std::promise<Status> stored;
  log.store_snapshot_beside(SnapshotMeta{100, 1, {}}, snapshot_in_memory(std::string(4096, 's')),
                            [&](LogStorage& st, Status s) {
                              {
                                std::lock_guard lock(mu);
                                order.push_back("snapshot");
                              }
                              if (s.is_ok()) log.compact_in_steps(90, 50);
                              stored.set_value(s);
                            });
  ASSERT_TRUE(gate.wait_until_blocked(std::chrono::seconds(20)));  // the file is being written
  std::promise<void> later;
  log.submit({make_entry(101, 1)}, std::nullopt, [&](Status s) {
    EXPECT_TRUE(s.is_ok());
    {
      std::lock_guard lock(mu);
      order.push_back("write 101");
    }
    later.set_value();
  });
  ASSERT_EQ(later.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the write waited for the snapshot";
  EXPECT_FALSE(log.storage().snapshot_meta().has_value());
  gate.open_gate();
  auto f = stored.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_TRUE(f.get().is_ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (log.storage().first_index() != 91 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  log.stop();
  EXPECT_EQ(order, (std::vector<std::string>{"write 101", "snapshot"}));
  EXPECT_EQ(log.storage().snapshot_meta(), (SnapshotMeta{100, 1, {}}));
  EXPECT_EQ(log.storage().first_index(), 91u);
  EXPECT_EQ(log.storage().last_index(), 101u);
}

// stop() while a snapshot file is being written: nothing is published and no callback runs; the
// file left behind is removed by the next open().
TEST(GroupCommit, StopDuringAnOwnSnapshotPublishesNothing) {
  TempDir tmp;
  SyncGateEnv gate("/snapshot-");
  gate.close_gate();
  auto storage = open_ok(tmp.path(), StorageOptions{.env = &gate});
  ASSERT_NE(storage, nullptr);
  bool called = false;
  {
    GroupCommitLog log(std::move(storage));
    log.submit(make_entries(1, 10, 1), std::nullopt, nullptr);
    log.start();
    log.store_snapshot_beside(SnapshotMeta{5, 1, {}}, snapshot_in_memory(std::string(100, 's')),
                              [&](LogStorage&, Status) { called = true; });
    ASSERT_TRUE(gate.wait_until_blocked(std::chrono::seconds(20)));
    std::thread opener([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      gate.open_gate();
    });
    log.stop();
    opener.join();
    EXPECT_FALSE(log.storage().snapshot_meta().has_value());
  }
  EXPECT_FALSE(called);
  auto reopened = open_ok(tmp.path());
  ASSERT_NE(reopened, nullptr);
  EXPECT_FALSE(reopened->snapshot_meta().has_value());
  EXPECT_EQ(reopened->last_index(), 10u);
  std::vector<std::string> names;
  ASSERT_TRUE(leveldb::Env::Default()->GetChildren(tmp.path(), &names).ok());
  for (const std::string& n : names) EXPECT_EQ(n.find("snapshot-"), std::string::npos) << n;
}

TEST(GroupCommit, GroupSyncsOnlyWhenAMemberNeedsIt) {
  TempDir tmp;
  {
    GroupCommitLog log(open_ok(tmp.path()));
    log.submit({}, HardState{1, 0, 0}, nullptr, /*need_sync=*/false);
    log.start();
    log.stop();
    EXPECT_EQ(log.stats().groups, 1u);
    EXPECT_EQ(log.stats().fsyncs, 0u);
    EXPECT_EQ(log.storage().hard_state(), (HardState{1, 0, 0}));
  }
  GroupCommitLog log(open_ok(tmp.path()));
  log.submit({}, HardState{1, 0, 0}, nullptr, /*need_sync=*/false);
  log.submit(make_entries(1, 2, 1), std::nullopt, nullptr, /*need_sync=*/true);
  log.start();
  log.stop();
  EXPECT_EQ(log.stats().groups, 1u);
  EXPECT_EQ(log.stats().fsyncs, 1u);
}

// run_once_idle: the task waits until the storage thread has had nothing to do for idle_delay.
// Submissions every 10 ms keep it busy for 300 ms; whenever the task runs, idle_delay has passed
// since the last write before it (a lower bound only: a slow machine can only lengthen the gap).
TEST(GroupCommit, AnIdleTaskWaitsForAPauseInTheWrites) {
  TempDir tmp;
  GroupCommitOptions opts;
  opts.idle_delay = std::chrono::milliseconds(100);
  GroupCommitLog log(open_ok(tmp.path()), opts);
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> durable;  // storage thread only, like ran_at
  std::vector<Clock::time_point> ran_at;
  std::promise<void> ran;
  log.start();
  log.run_once_idle([&](LogStorage&) {
    ran_at.push_back(Clock::now());
    ran.set_value();
  });
  const auto until = Clock::now() + std::chrono::milliseconds(300);
  for (Index i = 1; Clock::now() < until; ++i) {
    log.submit({make_entry(i, 1)}, std::nullopt, [&durable](Status s) {
      EXPECT_TRUE(s.is_ok());
      durable.push_back(Clock::now());
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(ran.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  log.stop();
  ASSERT_EQ(ran_at.size(), 1u);
  ASSERT_FALSE(durable.empty());
  Clock::time_point last_before = durable.front();
  for (auto t : durable) {
    if (t < ran_at[0]) last_before = std::max(last_before, t);
  }
  EXPECT_LT(durable.front(), ran_at[0]);  // it did not run before the first write
  EXPECT_GE(ran_at[0] - last_before, opts.idle_delay);
}

// A second call before the first task ran replaces it, and stop() drops a task still waiting
// (and does not wait out its delay).
TEST(GroupCommit, AnIdleTaskIsReplacedByTheNextAndDroppedByStop) {
  TempDir tmp;
  GroupCommitOptions opts;
  opts.idle_delay = std::chrono::milliseconds(50);
  GroupCommitLog log(open_ok(tmp.path()), opts);
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool gate_open = false;
  log.run([&](LogStorage&) {  // holds the storage thread while both calls are made
    std::unique_lock lock(gate_mu);
    gate_cv.wait(lock, [&] { return gate_open; });
  });
  log.start();
  std::vector<std::string> ran;  // storage thread only
  std::promise<void> second_ran;
  log.run_once_idle([&](LogStorage&) { ran.push_back("first"); });
  log.run_once_idle([&](LogStorage&) {
    ran.push_back("second");
    second_ran.set_value();
  });
  {
    std::lock_guard lock(gate_mu);
    gate_open = true;
  }
  gate_cv.notify_all();
  ASSERT_EQ(second_ran.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);

  GroupCommitOptions later;
  later.idle_delay = std::chrono::hours(1);
  TempDir tmp2;
  GroupCommitLog other(open_ok(tmp2.path()), later);
  other.start();
  bool dropped_ran = false;
  other.run_once_idle([&](LogStorage&) { dropped_ran = true; });
  const auto t0 = std::chrono::steady_clock::now();
  other.stop();
  log.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::minutes(1));
  EXPECT_FALSE(dropped_ran);
  EXPECT_EQ(ran, std::vector<std::string>{"second"});
}

TEST(GroupCommit, SubmitAfterStopFailsImmediately) {
  TempDir tmp;
  GroupCommitLog log(open_ok(tmp.path()));
  log.start();
  log.stop();
  Status got = Status::ok();
  bool called = false;
  log.submit({make_entry(1, 1)}, std::nullopt, [&](Status s) {
    called = true;
    got = s;
  });
  EXPECT_TRUE(called);
  EXPECT_EQ(got.code(), Status::Code::kClosed);
}

// fsync.warningthresholdms: a sync held back by the gate for 100 ms from start() (the storage
// thread reaches it a little later, so it is timed at 50 ms or more) is over a 10 ms threshold
// and counted; with the threshold at 0 nothing is.
TEST(GroupCommit, AnFsyncSlowerThanTheWarningThresholdIsCounted) {
  for (uint64_t threshold : {uint64_t{10}, uint64_t{0}}) {
    TempDir tmp;
    testing::SyncGateEnv env;
    StorageOptions so;
    so.env = &env;
    std::string err;
    auto storage = LogStorage::open(tmp.path(), so, &err);
    ASSERT_NE(storage, nullptr) << err;
    GroupCommitOptions go;
    go.fsync_warning_ms = threshold;
    GroupCommitLog log(std::move(storage), go);
    env.close_gate();
    log.submit(make_entries(1, 2, 1), std::nullopt, nullptr, /*need_sync=*/true);
    log.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    env.open_gate();
    log.stop();
    EXPECT_EQ(log.stats().fsyncs, 1u);
    EXPECT_GE(log.stats().fsync_micros_max, 50000u);
    EXPECT_EQ(log.stats().fsync_threshold_exceeded, threshold == 10 ? 1u : 0u) << threshold;
  }
}

}  // namespace
}  // namespace zkraft::consensus
