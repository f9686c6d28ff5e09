// A snapshot file written outside LogStorage (SnapshotFileWriter, as the server's forked child
// does) and published by it: LogStorage::snapshot_file_target, publish_snapshot_file and
// discard_snapshot_file; the writer's checksum, syncs and clean-up.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "consensus/log_storage.h"
#include "consensus/snapshot_file_writer.h"
#include "consensus/storage_codec.h"
#include "consensus/storage_crc32c.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::make_entries;
using testing::open_ok;
using testing::TempDir;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string patterned(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 31 + 7);
  return s;
}

// Writes `data` at `target` in pieces of `piece` bytes.
SnapshotFileWritten write_in_pieces(const SnapshotFileTarget& target, const std::string& data, size_t piece) {
  SnapshotFileWriter w;
  EXPECT_EQ(w.open(target), 0);
  for (size_t off = 0; off < data.size(); off += piece) {
    EXPECT_EQ(w.append(std::string_view(data).substr(off, piece)), 0);
  }
  SnapshotFileWritten out;
  EXPECT_EQ(w.finish(&out), 0);
  return out;
}

TEST(SnapshotFileWriter, WritesTheBytesWithTheirChecksumAndSize) {
  TempDir tmp;
  SnapshotFileTarget t{7, tmp.path() + "/snap", 1000};  // a sync inside most pieces
  const std::string data = patterned(12345);
  const SnapshotFileWritten w = write_in_pieces(t, data, 777);
  EXPECT_EQ(w.token, 7u);
  EXPECT_EQ(w.size, data.size());
  EXPECT_EQ(w.crc32c, crc32c(data));
  std::string got;
  ASSERT_TRUE(testing::read_file(t.path, &got));
  EXPECT_EQ(got, data);
}

TEST(SnapshotFileWriter, AnUnfinishedFileIsRemovedAndAnExistingOneNotOverwritten) {
  TempDir tmp;
  SnapshotFileTarget t{1, tmp.path() + "/snap", 4096};
  {
    SnapshotFileWriter w;
    ASSERT_EQ(w.open(t), 0);
    ASSERT_EQ(w.append("half a snapshot"), 0);
    EXPECT_TRUE(exists(t.path));
  }
  EXPECT_FALSE(exists(t.path));  // the writer went away before finish()
  write_in_pieces(t, "whole", 5);
  SnapshotFileWriter again;
  EXPECT_EQ(again.open(t), EEXIST);
  std::string got;
  ASSERT_TRUE(testing::read_file(t.path, &got));
  EXPECT_EQ(got, "whole");
  SnapshotFileWriter nowhere;
  EXPECT_EQ(nowhere.open(SnapshotFileTarget{2, tmp.path() + "/no/such/dir/snap", 4096}), ENOENT);
  EXPECT_EQ(nowhere.append("x"), EBADF);
}

TEST(LogStorage, SnapshotFileWrittenByAForkedChildIsPublishedAndReadBack) {
  TempDir tmp;
  StorageOptions opts;
  opts.snapshot_sync_bytes = 64 * 1024;
  std::string err;
  auto st = LogStorage::open(tmp.path(), opts, &err);
  ASSERT_NE(st, nullptr) << err;
  ASSERT_TRUE(st->append(make_entries(1, 40, 1), nullptr, true).is_ok());
  const SnapshotFileTarget t = st->snapshot_file_target();
  EXPECT_EQ(t.sync_bytes, 64u * 1024);
  EXPECT_EQ(t.path, tmp.path() + "/" + storage::snapshot_file_name(t.token));
  const std::string data = patterned(300 * 1024 + 3);
  SnapshotFileWriter::prepare_before_fork();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // the child: no gtest, no LevelDB, only the writer
    SnapshotFileWriter w;
    SnapshotFileWritten out;
    int e = w.open(t);
    for (size_t off = 0; e == 0 && off < data.size(); off += 4096) e = w.append(std::string_view(data).substr(off, 4096));
    if (e == 0) e = w.finish(&out);
    const bool sent = ::write(fds[1], &out, sizeof out) == static_cast<ssize_t>(sizeof out);
    ::_exit(e == 0 && sent ? 0 : 1);
  }
  ::close(fds[1]);
  SnapshotFileWritten written;
  ASSERT_EQ(::read(fds[0], &written, sizeof written), static_cast<ssize_t>(sizeof written));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(written.size, data.size());
  EXPECT_EQ(written.crc32c, crc32c(data));

  EXPECT_FALSE(st->snapshot_meta().has_value());  // written, not yet the stored snapshot
  ASSERT_TRUE(st->publish_snapshot_file(SnapshotMeta{30, 1, Membership{{1}, {}}}, written).is_ok());
  EXPECT_EQ(st->snapshot_meta(), (SnapshotMeta{30, 1, Membership{{1}, {}}}));
  EXPECT_EQ(st->last_index(), 40u);  // the log holds entry 30: kept
  st.reset();
  st = LogStorage::open(tmp.path(), opts, &err);
  ASSERT_NE(st, nullptr) << err;
  SnapshotMeta m;
  std::string got;
  ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
  EXPECT_EQ(m.index, 30u);
  EXPECT_EQ(got, data);
  // The published file is never discarded.
  st->discard_snapshot_file(written);
  EXPECT_TRUE(exists(t.path));
}

TEST(LogStorage, SnapshotFileOfTheWrongSizeOrOutOfDateIsRefusedAndRemoved) {
  TempDir tmp;
  auto st = open_ok(tmp.path());
  ASSERT_TRUE(st->append(make_entries(1, 30, 1), nullptr, true).is_ok());
  const SnapshotFileTarget a = st->snapshot_file_target();
  SnapshotFileWritten wa = write_in_pieces(a, "twelve bytes", 4);
  wa.size += 1;  // not what is on disk
  EXPECT_EQ(st->publish_snapshot_file(SnapshotMeta{10, 1, {}}, wa).code(), Status::Code::kCorruption);
  EXPECT_FALSE(exists(a.path));
  EXPECT_FALSE(st->snapshot_meta().has_value());
  EXPECT_EQ(st->publish_snapshot_file(SnapshotMeta{10, 1, {}}, wa).code(), Status::Code::kCorruption);  // gone

  ASSERT_TRUE(st->save_snapshot(SnapshotMeta{20, 1, {}}, "newer").is_ok());
  const SnapshotFileTarget b = st->snapshot_file_target();
  EXPECT_NE(b.token, a.token);
  const SnapshotFileWritten wb = write_in_pieces(b, "older state", 3);
  EXPECT_EQ(st->publish_snapshot_file(SnapshotMeta{15, 1, {}}, wb).code(), Status::Code::kSnapshotOutOfDate);
  EXPECT_FALSE(exists(b.path));
  EXPECT_EQ(st->snapshot_meta()->index, 20u);

  const SnapshotFileTarget c = st->snapshot_file_target();
  const SnapshotFileWritten wc = write_in_pieces(c, "declined", 8);
  st->discard_snapshot_file(wc);
  st->wait_for_file_removals();  // removed on the remover's thread
  EXPECT_FALSE(exists(c.path));
}

}  // namespace
}  // namespace zkraft::consensus
