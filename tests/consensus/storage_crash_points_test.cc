// Crash consistency at every boundary (issue 9): a fixed workload of LogStorage operations that a
// server's storage thread performs (appends with and without sync, hard-state updates, a snapshot
// of its own log and the compaction after it, a snapshot installed from a leader that replaces the
// whole log, more appends) is run once without faults to learn the state after each operation and
// how many writes and fsyncs it makes. Then, for EVERY k, it runs again on a machine that dies
// after its k-th write or fsync (CrashEnv::freeze_after), loses what was not synced (each tear
// mode), restarts and checks:
//   - LogStorage::open recovers (a power cut is not corruption);
//   - the recovered state is exactly the state after some operation j, where j is at least the
//     last operation acknowledged as durable (a synced append, a snapshot) and at most the one that
//     failed: nothing acknowledged is lost, nothing is half-applied (a snapshot's file and its
//     record, an append's entries and hard state, appear together or not at all);
//   - the recovered storage takes a new synced append, which survives a clean reopen.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "consensus/log_storage.h"
#include "storage_fault_env.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::CrashEnv;
using testing::make_entries;
using testing::make_entry;
using testing::TearMode;
using testing::TempDir;

// Everything a restarted server reads back from its log.
struct Observed {
  Index first = 0;
  Index last = 0;
  std::vector<Entry> entries;  // first..last
  HardState hs;
  std::optional<SnapshotMeta> snapshot;
  std::string snapshot_data;
  bool operator==(const Observed&) const = default;
};

Observed observe(const LogStorage& st) {
  Observed o;
  o.first = st.first_index();
  o.last = st.last_index();
  if (o.last >= o.first) {
    Status s = st.entries(o.first, o.last + 1, UINT64_MAX, &o.entries);
    EXPECT_TRUE(s.is_ok()) << s.to_string();
  }
  o.hs = st.hard_state();
  o.snapshot = st.snapshot_meta();
  if (o.snapshot) {
    SnapshotMeta meta;
    Status s = st.load_snapshot(&meta, &o.snapshot_data);
    EXPECT_TRUE(s.is_ok()) << s.to_string();
    EXPECT_EQ(meta, *o.snapshot);
  }
  return o;
}

std::string describe(const Observed& o) {
  return "first " + std::to_string(o.first) + " last " + std::to_string(o.last) + " term " +
         std::to_string(o.hs.term) + " commit " + std::to_string(o.hs.commit) + " snapshot " +
         (o.snapshot ? std::to_string(o.snapshot->index) : std::string("none"));
}

// A deterministic snapshot body, different per index.
std::string snapshot_data(Index index, size_t bytes) {
  std::string data(bytes, '\0');
  std::mt19937 rng(static_cast<uint32_t>(index));
  for (char& c : data) c = static_cast<char>(rng());
  return data;
}

Membership members() {
  Membership m;
  m.voters = {1, 2, 3};
  return m;
}

struct Op {
  const char* what;
  bool durable;  // acknowledged as durable when it returns ok
  std::function<Status(LogStorage&)> run;
};

std::vector<Op> workload() {
  std::vector<Op> ops;
  auto append = [&ops](const char* what, std::vector<Entry> entries, std::optional<HardState> hs,
                       bool sync) {
    ops.push_back({what, sync, [entries, hs, sync](LogStorage& st) {
                     return st.append(entries, hs ? &*hs : nullptr, sync);
                   }});
  };
  append("append 1..5, vote", make_entries(1, 5, 1), HardState{1, 1, 0}, true);
  append("append 6..8 unsynced", make_entries(6, 8, 1), std::nullopt, false);
  append("append 9..10, commit 8", make_entries(9, 10, 1), HardState{1, 1, 8}, true);
  append("hard state only: term 2", {}, HardState{2, 2, 8}, true);
  append("replace 9..10 by a new leader's 9..12", make_entries(9, 12, 2), HardState{2, 2, 10}, true);
  ops.push_back({"own snapshot at 10", true, [](LogStorage& st) {
                   return st.save_snapshot(SnapshotMeta{10, 2, members()}, snapshot_data(10, 200'000));
                 }});
  ops.push_back({"compact through 10", false, [](LogStorage& st) { return st.compact(10); }});
  append("append 13..14 unsynced", make_entries(13, 14, 2), std::nullopt, false);
  ops.push_back({"install the leader's snapshot at 40 (replaces the log)", true, [](LogStorage& st) {
                   return st.save_snapshot(SnapshotMeta{40, 3, members()}, snapshot_data(40, 150'000));
                 }});
  append("append 41..45 after the install", make_entries(41, 45, 3), HardState{3, 3, 43}, true);
  // As GroupCommitLog::store_snapshot_beside stores an own snapshot: its data first, then a
  // synced append made meanwhile, then the publish.
  auto prepared = std::make_shared<LogStorage::PreparedSnapshot>();
  ops.push_back({"own snapshot at 44: its data written beside the log", false, [prepared](LogStorage& st) {
                   return st.write_snapshot_data(SnapshotMeta{44, 3, members()}, snapshot_data(44, 90'000),
                                                 prepared.get());
                 }});
  append("append 46 while the snapshot is not published", {make_entry(46, 3)}, HardState{3, 3, 44}, true);
  ops.push_back({"own snapshot at 44 published", true,
                 [prepared](LogStorage& st) { return st.publish_snapshot(*prepared); }});
  ops.push_back({"compact through 44", false, [](LogStorage& st) { return st.compact(44); }});
  append("append 47 unsynced", {make_entry(47, 3)}, std::nullopt, false);
  return ops;
}

StorageOptions options(CrashEnv* env) {
  StorageOptions o;
  o.env = env;
  o.snapshot_sync_bytes = 64 << 10;  // several syncs per snapshot file: each one a boundary
  return o;
}

// The states after each operation (states[0]: a fresh log) and the number of boundaries.
struct Reference {
  std::vector<Observed> states;
  int64_t boundaries = 0;
};

Reference reference_run() {
  TempDir tmp;
  CrashEnv env;
  std::string err;
  auto st = LogStorage::open(tmp.path(), options(&env), &err);
  EXPECT_NE(st, nullptr) << err;
  Reference ref;
  if (!st) return ref;
  const int64_t at_open = env.events_seen();
  ref.states.push_back(observe(*st));
  for (const Op& op : workload()) {
    Status s = op.run(*st);
    EXPECT_TRUE(s.is_ok()) << op.what << ": " << s.to_string();
    ref.states.push_back(observe(*st));
  }
  ref.boundaries = env.events_seen() - at_open;
  return ref;
}

void crash_at_every_boundary(TearMode mode) {
  const Reference ref = reference_run();
  ASSERT_GT(ref.boundaries, 20);  // the workload really crosses many writes and fsyncs
  const std::vector<Op> ops = workload();
  std::mt19937 rng(7);
  for (int64_t k = 0; k <= ref.boundaries; ++k) {
    SCOPED_TRACE("the machine dies after boundary " + std::to_string(k) + " of " +
                 std::to_string(ref.boundaries));
    TempDir tmp;
    CrashEnv env;
    std::string err;
    auto st = LogStorage::open(tmp.path(), options(&env), &err);
    ASSERT_NE(st, nullptr) << err;
    env.freeze_after(env.events_seen() + k);
    size_t acknowledged = 0;  // states[acknowledged] must survive
    size_t attempted = 0;     // states[attempted] is the most that may survive
    for (size_t i = 0; i < ops.size(); ++i) {
      attempted = i + 1;
      if (!ops[i].run(*st).is_ok()) break;  // a server stops at its first failed write
      if (ops[i].durable) acknowledged = i + 1;
    }
    st.reset();
    env.crash(mode, rng);

    st = LogStorage::open(tmp.path(), options(&env), &err);
    ASSERT_NE(st, nullptr) << "recovery failed: " << err;
    const Observed got = observe(*st);
    std::optional<size_t> match;
    for (size_t j = acknowledged; j <= attempted && !match; ++j) {
      if (ref.states[j] == got) match = j;
    }
    ASSERT_TRUE(match.has_value())
        << "recovered " << describe(got) << "; acknowledged up to op " << acknowledged << " ("
        << describe(ref.states[acknowledged]) << "), attempted " << attempted;

    // The recovered log is usable: a synced append lands and survives a clean reopen.
    const Index next = got.last + 1;
    Term last_term = 0;  // a server's term is never below its log's (log_storage checks it)
    ASSERT_TRUE(st->term(got.last, &last_term).is_ok());
    const Term term = std::max<Term>({got.hs.term, last_term, 1});
    ASSERT_TRUE(st->append({make_entry(next, term)}, nullptr, true).is_ok());
    st.reset();
    st = LogStorage::open(tmp.path(), options(&env), &err);
    ASSERT_NE(st, nullptr) << err;
    EXPECT_EQ(st->last_index(), next);
  }
}

TEST(StorageCrashPoints, DropUnsyncedAtEveryBoundaryRecoversAnAcknowledgedState) {
  crash_at_every_boundary(TearMode::kDropUnsynced);
}

TEST(StorageCrashPoints, TornWriteAtEveryBoundaryRecoversAnAcknowledgedState) {
  crash_at_every_boundary(TearMode::kTornWrite);
}

TEST(StorageCrashPoints, GarbageTailAtEveryBoundaryRecoversAnAcknowledgedState) {
  crash_at_every_boundary(TearMode::kGarbageTail);
}

}  // namespace
}  // namespace zkraft::consensus
