// Snapshot data in its own file beside the LevelDB (LogStorage::write_snapshot_data and
// publish_snapshot): the record's file byte and the file names, replacing and sweeping files,
// damage to a file, the chunk layout written before files, data written while the log is appended.

#include <gtest/gtest.h>
#include <leveldb/env.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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

// Written before snapshot files: no in_file byte. Still read, as data in chunks.
std::string legacy_record(const storage::SnapshotRecord& r) {
  std::string v = storage::encode_snapshot_record(r);
  v.resize(v.size() - 13);  // the CRC, full_size and the in_file byte
  storage::put_u32(v, crc32c(v));
  return v;
}

// Written before appends to the stored file: no full_size. Read as all of the data.
std::string record_before_appends(const storage::SnapshotRecord& r) {
  std::string v = storage::encode_snapshot_record(r);
  v.resize(v.size() - 12);  // the CRC and full_size
  storage::put_u32(v, crc32c(v));
  return v;
}

TEST(StorageCodec, SnapshotRecordKeepsItsFullSizeAndOneWrittenBeforeAppendsIsAllFull) {
  storage::SnapshotRecord r;
  r.meta = SnapshotMeta{42, 5, Membership{{1}, {}}};
  r.generation = 9;
  r.data_size = 1000;
  r.full_size = 600;
  r.in_file = true;
  storage::SnapshotRecord d;
  ASSERT_TRUE(storage::decode_snapshot_record(storage::encode_snapshot_record(r), &d));
  EXPECT_EQ(d.full_size, 600u);
  EXPECT_EQ(d.data_size, 1000u);
  EXPECT_TRUE(d.in_file);
  ASSERT_TRUE(storage::decode_snapshot_record(record_before_appends(r), &d));
  EXPECT_EQ(d.full_size, 1000u);
  EXPECT_TRUE(d.in_file);
  r.full_size = 1001;  // more written whole than there is
  EXPECT_FALSE(storage::decode_snapshot_record(storage::encode_snapshot_record(r), &d));
}

TEST(StorageCodec, SnapshotRecordWithoutTheFileByteIsInChunks) {
  storage::SnapshotRecord r;
  r.meta = SnapshotMeta{42, 5, Membership{{1, 2, 3}, {}}};
  r.generation = 7;
  r.data_size = 10;
  r.chunk_count = 1;
  r.data_crc = 1;
  r.in_file = true;
  storage::SnapshotRecord d;
  ASSERT_TRUE(storage::decode_snapshot_record(legacy_record(r), &d));
  EXPECT_FALSE(d.in_file);
  EXPECT_EQ(d.generation, 7u);
  EXPECT_EQ(d.chunk_count, 1u);
  std::string bad = storage::encode_snapshot_record(r);
  bad[bad.size() - 13] = 2;  // neither chunks nor file (before full_size and the checksum)
  bad.resize(bad.size() - 4);
  storage::put_u32(bad, crc32c(std::string_view(bad)));
  EXPECT_FALSE(storage::decode_snapshot_record(bad, &d));
}

TEST(StorageCodec, SnapshotFileNames) {
  EXPECT_EQ(storage::snapshot_file_name(12), "snapshot-12.data");
  EXPECT_EQ(storage::parse_snapshot_file_name("snapshot-12.data"), std::optional<uint64_t>(12));
  EXPECT_EQ(storage::parse_snapshot_file_name(storage::snapshot_file_name(UINT64_MAX)),
            std::optional<uint64_t>(UINT64_MAX));
  for (const char* other : {"snapshot-.data", "snapshot-012.data", "snapshot-1x.data", "snapshot-1.dat",
                            "snapshot-18446744073709551616.data", "000005.ldb", "CURRENT", "LOG"}) {
    EXPECT_EQ(storage::parse_snapshot_file_name(other), std::nullopt) << other;
  }
}

std::vector<std::string> snapshot_files(const std::string& dir) {
  std::vector<std::string> names, out;
  EXPECT_TRUE(leveldb::Env::Default()->GetChildren(dir, &names).ok());
  for (const std::string& n : names) {
    if (storage::parse_snapshot_file_name(n)) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// How many v1 snapshot chunks ("s" keys) a closed log still holds in LevelDB.
int snapshot_chunks(const std::string& dir) {
  int chunks = 0;
  for (const auto& [key, value] : raw_contents(dir)) chunks += key[0] == 's' ? 1 : 0;
  return chunks;
}

TEST(LogStorage, NewerSnapshotReplacesOlderData) {
  TempDir tmp;
  StorageOptions opts;
  opts.snapshot_sync_bytes = 10;  // many syncs per file
  std::string err;
  {
    auto st = LogStorage::open(tmp.path(), opts, &err);
    ASSERT_NE(st, nullptr) << err;
    ASSERT_TRUE(st->append(make_entries(1, 20, 1), nullptr, true).is_ok());
    ASSERT_TRUE(st->save_snapshot(SnapshotMeta{10, 1, {}}, std::string(95, 'a')).is_ok());
    ASSERT_TRUE(st->save_snapshot(SnapshotMeta{15, 1, {}}, std::string(33, 'b')).is_ok());
    st->wait_for_file_removals();  // the older file goes on the remover's thread
    EXPECT_EQ(snapshot_files(tmp.path()).size(), 1u);
  }
  auto st = LogStorage::open(tmp.path(), opts, &err);
  ASSERT_NE(st, nullptr) << err;
  SnapshotMeta m;
  std::string data;
  ASSERT_TRUE(st->load_snapshot(&m, &data).is_ok());
  EXPECT_EQ(m.index, 15u);
  EXPECT_EQ(data, std::string(33, 'b'));
  st.reset();
  EXPECT_EQ(snapshot_files(tmp.path()).size(), 1u);
  EXPECT_EQ(snapshot_chunks(tmp.path()), 0);  // snapshot data no longer goes into LevelDB
}

// A closed log in `dir` with entries 1..5 and a stored snapshot at 5; the path of its data file.
std::string log_with_a_snapshot_file(const std::string& dir) {
  {
    auto st = open_ok(dir);
    EXPECT_TRUE(st->append(make_entries(1, 5, 1), nullptr, true).is_ok());
    EXPECT_TRUE(st->save_snapshot(SnapshotMeta{5, 1, {}}, "snapshot-data").is_ok());
  }
  const std::vector<std::string> files = snapshot_files(dir);
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? std::string() : dir + "/" + files[0];
}

TEST(LogStorage, CorruptSnapshotDataIsReported) {
  TempDir tmp;
  const std::string path = log_with_a_snapshot_file(tmp.path());
  ASSERT_FALSE(path.empty());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(12);
    f.put('4');  // same size, one byte flipped
  }
  auto st = open_ok(tmp.path());
  SnapshotMeta m;
  std::string data;
  EXPECT_EQ(st->load_snapshot(&m, &data).code(), Status::Code::kCorruption);
  LogStorage::MappedSnapshot mapped;
  EXPECT_EQ(st->map_snapshot(&m, &mapped).code(), Status::Code::kCorruption);
  EXPECT_TRUE(mapped.bytes().empty());
}

TEST(LogStorage, MappedSnapshotHasTheBytesLoadSnapshotReads) {
  TempDir tmp;
  auto st = open_ok(tmp.path());
  SnapshotMeta m;
  LogStorage::MappedSnapshot none;
  EXPECT_EQ(st->map_snapshot(&m, &none).code(), Status::Code::kUnavailable);  // nothing stored
  ASSERT_TRUE(st->append(make_entries(1, 9, 1), nullptr, true).is_ok());
  std::string data(2 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 13 + 5);
  ASSERT_TRUE(st->save_snapshot(SnapshotMeta{9, 1, Membership{{1}, {}}}, data).is_ok());
  {
    LogStorage::MappedSnapshot mapped;
    ASSERT_TRUE(st->map_snapshot(&m, &mapped).is_ok());
    EXPECT_EQ(m, (SnapshotMeta{9, 1, Membership{{1}, {}}}));
    EXPECT_EQ(mapped.bytes(), data);
    // A newer snapshot replaces (and removes) the file; the mapping still reads the old bytes.
    ASSERT_TRUE(st->append(make_entries(10, 12, 1), nullptr, true).is_ok());
    ASSERT_TRUE(st->save_snapshot(SnapshotMeta{12, 1, {}}, "newer").is_ok());
    EXPECT_EQ(mapped.bytes(), data);
  }
  LogStorage::MappedSnapshot again;
  ASSERT_TRUE(st->map_snapshot(&m, &again).is_ok());
  EXPECT_EQ(again.bytes(), "newer");
}

TEST(LogStorage, StoredSnapshotFileMissingOrCutShortRefusesToOpen) {
  for (bool remove : {true, false}) {
    TempDir tmp;
    const std::string path = log_with_a_snapshot_file(tmp.path());
    ASSERT_FALSE(path.empty());
    if (remove) {
      ASSERT_EQ(::unlink(path.c_str()), 0);
    } else {
      ASSERT_EQ(::truncate(path.c_str(), 4), 0);
    }
    std::string err;
    EXPECT_EQ(LogStorage::open(tmp.path(), StorageOptions{}, &err), nullptr);
    EXPECT_NE(err.find(path), std::string::npos) << err;
  }
}

TEST(LogStorage, SnapshotInChunksFromAnOlderVersionIsStillRead) {
  TempDir tmp;
  { auto st = open_ok(tmp.path()); ASSERT_TRUE(st->append(make_entries(1, 9, 1), nullptr, true).is_ok()); }
  const std::string data = "old-layout-snapshot";
  storage::SnapshotRecord r;
  r.meta = SnapshotMeta{8, 1, Membership{{1, 2, 3}, {}}};
  r.generation = 4;
  r.data_size = data.size();
  r.chunk_count = 2;
  r.data_crc = crc32c(data);
  raw_write(tmp.path(), [&](leveldb::WriteBatch& b) {
    b.Put(storage::snapshot_chunk_key(4, 0), data.substr(0, 10));
    b.Put(storage::snapshot_chunk_key(4, 1), data.substr(10));
    b.Put(storage::snapshot_chunk_key(3, 0), "an older generation, left behind");
    b.Put(std::string(storage::kSnapshotMetaKey), legacy_record(r));
  });
  {
    auto st = open_ok(tmp.path());
    SnapshotMeta m;
    std::string got;
    ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
    EXPECT_EQ(m, r.meta);
    EXPECT_EQ(got, data);
    LogStorage::MappedSnapshot mapped;  // not a file: RaftNode loads it instead
    EXPECT_EQ(st->map_snapshot(&m, &mapped).code(), Status::Code::kUnavailable);
    // A newer snapshot goes to a file; the old chunks are dropped.
    ASSERT_TRUE(st->save_snapshot(SnapshotMeta{9, 1, {}}, "new").is_ok());
    ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
    EXPECT_EQ(got, "new");
  }
  EXPECT_EQ(snapshot_chunks(tmp.path()), 0);
  auto st = open_ok(tmp.path());
  SnapshotMeta m;
  std::string got;
  ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
  EXPECT_EQ(m.index, 9u);
  EXPECT_EQ(got, "new");
}

TEST(LogStorage, UnpublishedSnapshotFileIsRemovedOnOpenAndItsNameNotReused) {
  TempDir tmp;
  std::string first_name;
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 9, 1), nullptr, true).is_ok());
    LogStorage::PreparedSnapshot p;
    ASSERT_TRUE(st->write_snapshot_data(SnapshotMeta{5, 1, {}}, "never published", &p).is_ok());
    ASSERT_EQ(snapshot_files(tmp.path()).size(), 1u);  // the crash comes before the publish
    first_name = snapshot_files(tmp.path())[0];
  }
  auto st = open_ok(tmp.path());
  EXPECT_TRUE(snapshot_files(tmp.path()).empty());
  EXPECT_FALSE(st->snapshot_meta().has_value());
  ASSERT_TRUE(st->save_snapshot(SnapshotMeta{6, 1, {}}, "published").is_ok());
  ASSERT_EQ(snapshot_files(tmp.path()).size(), 1u);
  EXPECT_NE(snapshot_files(tmp.path())[0], first_name);
}

TEST(LogStorage, SnapshotDataIsWrittenWhileTheLogIsAppendedAndPublishedAfter) {
  TempDir tmp;
  auto st = open_ok(tmp.path());
  ASSERT_TRUE(st->append(make_entries(1, 100, 1), nullptr, true).is_ok());
  std::string data(3 * 1024 * 1024 + 5, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + 1);
  LogStorage::PreparedSnapshot p;
  Status written = Status::ok();
  std::thread writer([&] { written = st->write_snapshot_data(SnapshotMeta{100, 1, {}}, data, &p); });
  for (Index i = 101; i <= 300; ++i) ASSERT_TRUE(st->append({make_entry(i, 1)}, nullptr, true).is_ok());
  writer.join();
  ASSERT_TRUE(written.is_ok()) << written.to_string();
  EXPECT_FALSE(st->snapshot_meta().has_value());  // not the stored snapshot until published
  ASSERT_TRUE(st->publish_snapshot(p).is_ok());
  EXPECT_EQ(st->snapshot_meta(), (SnapshotMeta{100, 1, {}}));
  EXPECT_EQ(st->first_index(), 1u);  // the log holds entry 100: kept
  EXPECT_EQ(st->last_index(), 300u);
  st.reset();
  st = open_ok(tmp.path());
  SnapshotMeta m;
  std::string got;
  ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
  EXPECT_EQ(got, data);
  EXPECT_EQ(st->last_index(), 300u);
}

TEST(LogStorage, PublishingAnOutdatedSnapshotRemovesItsFileAndChangesNothing) {
  TempDir tmp;
  auto st = open_ok(tmp.path());
  ASSERT_TRUE(st->append(make_entries(1, 30, 1), nullptr, true).is_ok());
  LogStorage::PreparedSnapshot own;
  ASSERT_TRUE(st->write_snapshot_data(SnapshotMeta{20, 1, {}}, "own", &own).is_ok());
  // Meanwhile the leader's snapshot, beyond the log, replaces it.
  ASSERT_TRUE(st->save_snapshot(SnapshotMeta{50, 2, {}}, "leader").is_ok());
  ASSERT_EQ(snapshot_files(tmp.path()).size(), 2u);
  EXPECT_EQ(st->publish_snapshot(own).code(), Status::Code::kSnapshotOutOfDate);
  EXPECT_EQ(snapshot_files(tmp.path()).size(), 1u);
  EXPECT_EQ(st->snapshot_meta(), (SnapshotMeta{50, 2, {}}));
  EXPECT_EQ(st->first_index(), 51u);
  // And one that is already out of date is not even written.
  LogStorage::PreparedSnapshot late;
  EXPECT_EQ(st->write_snapshot_data(SnapshotMeta{40, 1, {}}, "late", &late).code(),
            Status::Code::kSnapshotOutOfDate);
  EXPECT_EQ(snapshot_files(tmp.path()).size(), 1u);
}

TEST(LogStorage, AbandonedSnapshotWriteLeavesNoFile) {
  TempDir tmp;
  StorageOptions opts;
  opts.snapshot_sync_bytes = 1;  // a check between every byte
  std::string err;
  auto st = LogStorage::open(tmp.path(), opts, &err);
  ASSERT_NE(st, nullptr) << err;
  std::atomic<bool> abandon{true};
  LogStorage::PreparedSnapshot p;
  EXPECT_EQ(st->write_snapshot_data(SnapshotMeta{0, 0, {}}, "data", &p, &abandon).code(), Status::Code::kClosed);
  EXPECT_TRUE(snapshot_files(tmp.path()).empty());
}

}  // namespace
}  // namespace zkraft::consensus
