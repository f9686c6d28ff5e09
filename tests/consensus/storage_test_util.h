#pragma once
// Helpers shared by the storage tests: a fresh temporary directory per test, entry builders,
// opening a log, reading a file whole, and raw LevelDB reads and writes of a closed one.

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "consensus/log_storage.h"
#include "consensus/types.h"

namespace zkraft::consensus::testing {

// A unique directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("zkraft-storage-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }
  std::string sub(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline Entry make_entry(Index index, Term term, std::string data = {},
                        EntryType type = EntryType::kNormal) {
  Entry e;
  e.index = index;
  e.term = term;
  e.type = type;
  e.data = data.empty() ? "entry-" + std::to_string(index) + "-t" + std::to_string(term) : std::move(data);
  return e;
}

// Entries lo..hi inclusive, all of `term`.
inline std::vector<Entry> make_entries(Index lo, Index hi, Term term) {
  std::vector<Entry> out;
  for (Index i = lo; i <= hi; ++i) out.push_back(make_entry(i, term));
  return out;
}

// Opens the log in `dir` (default options, or `options`), failing the test if it cannot.
inline std::unique_ptr<LogStorage> open_ok(const std::string& dir, const StorageOptions& options = {}) {
  std::string err;
  auto st = LogStorage::open(dir, options, &err);
  EXPECT_NE(st, nullptr) << err;
  return st;
}

// The whole content of a file; false if it cannot be read.
inline bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

// Direct LevelDB access to damage a closed log the way a disk would.
inline void raw_write(const std::string& dir, const std::function<void(leveldb::WriteBatch&)>& fill) {
  leveldb::DB* db = nullptr;
  leveldb::Options o;
  o.create_if_missing = true;
  ASSERT_TRUE(leveldb::DB::Open(o, dir, &db).ok());
  leveldb::WriteBatch b;
  fill(b);
  leveldb::WriteOptions wo;
  wo.sync = true;
  ASSERT_TRUE(db->Write(wo, &b).ok());
  delete db;
}

// Every key and value of a closed log, read straight from LevelDB.
inline std::map<std::string, std::string> raw_contents(const std::string& dir) {
  std::map<std::string, std::string> out;
  leveldb::DB* db = nullptr;
  EXPECT_TRUE(leveldb::DB::Open(leveldb::Options(), dir, &db).ok());
  if (db == nullptr) return out;
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) out[it->key().ToString()] = it->value().ToString();
  it.reset();  // before the database it reads
  delete db;
  return out;
}

}  // namespace zkraft::consensus::testing
