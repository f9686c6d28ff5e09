// The simulated disk's crash model: what survives a crash is what a machine crash would leave.
// The seed sweep can only catch a driver that skips an fsync if unsynced writes can be lost.

#include <gtest/gtest.h>

#include "tests/sim/sim_storage.h"

namespace zkraft::sim {
namespace {

using consensus::Entry;
using consensus::EntryType;
using consensus::HardState;
using consensus::Status;

std::vector<Entry> entries(consensus::Index from, consensus::Index to) {
  std::vector<Entry> out;
  for (consensus::Index i = from; i <= to; ++i) out.push_back(Entry{1, i, EntryType::kNormal, "e"});
  return out;
}

struct Disk {
  SimStorage storage;
  int ios = 0;
  Disk() {
    storage.set_start_io([this] { ++ios; });
  }
};

TEST(SimStorage, UnsyncedWriteCompletesAtOnceButIsLostInACrashUntilSynced) {
  // Over many crash draws, an unsynced write alone is sometimes lost and sometimes kept, never
  // torn; it is always kept once a later synced write completed.
  int lost = 0, kept = 0;
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    Disk d;
    bool done = false;
    d.storage.write(entries(1, 3), HardState{1, 0, 0}, /*need_sync=*/false, [&](Status s) { done = s.is_ok(); });
    ASSERT_TRUE(done);  // an unsynced write does not wait for the disk
    EXPECT_EQ(d.ios, 0);
    SimRng rng(seed);
    d.storage.crash(rng, /*may_tear=*/true);
    const consensus::Index last = d.storage.durable_last_index();
    ASSERT_TRUE(last == 0 || last == 3) << last;
    (last == 0 ? lost : kept)++;
  }
  EXPECT_GT(lost, 0);
  EXPECT_GT(kept, 0);

  Disk d;
  d.storage.write(entries(1, 3), std::nullopt, false, [](Status) {});
  bool synced = false;
  d.storage.write(entries(4, 4), HardState{1, 2, 0}, /*need_sync=*/true, [&](Status s) { synced = s.is_ok(); });
  EXPECT_FALSE(synced);  // waits for the disk
  EXPECT_EQ(d.ios, 1);
  d.storage.disk_done();
  ASSERT_TRUE(synced);
  SimRng rng(7);
  d.storage.crash(rng, true);
  EXPECT_EQ(d.storage.durable_last_index(), 4u);
  EXPECT_EQ(d.storage.hard_state().vote, 2u);
}

TEST(SimStorage, ACrashDuringASyncedWriteKeepsOnlyAPrefixOfItsEntriesAndNeverItsHardState) {
  bool torn_some = false;
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    Disk d;
    d.storage.write(entries(1, 5), HardState{2, 1, 0}, true, [](Status) { FAIL() << "completed"; });
    SimRng rng(seed);
    d.storage.crash(rng, /*may_tear=*/true);
    EXPECT_EQ(d.storage.hard_state().term, 0u);
    EXPECT_LE(d.storage.durable_last_index(), 5u);
    if (d.storage.durable_last_index() > 0) torn_some = true;
    EXPECT_EQ(d.storage.recover().entries.size(), d.storage.durable_last_index());
  }
  EXPECT_TRUE(torn_some);
}

}  // namespace
}  // namespace zkraft::sim
