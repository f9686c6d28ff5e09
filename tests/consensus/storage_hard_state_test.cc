// Where LogStorage keeps the hard state (storage_codec.h): among the entries, at the log's end,
// so that a loaded log's LevelDB tables never overlap and are never merged. These tests check
// that every way the log's end moves (truncation, compaction, a leader's snapshot, a damaged
// tail) keeps the current hard state, that a v1 database (one "h" key) is moved to v2, and that
// steady appends make LevelDB merge nothing.

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "consensus/log_storage.h"
#include "consensus/storage_codec.h"
#include "consensus/storage_crc32c.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::make_entries;
using testing::make_entry;
using testing::open_ok;
using testing::raw_contents;
using testing::raw_write;
using testing::TempDir;

// The indexes of the hard-state records in a closed log.
std::vector<Index> hard_state_records(const std::string& dir) {
  std::vector<Index> at;
  for (const auto& [key, value] : raw_contents(dir)) {
    if (auto i = storage::parse_hard_state_key(key)) at.push_back(*i);
  }
  return at;
}

TEST(LogStorageHardState, TheNewestRecordIsAtTheLogsEndAndWinsOnReopen) {
  TempDir tmp;
  const HardState a{1, 1, 0}, b{1, 1, 4}, c{2, 3, 9};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 5, 1), &a, true).is_ok());
    ASSERT_TRUE(st->append(make_entries(6, 8, 1), nullptr, true).is_ok());
    ASSERT_TRUE(st->append(make_entries(9, 10, 1), &b, true).is_ok());
    ASSERT_TRUE(st->append({}, &c, true).is_ok());  // a vote alone: same end, newer value
    EXPECT_EQ(st->hard_state(), c);
  }
  EXPECT_EQ(hard_state_records(tmp.path()), (std::vector<Index>{5, 10}));
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->hard_state(), c);
  EXPECT_EQ(st->last_index(), 10u);
  // The records between the entries are not entries.
  std::vector<Entry> all;
  ASSERT_TRUE(st->entries(1, 11, UINT64_MAX, &all).is_ok());
  EXPECT_EQ(all, make_entries(1, 10, 1));
  std::vector<Entry> tail;
  ASSERT_TRUE(st->entries(6, 9, UINT64_MAX, &tail).is_ok());
  EXPECT_EQ(tail, make_entries(6, 8, 1));
}

TEST(LogStorageHardState, NothingButEntriesAndRecordsAmongThemChangesAsTheLogGrows) {
  TempDir tmp;
  {
    auto st = open_ok(tmp.path());
    for (Index i = 1; i <= 50; ++i) {
      HardState hs{1, 1, i - 1};
      ASSERT_TRUE(st->append({make_entry(i, 1, "x")}, &hs, true).is_ok());
    }
  }
  // Every key but the three fixed records sorts among the entries: that is what keeps LevelDB's
  // tables apart (storage_codec.h).
  for (const auto& [key, value] : raw_contents(tmp.path())) {
    if (key == storage::kFormatKey) continue;
    ASSERT_EQ(key[0], storage::kEntryPrefix) << key;
  }
  EXPECT_EQ(hard_state_records(tmp.path()).size(), 50u);
}

TEST(LogStorageHardState, ATruncationKeepsTheHardStateItRemovesTheRecordOf) {
  TempDir tmp;
  const HardState a{1, 2, 5};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 10, 1), &a, true).is_ok());
    // A new leader replaces 6..10 with a shorter suffix and no new hard state: the record at 10
    // goes with the entries, and its value is written again at 7.
    ASSERT_TRUE(st->append(make_entries(6, 7, 2), nullptr, true).is_ok());
    EXPECT_EQ(st->hard_state(), a);
  }
  EXPECT_EQ(hard_state_records(tmp.path()), (std::vector<Index>{7}));
  {
    auto st = open_ok(tmp.path());
    EXPECT_EQ(st->hard_state(), a);
    EXPECT_EQ(st->last_index(), 7u);
    const HardState b{3, 3, 6};
    ASSERT_TRUE(st->append(make_entries(7, 7, 3), &b, true).is_ok());
  }
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->hard_state(), (HardState{3, 3, 6}));
}

TEST(LogStorageHardState, CompactionDropsOldRecordsAndKeepsTheNewest) {
  TempDir tmp;
  const HardState a{1, 1, 3}, b{1, 1, 10};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 4, 1), &a, true).is_ok());
    ASSERT_TRUE(st->append(make_entries(5, 10, 1), &b, true).is_ok());
    ASSERT_TRUE(st->save_snapshot(SnapshotMeta{10, 1, Membership{{1}, {}}}, "tree").is_ok());
    ASSERT_TRUE(st->compact(6).is_ok());  // the record at 4 goes; the one at 10 stays
  }
  EXPECT_EQ(hard_state_records(tmp.path()), (std::vector<Index>{10}));
  {
    auto st = open_ok(tmp.path());
    EXPECT_EQ(st->hard_state(), b);
    // Compacting through the log's end takes the newest record's index too: written again there.
    ASSERT_TRUE(st->compact(10).is_ok());
    EXPECT_EQ(st->first_index(), 11u);
    EXPECT_EQ(st->last_index(), 10u);
  }
  EXPECT_EQ(hard_state_records(tmp.path()), (std::vector<Index>{10}));
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->hard_state(), b);
  ASSERT_TRUE(st->append(make_entries(11, 11, 1), nullptr, true).is_ok());
}

TEST(LogStorageHardState, ALeadersSnapshotMovesTheHardStateToTheNewLogsEnd) {
  TempDir tmp;
  const HardState a{4, 2, 30};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 30, 1), &a, true).is_ok());
    ASSERT_TRUE(st->save_snapshot(SnapshotMeta{200, 4, Membership{{1, 2, 3}, {}}}, "leader's").is_ok());
    EXPECT_EQ(st->first_index(), 201u);
  }
  EXPECT_EQ(hard_state_records(tmp.path()), (std::vector<Index>{200}));
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->hard_state(), a);
  EXPECT_EQ(st->last_index(), 200u);
}

TEST(LogStorageHardState, ADamagedTailKeepsTheVoteOfARecordPastIt) {
  TempDir tmp;
  const HardState voted{5, 3, 10};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 20, 1), &voted, true).is_ok());
  }
  raw_write(tmp.path(), [](leveldb::WriteBatch& b) {
    for (Index i : {19, 20}) {  // checksum mismatches: a damaged tail from 19 on
      std::string v = storage::encode_entry_value(make_entry(i, 1));
      v[6] ^= 0x40;
      b.Put(storage::entry_key(i), v);
    }
  });
  {
    auto st = open_ok(tmp.path());
    EXPECT_EQ(st->last_index(), 18u);
    EXPECT_EQ(st->hard_state(), voted);  // the record at 20 was past the kept log
  }
  EXPECT_EQ(hard_state_records(tmp.path()), (std::vector<Index>{18}));
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->hard_state(), voted);
}

TEST(LogStorageHardState, ACorruptRecordRefusesToOpen) {
  TempDir tmp;
  const HardState a{1, 1, 2};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 3, 1), &a, true).is_ok());
  }
  raw_write(tmp.path(), [&](leveldb::WriteBatch& b) {
    std::string v = storage::encode_hard_state(a);
    v[0] ^= 0x01;
    b.Put(storage::hard_state_key(3), v);
  });
  std::string err;
  EXPECT_EQ(LogStorage::open(tmp.path(), StorageOptions{}, &err), nullptr);
  EXPECT_NE(err.find("hard state record at log index 3"), std::string::npos) << err;
}

TEST(LogStorageHardState, AV1DatabaseIsMovedToV2) {
  TempDir tmp;
  const HardState hs{3, 2, 15};
  const std::string data = "a v1 snapshot, in chunks";
  storage::SnapshotRecord rec;
  rec.meta = SnapshotMeta{10, 1, Membership{{1, 2, 3}, {}}};
  rec.generation = 2;
  rec.data_size = data.size();
  rec.chunk_count = 1;
  rec.data_crc = crc32c(data);
  raw_write(tmp.path(), [&](leveldb::WriteBatch& b) {
    b.Put(std::string(storage::v1::kFormatKey), std::string(storage::v1::kFormat));
    b.Put(std::string(storage::v1::kHardStateKey), storage::encode_hard_state(hs));
    b.Put(std::string(storage::v1::kFirstIndexKey), storage::encode_first_index({11, 1}));
    b.Put(std::string(storage::v1::kSnapshotMetaKey), storage::encode_snapshot_record(rec));
    b.Put(storage::snapshot_chunk_key(2, 0), data);
    for (const Entry& e : make_entries(11, 20, 1)) b.Put(storage::entry_key(e.index), storage::encode_entry_value(e));
  });
  auto check = [&](LogStorage& st) {
    EXPECT_EQ(st.hard_state(), hs);
    EXPECT_EQ(st.first_index(), 11u);
    EXPECT_EQ(st.last_index(), 20u);
    Term t = 0;
    ASSERT_TRUE(st.term(10, &t).is_ok());
    EXPECT_EQ(t, 1u);
    std::vector<Entry> all;
    ASSERT_TRUE(st.entries(11, 21, UINT64_MAX, &all).is_ok());
    EXPECT_EQ(all, make_entries(11, 20, 1));
    SnapshotMeta m;
    std::string got;
    ASSERT_TRUE(st.load_snapshot(&m, &got).is_ok());
    EXPECT_EQ(m, rec.meta);
    EXPECT_EQ(got, data);
  };
  {
    auto st = open_ok(tmp.path());
    ASSERT_NE(st, nullptr);
    check(*st);
  }
  auto raw = raw_contents(tmp.path());
  EXPECT_EQ(raw[std::string(storage::kFormatKey)], storage::kFormatV2);
  for (std::string_view old : {storage::v1::kFormatKey, storage::v1::kHardStateKey, storage::v1::kFirstIndexKey,
                               storage::v1::kSnapshotMetaKey}) {
    EXPECT_EQ(raw.count(std::string(old)), 0u) << old;
  }
  EXPECT_EQ(hard_state_records(tmp.path()), (std::vector<Index>{20}));
  auto st = open_ok(tmp.path());
  ASSERT_NE(st, nullptr);
  check(*st);
}

TEST(LogStorageHardState, AnUnknownV2MarkerIsRefused) {
  TempDir tmp;
  raw_write(tmp.path(), [](leveldb::WriteBatch& b) { b.Put(std::string(storage::kFormatKey), "zkraft-log-v9"); });
  std::string err;
  EXPECT_EQ(LogStorage::open(tmp.path(), StorageOptions{}, &err), nullptr);
  EXPECT_NE(err.find("unknown log format 'zkraft-log-v9'"), std::string::npos) << err;
}

// Counts LevelDB's merging compactions in its own log of this database.
size_t merges_in_leveldb_log(const std::string& dir) {
  std::ifstream in(dir + "/LOG");
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) n += line.find("Compacting ") != std::string::npos;
  return n;
}

TEST(LogStorageHardState, SteadyAppendsWithTheHardStateMakeLevelDBMergeNothing) {
  TempDir tmp;
  StorageOptions small;
  small.write_buffer_size = 64 << 10;  // a table every ~64 KiB: dozens of them
  {
    auto st = open_ok(tmp.path(), small);
    const std::string data(200, 'd');
    Index next = 1;
    for (int batch = 0; batch < 600; ++batch) {
      std::vector<Entry> es;
      for (int i = 0; i < 20; ++i, ++next) es.push_back(make_entry(next, 1, data));
      HardState hs{1, 1, next - 21};
      ASSERT_TRUE(st->append(es, &hs, false).is_ok());
    }
    ASSERT_EQ(st->last_index(), 12000u);
  }
  // ~2.6 MB of entries went through ~40 memtables. With v1's "h" in every batch each table
  // overlapped the others and LevelDB merged them every 4 tables.
  EXPECT_EQ(merges_in_leveldb_log(tmp.path()), 0u);
}

}  // namespace
}  // namespace zkraft::consensus
