#pragma once
// argv for parse_command_line from a list of strings (the program name comes first), for the
// config tests.

#include <initializer_list>
#include <string>
#include <vector>

namespace zkraft::server::cli_testing {

class Args {
 public:
  Args(std::initializer_list<std::string> args) : store_(args) {
    store_.insert(store_.begin(), "zkraft-server");
    for (auto& s : store_) ptrs_.push_back(s.data());
  }
  int argc() { return static_cast<int>(ptrs_.size()); }
  char** argv() { return ptrs_.data(); }

 private:
  std::vector<std::string> store_;
  std::vector<char*> ptrs_;
};

}  // namespace zkraft::server::cli_testing
