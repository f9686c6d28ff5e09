// PreallocEnv (consensus/storage_prealloc_env.h): LevelDB's write-ahead files extended ahead of
// their writes. The file's sizes and bytes, and LevelDB reopening images of a write-ahead file
// cut off the ways a crash cuts it: the process killed (every write there), the power cut
// (only the synced writes, zeros after them) and a write torn halfway.
#include "consensus/storage_prealloc_env.h"

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "consensus/log_storage.h"
#include "storage_test_util.h"

namespace zkraft::consensus {
namespace {

using testing::make_entries;
using testing::open_ok;
using testing::TempDir;

uint64_t size_on_disk(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<uint64_t>(st.st_size);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::unique_ptr<leveldb::WritableFile> new_file(leveldb::Env& env, const std::string& path) {
  leveldb::WritableFile* raw = nullptr;
  leveldb::Status s = env.NewWritableFile(path, &raw);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return std::unique_ptr<leveldb::WritableFile>(raw);
}

// The only *.log file (LevelDB's write-ahead file) in `dir`.
std::string write_ahead_file(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".log") found.push_back(e.path().string());
  }
  EXPECT_EQ(found.size(), 1u) << dir;
  return found.empty() ? std::string() : found[0];
}

// Where the written bytes of a preallocated write-ahead image end: after its last non-zero byte
// (every record here ends in a non-zero byte).
size_t data_end(const std::string& bytes) {
  size_t n = bytes.size();
  while (n > 0 && bytes[n - 1] == '\0') --n;
  return n;
}

TEST(PreallocEnv, AWriteAheadFileIsAllocatedAheadInStepsAndEndsAtItsBytesWhenClosed) {
  TempDir tmp;
  PreallocEnv env(leveldb::Env::Default());
  const std::string path = tmp.sub("000003.log");
  auto file = new_file(env, path);
  std::string expected;
  ASSERT_TRUE(file->Append("first record").ok());
  expected += "first record";
  ASSERT_TRUE(file->Sync().ok());
  EXPECT_EQ(size_on_disk(path), PreallocEnv::kStepBytes);
  EXPECT_EQ(read_all(path).substr(0, expected.size()), expected);
  // Past the first step, in appends both smaller and larger than the 64 KiB buffer.
  for (int i = 0; expected.size() < PreallocEnv::kStepBytes + (1 << 20); ++i) {
    const std::string piece(i % 2 == 0 ? 1000 : 200000, static_cast<char>('a' + i % 26));
    ASSERT_TRUE(file->Append(piece).ok());
    expected += piece;
  }
  ASSERT_TRUE(file->Flush().ok());
  EXPECT_EQ(size_on_disk(path), 2 * PreallocEnv::kStepBytes);
  const std::string open_image = read_all(path);
  EXPECT_EQ(open_image.substr(0, expected.size()), expected);
  EXPECT_EQ(open_image.find_first_not_of('\0', expected.size()), std::string::npos);
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(size_on_disk(path), expected.size());
  EXPECT_EQ(read_all(path), expected);
}

TEST(PreallocEnv, OtherFilesAreTheWrappedEnvironmentsAndGrowWithTheirBytes) {
  TempDir tmp;
  PreallocEnv env(leveldb::Env::Default());
  const std::string path = tmp.sub("MANIFEST-000001");
  auto file = new_file(env, path);
  ASSERT_TRUE(file->Append("edit").ok());
  ASSERT_TRUE(file->Flush().ok());
  EXPECT_EQ(size_on_disk(path), 4u);
  ASSERT_TRUE(file->Close().ok());
}

// A LevelDB database on PreallocEnv: `synced` keys written with sync, then one without. Images of
// its directory are taken while it is open, as a crash would leave them.
class PreallocCrashImage : public ::testing::Test {
 protected:
  static constexpr int kSynced = 300;

  void SetUp() override {
    env_ = std::make_unique<PreallocEnv>(leveldb::Env::Default());
    leveldb::Options o;
    o.create_if_missing = true;
    o.env = env_.get();
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(o, tmp_.sub("db"), &raw).ok());
    db_.reset(raw);
    leveldb::WriteOptions sync;
    sync.sync = true;
    for (int i = 0; i < kSynced; ++i) ASSERT_TRUE(db_->Put(sync, key(i), value(i)).ok());
    wal_ = write_ahead_file(tmp_.sub("db"));
    synced_image_ = read_all(wal_);
    // The image holds the zeros of the preallocated tail after its synced records.
    ASSERT_EQ(synced_image_.size(), PreallocEnv::kStepBytes);
    ASSERT_LT(data_end(synced_image_), synced_image_.size());
    ASSERT_TRUE(db_->Put(leveldb::WriteOptions(), "unsynced", "written but never synced!").ok());
    killed_image_ = read_all(wal_);
    ASSERT_GT(data_end(killed_image_), data_end(synced_image_));
  }

  static std::string key(int i) { return "key" + std::to_string(i); }
  static std::string value(int i) { return std::string(100, 'v') + std::to_string(i) + "!"; }

  // Copies the open database's directory with its write-ahead file replaced by `wal_bytes`,
  // opens the copy with LevelDB's own environment and checks what it holds. With `paranoid`,
  // LevelDB fails the open on any record it reports as corrupt: an image with no torn record
  // must open so, since a zero tail is skipped without a report.
  void reopen_copy_with(const std::string& wal_bytes, bool unsynced_expected, bool paranoid) {
    const std::string copy = tmp_.sub("copy");
    std::filesystem::remove_all(copy);
    std::filesystem::copy(tmp_.sub("db"), copy);
    write_all(copy + "/" + std::filesystem::path(wal_).filename().string(), wal_bytes);
    leveldb::Options o;
    o.paranoid_checks = paranoid;
    leveldb::DB* raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(o, copy, &raw);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<leveldb::DB> db(raw);
    for (int i = 0; i < kSynced; ++i) {
      std::string got;
      ASSERT_TRUE(db->Get(leveldb::ReadOptions(), key(i), &got).ok()) << key(i);
      EXPECT_EQ(got, value(i));
    }
    std::string got;
    EXPECT_EQ(db->Get(leveldb::ReadOptions(), "unsynced", &got).ok(), unsynced_expected);
  }

  TempDir tmp_;
  std::unique_ptr<PreallocEnv> env_;
  std::unique_ptr<leveldb::DB> db_;
  std::string wal_, synced_image_, killed_image_;
};

TEST_F(PreallocCrashImage, AKilledProcessLeavesEveryWriteAndTheZerosAfterThem) {
  reopen_copy_with(killed_image_, true, true);
}

TEST_F(PreallocCrashImage, APowerCutLeavesTheSyncedWritesAndZerosWhereTheRestWas) {
  reopen_copy_with(synced_image_, false, true);
}

TEST_F(PreallocCrashImage, AWriteTornHalfwayIsDroppedAndTheSyncedOnesStay) {
  const size_t from = data_end(synced_image_);
  const size_t to = data_end(killed_image_);
  std::string torn = synced_image_;
  const size_t half = from + (to - from) / 2;
  torn.replace(from, half - from, killed_image_.substr(from, half - from));
  reopen_copy_with(torn, false, false);  // the torn record is reported: as LogStorage opens it
}

// LogStorage opens its LevelDB on PreallocEnv: while open its write-ahead file is allocated in
// steps, and an image of it reopens with every entry.
TEST(PreallocEnv, LogStorageWritesItsEntriesThroughAPreallocatedWriteAheadFile) {
  TempDir tmp;
  auto st = open_ok(tmp.sub("log"));
  ASSERT_TRUE(st->append(make_entries(1, 200, 1), nullptr, true).is_ok());
  const uint64_t size = size_on_disk(write_ahead_file(tmp.sub("log")));
  EXPECT_GT(size, 0u);
  EXPECT_EQ(size % PreallocEnv::kStepBytes, 0u);
  std::filesystem::copy(tmp.sub("log"), tmp.sub("image"));
  auto image = open_ok(tmp.sub("image"));
  EXPECT_EQ(image->last_index(), 200u);
  std::vector<Entry> got;
  ASSERT_TRUE(image->entries(1, 201, UINT64_MAX, &got).is_ok());
  EXPECT_EQ(got, make_entries(1, 200, 1));
}

}  // namespace
}  // namespace zkraft::consensus
