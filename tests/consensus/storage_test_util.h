#pragma once
// Helpers shared by the storage tests: a fresh temporary directory per test and entry builders.

#include <filesystem>
#include <random>
#include <string>
#include <vector>

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

}  // namespace zkraft::consensus::testing
