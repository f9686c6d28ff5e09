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

// Appends a piece to the stored snapshot's file (an incremental snapshot, SnapshotFileTarget).
SnapshotFileWritten append_to_stored(const SnapshotFileTarget& target, const std::string& more) {
  SnapshotFileWriter w;
  EXPECT_EQ(w.open_append(target), 0);
  EXPECT_EQ(w.append(more), 0);
  SnapshotFileWritten out;
  EXPECT_EQ(w.finish(&out), 0);
  return out;
}

// An incremental snapshot is the stored snapshot's bytes with more appended: the same file,
// published under the newer index, read back whole after a reopen, its checksum the whole
// file's; the bytes the snapshot was written with first stay counted apart.
TEST(LogStorage, AnAppendToTheStoredSnapshotsFileIsPublishedAsTheNewerSnapshot) {
  TempDir tmp;
  std::string err;
  auto st = open_ok(tmp.path());
  ASSERT_TRUE(st->append(make_entries(1, 60, 1), nullptr, true).is_ok());
  EXPECT_EQ(st->snapshot_file_target().stored_index, 0u);  // nothing stored: nothing to append to
  const SnapshotFileTarget a = st->snapshot_file_target();
  const std::string full = patterned(5000);
  ASSERT_TRUE(st->publish_snapshot_file(SnapshotMeta{20, 1, {}}, write_in_pieces(a, full, 1000)).is_ok());

  const SnapshotFileTarget b = st->snapshot_file_target();
  EXPECT_EQ(b.stored_index, 20u);
  EXPECT_EQ(b.stored_generation, a.token);
  EXPECT_EQ(b.stored_path, a.path);
  EXPECT_EQ(b.stored_size, full.size());
  EXPECT_EQ(b.stored_crc, crc32c(full));
  EXPECT_EQ(b.stored_full_size, full.size());
  const SnapshotFileWritten wb = append_to_stored(b, "delta one");
  EXPECT_TRUE(wb.appended);
  EXPECT_EQ(wb.token, a.token);
  EXPECT_EQ(wb.appended_to, full.size());
  EXPECT_EQ(wb.size, full.size() + 9);
  EXPECT_EQ(wb.crc32c, crc32c(full + "delta one"));
  EXPECT_FALSE(exists(b.path));  // the new generation's name was never used
  ASSERT_TRUE(st->publish_snapshot_file(SnapshotMeta{40, 1, {}}, wb).is_ok());
  EXPECT_EQ(st->snapshot_meta()->index, 40u);
  st->discard_snapshot_file(wb);  // the stored file is never discarded
  st->wait_for_file_removals();
  EXPECT_TRUE(exists(a.path));

  const SnapshotFileTarget c = st->snapshot_file_target();
  EXPECT_EQ(c.stored_size, full.size() + 9);
  EXPECT_EQ(c.stored_full_size, full.size());
  ASSERT_TRUE(st->publish_snapshot_file(SnapshotMeta{50, 1, {}}, append_to_stored(c, "two")).is_ok());
  st.reset();
  st = open_ok(tmp.path());
  SnapshotMeta m;
  std::string got;
  ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
  EXPECT_EQ(m.index, 50u);
  EXPECT_EQ(got, full + "delta one" + "two");
  LogStorage::MappedSnapshot mapped;
  ASSERT_TRUE(st->map_snapshot(&m, &mapped).is_ok());
  EXPECT_EQ(mapped.bytes(), full + "delta one" + "two");
  EXPECT_EQ(st->snapshot_file_target().stored_full_size, full.size());

  // A full snapshot again: a new file, and the appended one goes.
  const SnapshotFileTarget d = st->snapshot_file_target();
  ASSERT_TRUE(st->publish_snapshot_file(SnapshotMeta{55, 1, {}}, write_in_pieces(d, "whole again", 4)).is_ok());
  st->wait_for_file_removals();
  EXPECT_FALSE(exists(a.path));
  EXPECT_EQ(st->snapshot_file_target().stored_full_size, 11u);
}

// What an append leaves that is never published (a crash before its record, a newer snapshot
// that won, a full disk) is not part of any snapshot: readers take the record's bytes only, the
// next append and the next open cut the rest, and an append onto a replaced snapshot is refused.
TEST(LogStorage, AnUnpublishedAppendIsNeverPartOfTheSnapshot) {
  TempDir tmp;
  auto st = open_ok(tmp.path());
  ASSERT_TRUE(st->append(make_entries(1, 60, 1), nullptr, true).is_ok());
  const SnapshotFileTarget a = st->snapshot_file_target();
  ASSERT_TRUE(st->publish_snapshot_file(SnapshotMeta{20, 1, {}}, write_in_pieces(a, "base", 2)).is_ok());

  {
    SnapshotFileWriter half;  // one that never finished takes its bytes back
    ASSERT_EQ(half.open_append(st->snapshot_file_target()), 0);
    ASSERT_EQ(half.append("torn"), 0);
  }
  std::string on_disk;
  ASSERT_TRUE(testing::read_file(a.path, &on_disk));
  EXPECT_EQ(on_disk, "base");
  // Written, not published: the stored snapshot is still "base".
  const SnapshotFileTarget b = st->snapshot_file_target();
  append_to_stored(b, "lost append");
  SnapshotMeta m;
  std::string got;
  ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
  EXPECT_EQ(got, "base");
  LogStorage::MappedSnapshot mapped;
  ASSERT_TRUE(st->map_snapshot(&m, &mapped).is_ok());
  EXPECT_EQ(mapped.bytes(), "base");

  // The next append finds bytes it cannot tell from a published append: it refuses to start,
  // and the storage's discard of the unpublished one cuts them.
  SnapshotFileWriter stale;
  EXPECT_EQ(stale.open_append(st->snapshot_file_target()), ESTALE);
  st->discard_snapshot_file(SnapshotFileWritten{a.token, 15, 0, true, 4});
  const SnapshotFileWritten wc = append_to_stored(st->snapshot_file_target(), "+d");
  EXPECT_EQ(wc.crc32c, crc32c("base+d"));
  ASSERT_TRUE(st->publish_snapshot_file(SnapshotMeta{30, 1, {}}, wc).is_ok());
  append_to_stored(st->snapshot_file_target(), "never published");
  st.reset();
  st = open_ok(tmp.path());  // the open cuts the unpublished tail
  ASSERT_TRUE(testing::read_file(a.path, &on_disk));
  EXPECT_EQ(on_disk, "base+d");

  // Appended to a snapshot that a newer one (a leader's) replaced before the append's publish.
  const SnapshotFileTarget e = st->snapshot_file_target();
  const SnapshotFileWritten we = append_to_stored(e, "late");
  ASSERT_TRUE(st->save_snapshot(SnapshotMeta{45, 1, {}}, "leader's").is_ok());
  EXPECT_EQ(st->publish_snapshot_file(SnapshotMeta{50, 1, {}}, we).code(), Status::Code::kSnapshotOutOfDate);
  ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
  EXPECT_EQ(m.index, 45u);
  EXPECT_EQ(got, "leader's");
  // A target used twice: the second append finds the first published and does not start.
  const SnapshotFileTarget f = st->snapshot_file_target();
  ASSERT_TRUE(st->publish_snapshot_file(SnapshotMeta{50, 1, {}}, append_to_stored(f, "1")).is_ok());
  SnapshotFileWriter again;
  EXPECT_EQ(again.open_append(f), ESTALE);
  ASSERT_TRUE(st->load_snapshot(&m, &got).is_ok());
  EXPECT_EQ(got, "leader's1");
}

TEST(SnapshotFileWriter, AppendingNeedsAStoredSnapshot) {
  SnapshotFileWriter w;
  EXPECT_EQ(w.open_append(SnapshotFileTarget{}), EINVAL);
}

}  // namespace
}  // namespace zkraft::consensus
