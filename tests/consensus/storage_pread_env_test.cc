// PreadEnv (consensus/storage_pread_env.h): LevelDB's table files read with pread instead of
// mmap. The reads themselves, and a log whose tables LevelDB reads back through it.
#include "consensus/storage_pread_env.h"

#include <gtest/gtest.h>
#include <leveldb/env.h>

#include <fstream>
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

std::unique_ptr<leveldb::RandomAccessFile> open_file(PreadEnv& env, const std::string& path, leveldb::Status* s) {
  leveldb::RandomAccessFile* raw = nullptr;
  *s = env.NewRandomAccessFile(path, &raw);
  return std::unique_ptr<leveldb::RandomAccessFile>(raw);
}

TEST(PreadEnv, ReadsTheBytesAskedForAndStopsShortAtTheEnd) {
  TempDir tmp;
  const std::string path = tmp.sub("file");
  std::ofstream(path, std::ios::binary) << "0123456789";
  PreadEnv env(leveldb::Env::Default());
  leveldb::Status s;
  auto file = open_file(env, path, &s);
  ASSERT_TRUE(s.ok()) << s.ToString();
  char scratch[16];
  leveldb::Slice got;
  ASSERT_TRUE(file->Read(3, 4, &got, scratch).ok());
  EXPECT_EQ(got.ToString(), "3456");
  ASSERT_TRUE(file->Read(8, 8, &got, scratch).ok());
  EXPECT_EQ(got.ToString(), "89");  // short: LevelDB checks the length itself
  ASSERT_TRUE(file->Read(20, 4, &got, scratch).ok());
  EXPECT_EQ(got.size(), 0u);
}

TEST(PreadEnv, AMissingFileIsNotFoundAsInLevelDBsOwnEnvironment) {
  TempDir tmp;
  PreadEnv env(leveldb::Env::Default());
  leveldb::Status s;
  auto file = open_file(env, tmp.sub("absent"), &s);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(file, nullptr);
}

// How many of this process's memory mappings are LevelDB tables under `dir`.
size_t mapped_tables(const std::string& dir) {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find(dir) != std::string::npos && line.ends_with(".ldb")) ++n;
  }
  return n;
}

// Enough entries for LevelDB to flush its memtable into tables, which it then reads back at
// reopen and for entries(): every such read goes through PreadEnv, so no table is mapped (with
// LevelDB's own environment every table read here would be).
TEST(PreadEnv, ALogWhoseEntriesLiveInTablesReadsBackWholeWithNoTableMapped) {
  TempDir tmp;
  StorageOptions opts;
  opts.write_buffer_size = 64 << 10;  // small memtables: many tables
  const std::string payload(200, 'p');
  {
    auto st = open_ok(tmp.path(), opts);
    for (Index i = 1; i <= 5000; i += 100) {
      std::vector<Entry> batch;
      for (Index j = i; j < i + 100; ++j) batch.push_back(testing::make_entry(j, 1, payload + std::to_string(j)));
      ASSERT_TRUE(st->append(batch, nullptr, true).is_ok());
    }
  }
  size_t tables = 0;
  std::vector<std::string> names;
  ASSERT_TRUE(leveldb::Env::Default()->GetChildren(tmp.path(), &names).ok());
  for (const auto& n : names) tables += n.ends_with(".ldb") ? 1 : 0;
  EXPECT_GT(tables, 1u);
  auto st = open_ok(tmp.path(), opts);
  ASSERT_EQ(st->last_index(), 5000u);
  std::vector<Entry> all;
  ASSERT_TRUE(st->entries(1, 5001, UINT64_MAX, &all).is_ok());
  ASSERT_EQ(all.size(), 5000u);
  for (Index i = 1; i <= 5000; ++i) {
    ASSERT_EQ(all[i - 1].index, i);
    ASSERT_EQ(all[i - 1].data, payload + std::to_string(i));
  }
  EXPECT_EQ(mapped_tables(tmp.path()), 0u);
}

}  // namespace
}  // namespace zkraft::consensus
