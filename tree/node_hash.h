#pragma once
// A znode's hash, the unit of the tree's rolling digests (ZnodeTree::rolling_digest): content
// (path, data) + meta (path, Stat fields, ACL id, kind). One definition for both places that
// compute it: the tree from its nodes, and LiveSnapshotCheck from a snapshot's records, whose
// sums must agree exactly. Not part of the tree's interface.
//
// A word-at-a-time multiply-xorshift chain with a splitmix64 finish, so that sums of hashes
// spread well. Bytes are read as little-endian 64-bit words on every platform, so every build
// agrees. It was byte-at-a-time FNV-1a: one multiply per byte, 8% of a 1,000,000-znode restart
// (the snapshot load and the replay hash every node). The values exist only in memory (the
// rolling digests, the `hash` history), so the change needs every member on the same build to
// compare them, nothing more.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace zkraft::tree::internal {

class NodeHasher {
 public:
  void word(uint64_t w) {
    h_ = (h_ ^ w) * 0x9fb21c651e98df25ULL;
    h_ ^= h_ >> 29;
  }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (; n >= 8; b += 8, n -= 8) word(load_le(b, 8));
    if (n > 0) word(load_le(b, n));  // zero-padded; every byte run is preceded by its length
  }
  uint64_t finish(uint64_t salt) const {
    uint64_t h = h_ + salt;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
  }

 private:
  static uint64_t load_le(const unsigned char* b, size_t n) {
    uint64_t w = 0;
    std::memcpy(&w, b, n);
    if constexpr (std::endian::native == std::endian::big) {
      w = __builtin_bswap64(w);  // the n bytes were the high ones; now the low ones, in order
    }
    return w;
  }
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

// What the meta hash covers, as a snapshot record holds it (owner: Znode::owner()).
struct NodeMeta {
  int64_t czxid, mzxid, pzxid, ctime, mtime, owner;
  int32_t version, cversion, aversion;
  uint32_t acl;
  uint32_t kind;
};

// The path's length and bytes: the prefix both hashes start with.
inline NodeHasher path_prefix(std::string_view path) {
  NodeHasher h;
  h.word(path.size());
  h.bytes(path.data(), path.size());
  return h;
}

inline uint64_t finish_content(NodeHasher h, bool data_null, std::string_view data) {
  h.word(data_null ? ~uint64_t{0} : data.size());
  h.bytes(data.data(), data.size());
  return h.finish(0x9e3779b97f4a7c15ULL);
}

inline uint64_t finish_meta(NodeHasher h, const NodeMeta& m) {
  for (int64_t v : {m.czxid, m.mzxid, m.pzxid, m.ctime, m.mtime, m.owner}) h.word(static_cast<uint64_t>(v));
  for (int32_t v : {m.version, m.cversion, m.aversion}) h.word(static_cast<uint32_t>(v));
  h.word(m.acl);
  h.word(m.kind);
  return h.finish(0x632be59bd9b4e019ULL);
}

}  // namespace zkraft::tree::internal
