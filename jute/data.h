#pragma once
// The data records shared by the tree, sessions and the wire: Id, ACL and Stat, with their codecs.

#include <cstdint>
#include <string>
#include <vector>

#include "jute/archive.h"

namespace zkraft::jute {

namespace perms {
inline constexpr int32_t kRead = 1, kWrite = 2, kCreate = 4, kDelete = 8, kAdmin = 16, kAll = 31;
}

struct Id {
  std::string scheme;
  std::string id;
  bool operator==(const Id&) const = default;
};

struct ACL {
  int32_t perms = 0;
  Id id;
  bool operator==(const ACL&) const = default;
};

// What a client sees of a znode (68 bytes on the wire).
struct Stat {
  int64_t czxid = 0;
  int64_t mzxid = 0;
  int64_t ctime = 0;
  int64_t mtime = 0;
  int32_t version = 0;
  int32_t cversion = 0;
  int32_t aversion = 0;
  int64_t ephemeral_owner = 0;
  int32_t data_length = 0;
  int32_t num_children = 0;
  int64_t pzxid = 0;
  bool operator==(const Stat&) const = default;
};

void encode(Writer& w, const Id& v);
void encode(Writer& w, const ACL& v);
void encode(Writer& w, const Stat& v);
void encode(Writer& w, const std::vector<ACL>& v);
bool decode(Reader& r, Id& v);
bool decode(Reader& r, ACL& v);
bool decode(Reader& r, Stat& v);
bool decode(Reader& r, std::vector<ACL>& v);

}  // namespace zkraft::jute
