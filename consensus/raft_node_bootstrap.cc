#include "consensus/raft_node_bootstrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace zkraft::consensus {

namespace {

constexpr const char* kFileName = "ZKRAFT-BOOTSTRAP-MEMBERSHIP";

bool fsync_path(const std::string& path, int flags, std::string* error) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    *error = "open " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = ::fsync(fd) == 0;
  if (!ok) *error = "fsync " + path + ": " + std::strerror(errno);
  ::close(fd);
  return ok;
}

bool read_ids(std::istringstream& line, std::vector<NodeId>* out) {
  std::string tok;
  while (line >> tok) {
    if (tok.empty() || !std::all_of(tok.begin(), tok.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    try {
      out->push_back(std::stoull(tok));
    } catch (...) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string encode_bootstrap_membership(const Membership& m) {
  // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on " " + to_string.
  std::string s = "voters";
  for (NodeId v : m.voters) (s += ' ') += std::to_string(v);
  s += "\nlearners";
  for (NodeId l : m.learners) (s += ' ') += std::to_string(l);
  s += "\n";
  return s;
}

bool decode_bootstrap_membership(const std::string& text, Membership* out) {
  std::istringstream in(text);
  std::string voters_line, learners_line, extra;
  if (!std::getline(in, voters_line) || !std::getline(in, learners_line)) return false;
  if (std::getline(in, extra) && !extra.empty()) return false;
  std::istringstream v(voters_line), l(learners_line);
  std::string head;
  Membership m;
  if (!(v >> head) || head != "voters" || !read_ids(v, &m.voters)) return false;
  if (!(l >> head) || head != "learners" || !read_ids(l, &m.learners)) return false;
  *out = std::move(m);
  return true;
}

bool load_or_record_bootstrap_membership(const std::string& dir, const Membership& fallback,
                                         Membership* out, std::string* error) {
  const std::string path = dir + "/" + kFileName;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream buf;
      buf << in.rdbuf();
      if (!decode_bootstrap_membership(buf.str(), out)) {
        *error = "malformed bootstrap membership record " + path;
        return false;
      }
      return true;
    }
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << encode_bootstrap_membership(fallback);
    f.flush();
    if (!f) {
      *error = "cannot write " + tmp;
      return false;
    }
  }
  if (!fsync_path(tmp, O_RDONLY, error)) return false;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "rename " + tmp + ": " + std::strerror(errno);
    return false;
  }
  if (!fsync_path(dir, O_RDONLY | O_DIRECTORY, error)) return false;
  *out = fallback;
  return true;
}

}  // namespace zkraft::consensus
