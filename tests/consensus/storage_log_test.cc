// LogStorage round trips: append/read/truncate/compact/snapshot, reopen, recovery of a damaged tail
// and refusal of mid-log corruption. Snapshot files: storage_snapshot_file_test.cc.

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <memory>

#include "consensus/log_storage.h"
#include "consensus/storage_codec.h"
#include "consensus/storage_crc32c.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::make_entries;
using testing::make_entry;
using testing::open_ok;
using testing::raw_write;
using testing::TempDir;

std::vector<Entry> read_all(const LogStorage& st) {
  std::vector<Entry> out;
  Status s = st.entries(st.first_index(), st.last_index() + 1, UINT64_MAX, &out);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return out;
}

TEST(StorageCrc32c, KnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string s = "The quick brown fox jumps over the lazy dog, several times over.";
  EXPECT_EQ(crc32c_extend(crc32c_extend(0, s.data(), 13), s.data() + 13, s.size() - 13), crc32c(s));
}

TEST(StorageCrc32c, HardwareAndPortableAgree) {
  // Every length up to a few words past a block, at every alignment, continued from a non-zero
  // CRC: the hardware path has a word loop and a byte tail, each of which could be wrong alone.
  std::string buf(300, '\0');
  uint32_t x = 12345;
  for (char& ch : buf) {
    x = x * 1103515245u + 12345u;
    ch = static_cast<char>(x >> 16);
  }
  EXPECT_EQ(crc32c_extend_portable(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c_extend_hardware(0, "123456789", 9), 0xE3069283u);  // portable if no SSE4.2
  for (size_t off = 0; off < 8; ++off) {
    for (size_t n = 0; off + n <= buf.size(); n += (n < 40 ? 1 : 13)) {
      const uint32_t seed = static_cast<uint32_t>(off * 7919 + n);
      ASSERT_EQ(crc32c_extend_hardware(seed, buf.data() + off, n), crc32c_extend_portable(seed, buf.data() + off, n))
          << "offset " << off << " length " << n;
      ASSERT_EQ(crc32c_extend(seed, buf.data() + off, n), crc32c_extend_portable(seed, buf.data() + off, n));
    }
  }
  if (!crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 here: only the portable path ran";
}

TEST(StorageCodec, EntryChecksumCoversIndexAndData) {
  Entry e = make_entry(7, 3, "hello", EntryType::kConfChange);
  std::string v = storage::encode_entry_value(e);
  Entry d;
  ASSERT_TRUE(storage::decode_entry_value(7, v, &d));
  EXPECT_EQ(d, e);
  EXPECT_FALSE(storage::decode_entry_value(8, v, &d));  // stored under the wrong key
  std::string flipped = v;
  flipped.back() ^= 1;
  EXPECT_FALSE(storage::decode_entry_value(7, flipped, &d));
  EXPECT_FALSE(storage::decode_entry_value(7, v.substr(0, v.size() - 1), &d));
}

TEST(StorageCodec, SnapshotRecordRoundTrip) {
  storage::SnapshotRecord r;
  r.meta = SnapshotMeta{42, 5, Membership{{1, 2, 3}, {9}}};
  r.generation = 3;
  r.data_size = 1000;
  r.chunk_count = 2;
  r.data_crc = 0xdeadbeef;
  storage::SnapshotRecord d;
  ASSERT_TRUE(storage::decode_snapshot_record(storage::encode_snapshot_record(r), &d));
  EXPECT_EQ(d.meta, r.meta);
  EXPECT_EQ(d.generation, 3u);
  EXPECT_EQ(d.data_size, 1000u);
  EXPECT_EQ(d.chunk_count, 2u);
  EXPECT_EQ(d.data_crc, 0xdeadbeefu);
  EXPECT_FALSE(d.in_file);
  r.in_file = true;
  ASSERT_TRUE(storage::decode_snapshot_record(storage::encode_snapshot_record(r), &d));
  EXPECT_TRUE(d.in_file);
}

TEST(LogStorage, FreshLogIsEmpty) {
  TempDir tmp;
  auto st = open_ok(tmp.path());
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->first_index(), 1u);
  EXPECT_EQ(st->last_index(), 0u);
  Term t = 99;
  EXPECT_TRUE(st->term(0, &t).is_ok());
  EXPECT_EQ(t, 0u);
  EXPECT_EQ(st->term(1, &t).code(), Status::Code::kUnavailable);
  EXPECT_EQ(st->hard_state(), HardState{});
  EXPECT_FALSE(st->snapshot_meta().has_value());
  SnapshotMeta m;
  std::string data;
  EXPECT_EQ(st->load_snapshot(&m, &data).code(), Status::Code::kUnavailable);
}

TEST(LogStorage, AppendReadAndReopen) {
  TempDir tmp;
  std::vector<Entry> written = make_entries(1, 50, 1);
  written.push_back(make_entry(51, 2, std::string(5000, 'x'), EntryType::kConfChange));
  written.push_back(make_entry(52, 2, ""));  // empty data: a leader's no-op
  written.back().data.clear();
  HardState hs{2, 3, 40};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(written, &hs, true).is_ok());
    EXPECT_EQ(st->last_index(), 52u);
    EXPECT_EQ(read_all(*st), written);
    Term t = 0;
    ASSERT_TRUE(st->term(51, &t).is_ok());
    EXPECT_EQ(t, 2u);
    EXPECT_EQ(st->hard_state(), hs);
  }
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->first_index(), 1u);
  EXPECT_EQ(st->last_index(), 52u);
  EXPECT_EQ(read_all(*st), written);
  EXPECT_EQ(st->hard_state(), hs);
}

TEST(LogStorage, EntriesHonoursRangeAndByteLimit) {
  TempDir tmp;
  auto st = open_ok(tmp.path());
  std::vector<Entry> es;
  for (Index i = 1; i <= 10; ++i) es.push_back(make_entry(i, 1, std::string(100, 'a' + i)));
  ASSERT_TRUE(st->append(es, nullptr, true).is_ok());
  std::vector<Entry> out;
  ASSERT_TRUE(st->entries(3, 7, UINT64_MAX, &out).is_ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out.front().index, 3u);
  EXPECT_EQ(out.back().index, 6u);
  out.clear();
  ASSERT_TRUE(st->entries(1, 11, 250, &out).is_ok());
  EXPECT_EQ(out.size(), 2u);  // 200 bytes fit, a third would exceed 250
  out.clear();
  ASSERT_TRUE(st->entries(4, 11, 1, &out).is_ok());
  ASSERT_EQ(out.size(), 1u);  // always at least one
  EXPECT_EQ(out[0].index, 4u);
  out.clear();
  EXPECT_EQ(st->entries(5, 12, UINT64_MAX, &out).code(), Status::Code::kUnavailable);
  EXPECT_EQ(st->entries(0, 3, UINT64_MAX, &out).code(), Status::Code::kCompacted);
}

TEST(LogStorage, ConflictingAppendTruncatesSuffix) {
  TempDir tmp;
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 10, 1), nullptr, true).is_ok());
    // A new leader overwrites 6..10 with a shorter suffix from term 2.
    ASSERT_TRUE(st->append(make_entries(6, 7, 2), nullptr, true).is_ok());
    EXPECT_EQ(st->last_index(), 7u);
    Term t = 0;
    ASSERT_TRUE(st->term(7, &t).is_ok());
    EXPECT_EQ(t, 2u);
    EXPECT_EQ(st->term(8, &t).code(), Status::Code::kUnavailable);
  }
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->last_index(), 7u);
  std::vector<Entry> want = make_entries(1, 5, 1);
  for (auto& e : make_entries(6, 7, 2)) want.push_back(e);
  EXPECT_EQ(read_all(*st), want);
}

TEST(LogStorage, AppendWithGapIsRejected) {
  TempDir tmp;
  auto st = open_ok(tmp.path());
  ASSERT_TRUE(st->append(make_entries(1, 3, 1), nullptr, true).is_ok());
  EXPECT_EQ(st->append(make_entries(5, 6, 1), nullptr, true).code(), Status::Code::kInvalidArgument);
  std::vector<Entry> broken = {make_entry(4, 1), make_entry(6, 1)};
  EXPECT_EQ(st->append(broken, nullptr, true).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(st->last_index(), 3u);
}

TEST(LogStorage, HardStateAloneIsDurable) {
  TempDir tmp;
  HardState hs{7, 2, 0};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append({}, &hs, true).is_ok());
  }
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->hard_state(), hs);
  EXPECT_EQ(st->last_index(), 0u);
}

TEST(LogStorage, SnapshotThenCompactKeepsLaterEntries) {
  TempDir tmp;
  std::string data(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + 7);
  SnapshotMeta meta{60, 1, Membership{{1, 2, 3}, {4}}};
  {
    auto st = open_ok(tmp.path());
    std::vector<Entry> es = make_entries(1, 60, 1);
    for (auto& e : make_entries(61, 100, 2)) es.push_back(e);
    ASSERT_TRUE(st->append(es, nullptr, true).is_ok());
    EXPECT_EQ(st->compact(50).code(), Status::Code::kInvalidArgument);  // no snapshot yet
    ASSERT_TRUE(st->save_snapshot(meta, data).is_ok());
    EXPECT_EQ(st->first_index(), 1u);  // matching entry: log kept
    EXPECT_EQ(st->compact(61).code(), Status::Code::kInvalidArgument);  // beyond the snapshot
    ASSERT_TRUE(st->compact(60).is_ok());
    EXPECT_EQ(st->first_index(), 61u);
    EXPECT_EQ(st->last_index(), 100u);
    Term t = 0;
    ASSERT_TRUE(st->term(60, &t).is_ok());
    EXPECT_EQ(t, 1u);
    EXPECT_EQ(st->term(59, &t).code(), Status::Code::kCompacted);
  }
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->first_index(), 61u);
  EXPECT_EQ(st->last_index(), 100u);
  Term t = 0;
  ASSERT_TRUE(st->term(60, &t).is_ok());
  EXPECT_EQ(t, 1u);
  ASSERT_EQ(st->snapshot_meta(), meta);
  SnapshotMeta got;
  std::string got_data;
  ASSERT_TRUE(st->load_snapshot(&got, &got_data).is_ok());
  EXPECT_EQ(got, meta);
  EXPECT_EQ(got_data, data);
  EXPECT_EQ(read_all(*st), make_entries(61, 100, 2));
  // Appending continues after the compacted prefix.
  ASSERT_TRUE(st->append(make_entries(101, 101, 2), nullptr, true).is_ok());
  EXPECT_EQ(st->last_index(), 101u);
}

TEST(LogStorage, SnapshotFromLeaderDiscardsMismatchingLog) {
  TempDir tmp;
  SnapshotMeta meta{200, 4, Membership{{1, 2, 3}, {}}};
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 30, 1), nullptr, true).is_ok());
    ASSERT_TRUE(st->save_snapshot(meta, "tree-bytes").is_ok());
    EXPECT_EQ(st->first_index(), 201u);
    EXPECT_EQ(st->last_index(), 200u);
    Term t = 0;
    ASSERT_TRUE(st->term(200, &t).is_ok());
    EXPECT_EQ(t, 4u);
    // An older snapshot can no longer be stored.
    EXPECT_EQ(st->save_snapshot(SnapshotMeta{100, 3, {}}, "old").code(),
              Status::Code::kSnapshotOutOfDate);
    ASSERT_TRUE(st->append(make_entries(201, 205, 4), nullptr, true).is_ok());
  }
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->first_index(), 201u);
  EXPECT_EQ(st->last_index(), 205u);
  EXPECT_EQ(read_all(*st), make_entries(201, 205, 4));
  // Entries the snapshot covers are skipped, not rejected (a leader may resend them).
  std::vector<Entry> resend = make_entries(199, 206, 4);
  ASSERT_TRUE(st->append(resend, nullptr, true).is_ok());
  EXPECT_EQ(st->last_index(), 206u);
  EXPECT_EQ(st->first_index(), 201u);
}

TEST(LogStorage, DamagedTailIsTruncated) {
  TempDir tmp;
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 20, 1), nullptr, true).is_ok());
  }
  raw_write(tmp.path(), [](leveldb::WriteBatch& b) {
    std::string v = storage::encode_entry_value(make_entry(19, 1));
    v[6] ^= 0x40;                                    // checksum mismatch at 19
    b.Put(storage::entry_key(19), v);
    b.Put(storage::entry_key(20), std::string("x"));  // unparseable at 20
  });
  {
    auto st = open_ok(tmp.path());
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->last_index(), 18u);
    EXPECT_EQ(read_all(*st), make_entries(1, 18, 1));
    // The log continues from the truncation point.
    ASSERT_TRUE(st->append(make_entries(19, 19, 2), nullptr, true).is_ok());
  }
  auto st = open_ok(tmp.path());
  EXPECT_EQ(st->last_index(), 19u);
}

TEST(LogStorage, CorruptionBeforeAGoodEntryRefusesToOpen) {
  TempDir tmp;
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 20, 1), nullptr, true).is_ok());
  }
  raw_write(tmp.path(), [](leveldb::WriteBatch& b) {
    std::string v = storage::encode_entry_value(make_entry(12, 1));
    v.back() ^= 0x01;
    b.Put(storage::entry_key(12), v);
  });
  std::string err;
  auto st = LogStorage::open(tmp.path(), StorageOptions{}, &err);
  EXPECT_EQ(st, nullptr);
  EXPECT_NE(err.find("index 12"), std::string::npos) << err;
  EXPECT_NE(err.find(tmp.path()), std::string::npos) << err;
}

TEST(LogStorage, MissingEntryBeforeAGoodEntryRefusesToOpen) {
  TempDir tmp;
  {
    auto st = open_ok(tmp.path());
    ASSERT_TRUE(st->append(make_entries(1, 20, 1), nullptr, true).is_ok());
  }
  raw_write(tmp.path(), [](leveldb::WriteBatch& b) { b.Delete(storage::entry_key(7)); });
  std::string err;
  EXPECT_EQ(LogStorage::open(tmp.path(), StorageOptions{}, &err), nullptr);
  EXPECT_NE(err.find("index 7"), std::string::npos) << err;
}

TEST(LogStorage, ForeignDatabaseIsRefused) {
  TempDir tmp;
  raw_write(tmp.path(), [](leveldb::WriteBatch& b) { b.Put("some", "thing"); });
  std::string err;
  EXPECT_EQ(LogStorage::open(tmp.path(), StorageOptions{}, &err), nullptr);
  EXPECT_NE(err.find("format marker"), std::string::npos) << err;
}

}  // namespace
}  // namespace zkraft::consensus
