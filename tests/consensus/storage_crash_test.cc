// Crash recovery of LogStorage and GroupCommitLog under a simulated power cut (CrashEnv): after
// recovery the log must be exactly its durable prefix — every write acknowledged with sync=true is
// back, nothing that was never synced is.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "consensus/group_commit_log.h"
#include "consensus/log_storage.h"
#include "storage_fault_env.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::CrashEnv;
using testing::make_entry;
using testing::TearMode;
using testing::TempDir;

struct LogModel {
  std::vector<Entry> entries;  // index i at position i - 1
  HardState hs;
  bool operator==(const LogModel&) const = default;
};

LogModel read_model(const LogStorage& st) {
  LogModel m;
  EXPECT_EQ(st.first_index(), 1u);
  Status s = st.entries(1, st.last_index() + 1, UINT64_MAX, &m.entries);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  m.hs = st.hard_state();
  return m;
}

void run_crash_cycles(TearMode mode, uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  TempDir tmp;
  CrashEnv env;
  StorageOptions opts;
  opts.env = &env;
  LogModel durable;  // what must survive
  Term term = 1;
  for (int cycle = 0; cycle < 3; ++cycle) {
    std::string err;
    auto st = LogStorage::open(tmp.path(), opts, &err);
    ASSERT_NE(st, nullptr) << err;
    ASSERT_EQ(read_model(*st), durable) << "cycle " << cycle;
    LogModel current = durable;
    bool wrote_unsynced = false;
    const int ops = 20 + rng() % 20;
    for (int op = 0; op < ops; ++op) {
      Index last = current.entries.size();
      // Usually extend the log; sometimes replace a suffix as a new leader would.
      Index start = last + 1;
      if (last > 0 && rng() % 5 == 0) start = last - rng() % std::min<Index>(last, 4);
      if (rng() % 7 == 0) ++term;
      std::vector<Entry> batch;
      const int n = 1 + rng() % 5;
      for (int i = 0; i < n; ++i) {
        batch.push_back(make_entry(start + i, term, std::string(1 + rng() % 300, 'a' + rng() % 26)));
      }
      std::optional<HardState> hs;
      if (rng() % 3 == 0) hs = HardState{term, 1 + rng() % 3, start - 1};
      const bool sync = rng() % 2 == 0;
      ASSERT_TRUE(st->append(batch, hs ? &*hs : nullptr, sync).is_ok());
      current.entries.resize(start - 1);
      current.entries.insert(current.entries.end(), batch.begin(), batch.end());
      if (hs) current.hs = *hs;
      if (sync) {
        durable = current;  // a synced write makes everything before it durable too
        wrote_unsynced = false;
      } else {
        wrote_unsynced = true;
      }
    }
    if (wrote_unsynced) {
      EXPECT_GT(env.unsynced_bytes(), 0u);
    }
    st.reset();  // the process dies: LevelDB's files are closed, then the power goes
    env.crash(mode, rng);
  }
  std::string err;
  auto st = LogStorage::open(tmp.path(), opts, &err);
  ASSERT_NE(st, nullptr) << err;
  EXPECT_EQ(read_model(*st), durable);
}

TEST(StorageCrash, DropUnsyncedRecoversExactlyTheDurablePrefix) {
  for (uint32_t seed = 1; seed <= 12; ++seed) run_crash_cycles(TearMode::kDropUnsynced, seed);
}

TEST(StorageCrash, TornLastWriteRecoversExactlyTheDurablePrefix) {
  for (uint32_t seed = 100; seed <= 112; ++seed) run_crash_cycles(TearMode::kTornWrite, seed);
}

TEST(StorageCrash, GarbageTailRecoversExactlyTheDurablePrefix) {
  for (uint32_t seed = 200; seed <= 212; ++seed) run_crash_cycles(TearMode::kGarbageTail, seed);
}

TEST(StorageCrash, UnsyncedWritesReallyAreLost) {
  // Guards the harness itself: without a sync, the crash must take the data away.
  TempDir tmp;
  CrashEnv env;
  StorageOptions opts;
  opts.env = &env;
  std::string err;
  auto st = LogStorage::open(tmp.path(), opts, &err);
  ASSERT_NE(st, nullptr) << err;
  ASSERT_TRUE(st->append({make_entry(1, 1)}, nullptr, true).is_ok());
  ASSERT_TRUE(st->append({make_entry(2, 1), make_entry(3, 1)}, nullptr, false).is_ok());
  st.reset();
  std::mt19937 rng(1);
  env.crash(TearMode::kDropUnsynced, rng);
  st = LogStorage::open(tmp.path(), opts, &err);
  ASSERT_NE(st, nullptr) << err;
  EXPECT_EQ(st->last_index(), 1u);
}

// Many threads submit through the group commit log; in the middle the machine "dies" (every later
// append and sync fails). Every submission acknowledged ok must be in the recovered log, and nothing
// else: the groups after the crash point never reached the disk.
TEST(StorageCrash, GroupCommitRecoversExactlyTheAcknowledgedEntries) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TempDir tmp;
    CrashEnv env;
    StorageOptions opts;
    opts.env = &env;
    std::string err;
    auto st = LogStorage::open(tmp.path(), opts, &err);
    ASSERT_NE(st, nullptr) << err;
    auto log = std::make_unique<GroupCommitLog>(std::move(st));
    log->start();

    std::mutex mu;
    Index next = 1;           // next index to hand out (submissions are serialised by mu)
    Index acked_through = 0;  // highest index whose callback said ok (storage thread only)
    std::map<Index, std::string> data;
    const Index freeze_at = 10 + seed * 23;
    const int threads = 4, per_thread = 40;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (int i = 0; i < per_thread; ++i) {
          std::lock_guard lock(mu);  // indexes must reach the queue in order
          Index idx = next++;
          std::string payload = "t" + std::to_string(t) + "-" + std::to_string(i);
          data[idx] = payload;
          log->submit({make_entry(idx, 1, payload)}, std::nullopt, [&, idx](Status s) {
            if (!s.is_ok()) return;
            // Callbacks run in submission order, so ok-acks only move forward.
            EXPECT_EQ(acked_through + 1, idx);
            acked_through = idx;
            if (idx == freeze_at) env.freeze();  // the power fails right after this group's fsync
          });
        }
      });
    }
    for (auto& th : ts) th.join();
    log.reset();  // drains: every group after the freeze fails
    ASSERT_GE(acked_through, freeze_at);
    std::mt19937 rng(seed);
    env.crash(TearMode::kTornWrite, rng);

    st = LogStorage::open(tmp.path(), opts, &err);
    ASSERT_NE(st, nullptr) << err;
    EXPECT_EQ(st->last_index(), acked_through);
    std::vector<Entry> got;
    ASSERT_TRUE(st->entries(1, st->last_index() + 1, UINT64_MAX, &got).is_ok());
    ASSERT_EQ(got.size(), acked_through);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], make_entry(i + 1, 1, data[i + 1]));
  }
}

}  // namespace
}  // namespace zkraft::consensus
