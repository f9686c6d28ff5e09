// Model-based test: random operations applied to ZnodeTree and to a naive reference model written
// straight from ZooKeeper's rules (a std::map of path -> record, multi = copy, apply, keep or drop),
// compared after every operation: result codes, created names, every node's Stat, data and children.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "tests/tree/tree_test_util.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {
namespace {

using namespace testing;  // NOLINT
namespace err = jute::err;

struct ModelNode {
  jute::Buffer data;
  int64_t czxid = 0, mzxid = 0, pzxid = 0, ctime = 0, mtime = 0, owner = 0;
  int32_t version = 0, creates = 0, deletes = 0;
  bool ephemeral = false;
};

class Model {
 public:
  Model() {
    nodes_["/"] = {};
    nodes_["/zookeeper"] = {};
    nodes_["/zookeeper/quota"] = {};
    nodes_["/zookeeper/config"] = {};
  }

  static std::string parent(const std::string& p) {
    size_t s = p.rfind('/');
    return s == 0 ? "/" : p.substr(0, s);
  }

  std::vector<std::string> kids(const std::string& p) const {
    // Descendants of p sort between p + "/" and p + "0" ('0' follows '/').
    std::string lo = p == "/" ? "/" : p + "/";
    std::string hi = p == "/" ? "0" : p + "0";
    std::vector<std::string> out;
    for (auto it = nodes_.lower_bound(lo); it != nodes_.end() && it->first < hi; ++it) {
      const std::string& path = it->first;
      if (path.size() > lo.size() && path.find('/', lo.size()) == std::string::npos) {
        out.push_back(path.substr(lo.size()));
      }
    }
    return out;
  }

  int32_t create(int64_t zxid, int64_t session, const std::string& path, const jute::Buffer& data,
                 int32_t mode, std::string& created) {
    std::string par = parent(path);
    if (!nodes_.count(par)) return err::kNoNode;
    ModelNode& p = nodes_[par];
    std::string full = path;
    if (jute::create_mode::is_sequential(mode)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%010d", p.creates);
      full += buf;
    }
    if (nodes_.count(full)) return err::kNodeExists;
    if (p.ephemeral) return err::kNoChildrenForEphemerals;
    p.creates++;
    p.pzxid = zxid;
    ModelNode n;
    n.data = data;
    n.czxid = n.mzxid = n.pzxid = zxid;
    n.ctime = n.mtime = zxid * 1000;
    n.ephemeral = jute::create_mode::is_ephemeral(mode);
    n.owner = n.ephemeral ? session : 0;
    nodes_[full] = n;
    created = full;
    return err::kOk;
  }

  int32_t remove(int64_t zxid, const std::string& path, int32_t version) {
    if (path == "/" || path == "/zookeeper" || path == "/zookeeper/quota" || path == "/zookeeper/config") {
      return err::kBadArguments;
    }
    if (!nodes_.count(parent(path))) return err::kNoNode;
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return err::kNoNode;
    if (version != -1 && version != it->second.version) return err::kBadVersion;
    if (!kids(path).empty()) return err::kNotEmpty;
    nodes_.erase(it);
    ModelNode& p = nodes_[parent(path)];
    p.deletes++;
    p.pzxid = std::max(p.pzxid, zxid);
    return err::kOk;
  }

  int32_t set_data(int64_t zxid, const std::string& path, const jute::Buffer& data, int32_t version) {
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return err::kNoNode;
    if (version != -1 && version != it->second.version) return err::kBadVersion;
    it->second.data = data;
    it->second.mzxid = zxid;
    it->second.mtime = zxid * 1000;
    it->second.version++;
    return err::kOk;
  }

  int32_t check(const std::string& path, int32_t version) const {
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return err::kNoNode;
    if (version != -1 && version != it->second.version) return err::kBadVersion;
    return err::kOk;
  }

  void close_session(int64_t zxid, int64_t session) {
    std::vector<std::string> doomed;
    for (const auto& [path, n] : nodes_) {
      if (n.ephemeral && n.owner == session) doomed.push_back(path);
    }
    for (const auto& p : doomed) remove(zxid, p, -1);
  }

  // Stat by the documented formulas: cversion = creates + deletes, shifted by the -1 / -2 the
  // fresh tree starts with (ZooKeeper adds /zookeeper and its children without counting them).
  jute::Stat stat(const std::string& path) const {
    const ModelNode& n = nodes_.at(path);
    jute::Stat s;
    s.czxid = n.czxid;
    s.mzxid = n.mzxid;
    s.pzxid = n.pzxid;
    s.ctime = n.ctime;
    s.mtime = n.mtime;
    s.version = n.version;
    int32_t base = path == "/" ? -1 : path == "/zookeeper" ? -2 : 0;
    s.cversion = base + n.creates + n.deletes;
    s.aversion = path == "/zookeeper/config" ? -1 : 0;
    s.ephemeral_owner = n.owner;
    s.data_length = n.data.is_null ? 0 : static_cast<int32_t>(n.data.bytes.size());
    s.num_children = static_cast<int32_t>(kids(path).size());
    return s;
  }

  std::map<std::string, ModelNode> nodes_;
};

void expect_same(const ZnodeTree& t, const Model& m, const std::string& where) {
  ASSERT_EQ(t.node_count(), m.nodes_.size() + 1) << where;
  for (const auto& [path, n] : m.nodes_) {
    jute::Stat s;
    jute::Buffer d;
    ASSERT_EQ(t.get_data(path, kNobody, d, s), err::kOk) << where << " " << path;
    ASSERT_EQ(s, m.stat(path)) << where << " " << path;
    ASSERT_EQ(d, n.data) << where << " " << path;
    std::vector<std::string> kids = children(t, path);
    std::vector<std::string> expected = m.kids(path);
    std::sort(kids.begin(), kids.end());
    ASSERT_EQ(kids, expected) << where << " " << path;
  }
}

TEST(ModelTest, RandomOperationsMatchTheReferenceModel) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    std::mt19937_64 rng(seed);
    auto pick = [&](uint64_t n) { return rng() % n; };
    auto path = [&] {
      static const char* kNames[] = {"x", "y", "z"};
      std::string p;
      uint64_t depth = 1 + pick(3);
      for (uint64_t i = 0; i < depth; ++i) p += std::string("/") + kNames[pick(3)];
      return p;
    };
    auto data = [&] {
      if (pick(6) == 0) return jute::Buffer::null();
      return buf(std::string(pick(4), 'd'));
    };
    ZnodeTree t;
    Model m;
    for (int64_t zxid = 1; zxid <= 1500; ++zxid) {
      std::string where = "seed " + std::to_string(seed) + " zxid " + std::to_string(zxid);
      int64_t session = 1 + static_cast<int64_t>(pick(2));
      TxnContext c = ctx(zxid, session);
      std::vector<WatchTrigger> out;
      jute::Stat st;
      switch (pick(6)) {
        case 0:
        case 1: {
          std::string p = path();
          jute::Buffer d = data();
          auto mode = static_cast<int32_t>(pick(4));
          std::string got, want;
          int32_t rc = t.create(c, p, d, kOpen, mode, -1, got, &st, out);
          ASSERT_EQ(rc, m.create(zxid, session, p, d, mode, want)) << where;
          if (rc == err::kOk) {
            ASSERT_EQ(got, want) << where;
            ASSERT_EQ(st, m.stat(want)) << where;
          }
          break;
        }
        case 2: {
          std::string p = path();
          auto version = static_cast<int32_t>(pick(3)) - 1;
          ASSERT_EQ(t.remove(c, p, version, out), m.remove(zxid, p, version)) << where;
          break;
        }
        case 3: {
          std::string p = path();
          jute::Buffer d = data();
          auto version = static_cast<int32_t>(pick(3)) - 1;
          int32_t rc = t.set_data(c, p, d, version, st, out);
          ASSERT_EQ(rc, m.set_data(zxid, p, d, version)) << where;
          if (rc == err::kOk) {
            ASSERT_EQ(st, m.stat(p)) << where;
          }
          break;
        }
        case 4: {
          std::vector<MultiOp> ops;
          Model scratch = m;
          int32_t first_error = err::kOk;
          size_t failed_at = 0;
          uint64_t n = 1 + pick(4);
          std::vector<std::string> want_paths;
          for (uint64_t k = 0; k < n; ++k) {
            std::string p = path();
            int32_t rc;
            std::string created;
            switch (pick(4)) {
              case 0: {
                auto mode = static_cast<int32_t>(pick(4));
                jute::Buffer d = data();
                ops.emplace_back(CreateOp{p, d, kOpen, mode, -1});
                rc = scratch.create(zxid, session, p, d, mode, created);
                break;
              }
              case 1:
                ops.emplace_back(DeleteOp{p, -1});
                rc = scratch.remove(zxid, p, -1);
                break;
              case 2: {
                jute::Buffer d = data();
                ops.emplace_back(SetDataOp{p, d, -1});
                rc = scratch.set_data(zxid, p, d, -1);
                break;
              }
              default:
                ops.emplace_back(CheckOp{p, 0});
                rc = scratch.check(p, 0);
            }
            want_paths.push_back(created);
            if (rc != err::kOk && first_error == err::kOk) {
              first_error = rc;
              failed_at = k;
            }
            if (first_error != err::kOk) break;
          }
          bool ok = false;
          auto results = t.multi(c, ops, out, ok);
          ASSERT_EQ(ok, first_error == err::kOk) << where;
          if (ok) {
            m = scratch;
            for (size_t k = 0; k < results.size(); ++k) ASSERT_EQ(results[k].path, want_paths[k]) << where;
          } else {
            ASSERT_EQ(results[failed_at].err, first_error) << where;
            ASSERT_TRUE(out.empty()) << where;
          }
          break;
        }
        default:
          t.close_session(c, session, out);
          m.close_session(zxid, session);
      }
      // A full comparison is O(nodes^2) in the model; every few ops keeps the suite fast.
      if (zxid % 5 == 0) {
        expect_same(t, m, where);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace zkraft::tree
