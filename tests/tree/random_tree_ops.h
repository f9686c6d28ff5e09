#pragma once
// A deterministic stream of random tree operations (creates of every mode, deletes, setData,
// setACL, multis that fail half-way and roll back, session closes, container reaping), applied
// with a textual log of what happened: two trees fed the same stream must log the same.

#include <random>
#include <string>
#include <vector>

#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree::testing {

class OpStream {
 public:
  explicit OpStream(uint64_t seed) : rng_(seed) {}

  uint64_t pick(uint64_t n) { return rng_() % n; }

  std::string random_path() {
    static const char* kNames[] = {"a", "b", "c", "d"};
    std::string p;
    uint64_t depth = 1 + pick(3);
    for (uint64_t i = 0; i < depth; ++i) p += std::string("/") + kNames[pick(4)];
    return p;
  }

  jute::Buffer random_data() {
    if (pick(8) == 0) return jute::Buffer::null();
    return buf(std::string(pick(6), static_cast<char>('a' + pick(26))));
  }

  std::vector<jute::ACL> random_acl() {
    switch (pick(5)) {
      case 0: return kReadOnly;
      case 1: return {{jute::perms::kAll, {"auth", ""}}};
      case 2: return {{jute::perms::kAll, {"digest", "u1:h"}}, {jute::perms::kRead, {"world", "anyone"}}};
      default: return kOpen;
    }
  }

  const std::vector<jute::Id>* random_auth() {
    static const std::vector<jute::Id> kU1{{"digest", "u1:h"}};
    static const std::vector<jute::Id> kSuper{{"super", ""}};
    switch (pick(4)) {
      case 0: return nullptr;
      case 1: return &kSuper;
      default: return &kU1;
    }
  }

  CreateOp random_create() {
    CreateOp op{random_path(), random_data(), random_acl(), static_cast<int32_t>(pick(7)), -1};
    if (jute::create_mode::is_ttl(op.mode)) op.ttl = 1 + static_cast<int64_t>(pick(5000));
    return op;
  }

 private:
  std::mt19937_64 rng_;
};

// Applies operation number `i` of the stream and appends a textual record of what happened.
inline void apply_random_op(ZnodeTree& t, OpStream& s, int64_t zxid, std::string& log) {
  TxnContext c;
  c.zxid = zxid;
  c.time_ms = zxid * 10;
  c.session_id = 1 + static_cast<int64_t>(s.pick(3));
  c.auth = s.random_auth();
  std::vector<WatchTrigger> out;
  int32_t rc = 0;
  jute::Stat st;
  switch (s.pick(10)) {
    case 0:
    case 1:
    case 2: {
      CreateOp op = s.random_create();
      std::string created;
      rc = t.create(c, op.path, op.data, op.acl, op.mode, op.ttl, created, &st, out);
      log += created;
      break;
    }
    case 3:
    case 4:
      rc = t.remove(c, s.random_path(), s.pick(3) == 0 ? 0 : -1, out);
      break;
    case 5: {
      std::string path = s.random_path();
      jute::Buffer data = s.random_data();
      rc = t.set_data(c, path, data, s.pick(3) == 0 ? 1 : -1, st, out);
      break;
    }
    case 6: {
      std::string path = s.random_path();
      auto acl = s.random_acl();
      rc = t.set_acl(c, path, acl, -1, st);
      break;
    }
    case 7: {
      std::vector<MultiOp> ops;
      uint64_t n = 1 + s.pick(4);
      for (uint64_t k = 0; k < n; ++k) {
        switch (s.pick(4)) {
          case 0: ops.emplace_back(s.random_create()); break;
          case 1: ops.emplace_back(DeleteOp{s.random_path(), -1}); break;
          case 2: {
            std::string path = s.random_path();
            jute::Buffer data = s.random_data();
            ops.emplace_back(SetDataOp{path, data, -1});
            break;
          }
          default: ops.emplace_back(CheckOp{s.random_path(), -1});
        }
      }
      bool ok = false;
      auto results = t.multi(c, ops, out, ok);
      for (const auto& r : results) log += std::to_string(r.err) + r.path + ",";
      rc = ok ? 0 : 1;
      break;
    }
    case 8:
      t.close_session(c, c.session_id, out);
      break;
    default: {
      auto cands = t.reap_candidates(c.time_ms, 2);
      for (const auto& p : cands) rc += t.delete_container(c, p, out);
      break;
    }
  }
  log += "|" + std::to_string(rc) + ":" + std::to_string(st.mzxid) + ":" + std::to_string(st.version);
  for (const auto& w : out) log += ";" + std::to_string(static_cast<int>(w.type)) + w.path;
  log += "\n";
}

}  // namespace zkraft::tree::testing
