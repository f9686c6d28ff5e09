// A leader's snapshot written chunk by chunk as a follower receives it (ReceivedSnapshot), then
// published as the stored snapshot: the chunk order it accepts, what replaces an unfinished
// transfer, and that what is stored reads back (mapped) as the bytes sent.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "consensus/log_storage.h"
#include "consensus/received_snapshot.h"
#include "consensus/storage_codec.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::make_entries;
using testing::open_ok;
using testing::TempDir;

SnapshotChunk chunk_of(const SnapshotMeta& meta, const std::string& all, uint64_t offset, size_t len) {
  SnapshotChunk c;
  c.meta = meta;
  c.offset = offset;
  c.bytes = all.substr(offset, len);
  c.last = offset + c.bytes.size() == all.size();
  return c;
}

// Snapshot data files beside the LevelDB.
size_t snapshot_files(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    n += storage::parse_snapshot_file_name(e.path().filename().string()).has_value();
  }
  return n;
}

std::string read_back(LogStorage& st, SnapshotMeta* meta) {
  LogStorage::MappedSnapshot mapped;
  EXPECT_TRUE(st.map_snapshot(meta, &mapped, LogStorage::Mapping::kOnDemand).is_ok());
  return std::string(mapped.bytes());
}

TEST(ReceivedSnapshot, ChunksInOrderArePublishedAsTheStoredSnapshotAndReplaceALogTheyDoNotMatch) {
  TempDir dir;
  auto st = open_ok(dir.path());
  ASSERT_TRUE(st->append(make_entries(1, 5, 1), nullptr, true).is_ok());
  std::string data;
  for (int i = 0; i < 5000; ++i) data += static_cast<char>('a' + i % 26);
  const SnapshotMeta meta{40, 3, Membership{{1, 2, 3}, {}}};
  ReceivedSnapshot rs(*st);
  for (uint64_t off = 0; off < data.size(); off += 1000) ASSERT_TRUE(rs.write(chunk_of(meta, data, off, 1000)).is_ok());
  EXPECT_FALSE(st->snapshot_meta().has_value());  // written, not yet the stored snapshot
  ASSERT_TRUE(rs.publish(meta).is_ok());
  ASSERT_TRUE(st->snapshot_meta().has_value());
  EXPECT_EQ(*st->snapshot_meta(), meta);
  EXPECT_EQ(st->first_index(), 41u);  // the log did not hold entry 40: discarded
  SnapshotMeta got;
  EXPECT_EQ(read_back(*st, &got), data);
  EXPECT_EQ(got, meta);
  st.reset();
  auto again = open_ok(dir.path());  // durable, and whole by its checksum
  SnapshotMeta reopened;
  EXPECT_EQ(read_back(*again, &reopened), data);
  EXPECT_EQ(reopened, meta);
}

TEST(ReceivedSnapshot, AChunkThatDoesNotContinueTheTransferIsRefusedAndANewStartReplacesIt) {
  TempDir dir;
  auto st = open_ok(dir.path());
  const std::string data(3000, 'x');
  const SnapshotMeta meta{10, 1, Membership{{1}, {}}};
  ReceivedSnapshot rs(*st);
  EXPECT_EQ(rs.write(chunk_of(meta, data, 1000, 1000)).code(), Status::Code::kInvalidArgument);  // no start
  ASSERT_TRUE(rs.write(chunk_of(meta, data, 0, 1000)).is_ok());
  EXPECT_EQ(rs.write(chunk_of(meta, data, 2000, 1000)).code(), Status::Code::kInvalidArgument);  // a gap
  SnapshotMeta other = meta;
  other.index = 11;
  EXPECT_EQ(rs.write(chunk_of(other, data, 1000, 1000)).code(), Status::Code::kInvalidArgument);  // another's
  // Publishing half a snapshot is refused, and ends the transfer.
  EXPECT_EQ(rs.publish(meta).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(rs.write(chunk_of(meta, data, 1000, 1000)).code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(st->snapshot_meta().has_value());
  EXPECT_EQ(snapshot_files(dir.path()), 0u);  // the unfinished file is gone
  // A finished one that a new transfer replaces before it is published is removed too.
  const std::string newer(2500, 'n');
  const SnapshotMeta newer_meta{12, 1, Membership{{1}, {}}};
  for (uint64_t off = 0; off < data.size(); off += 1000) ASSERT_TRUE(rs.write(chunk_of(meta, data, off, 1000)).is_ok());
  EXPECT_EQ(snapshot_files(dir.path()), 1u);
  for (uint64_t off = 0; off < newer.size(); off += 1000) {
    ASSERT_TRUE(rs.write(chunk_of(newer_meta, newer, off, 1000)).is_ok());
  }
  st->wait_for_file_removals();  // a finished file goes on the remover's thread
  EXPECT_EQ(snapshot_files(dir.path()), 1u);
  EXPECT_EQ(rs.publish(meta).code(), Status::Code::kInvalidArgument);  // not the one received
  for (uint64_t off = 0; off < newer.size(); off += 1000) {
    ASSERT_TRUE(rs.write(chunk_of(newer_meta, newer, off, 1000)).is_ok());
  }
  ASSERT_TRUE(rs.publish(newer_meta).is_ok());
  SnapshotMeta got;
  EXPECT_EQ(read_back(*st, &got), newer);
  EXPECT_EQ(got, newer_meta);
  st->wait_for_file_removals();
  EXPECT_EQ(snapshot_files(dir.path()), 1u);
}

TEST(ReceivedSnapshot, AnEmptySnapshotIsOneLastChunk) {
  TempDir dir;
  auto st = open_ok(dir.path());
  const SnapshotMeta meta{3, 1, Membership{{1}, {}}};
  ReceivedSnapshot rs(*st);
  SnapshotChunk c;
  c.meta = meta;
  c.last = true;
  ASSERT_TRUE(rs.write(c).is_ok());
  ASSERT_TRUE(rs.publish(meta).is_ok());
  SnapshotMeta got;
  EXPECT_EQ(read_back(*st, &got), "");
  EXPECT_EQ(got, meta);
}

}  // namespace
}  // namespace zkraft::consensus
