#pragma once
// Small helpers shared by the tree tests: contexts, ACL lists and one-line wrappers.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jute/data.h"
#include "jute/errors.h"
#include "tree/znode_tree.h"

namespace zkraft::tree::testing {

inline const std::vector<jute::ACL> kOpen{{jute::perms::kAll, {"world", "anyone"}}};
inline const std::vector<jute::ACL> kReadOnly{{jute::perms::kRead, {"world", "anyone"}}};
inline const std::vector<jute::Id> kNobody{};

inline TxnContext ctx(int64_t zxid, int64_t session = 0, const std::vector<jute::Id>* auth = nullptr) {
  TxnContext c;
  c.zxid = zxid;
  c.time_ms = zxid * 1000;  // time derived from zxid keeps expectations easy to read
  c.session_id = session;
  c.auth = auth;
  return c;
}

inline jute::Buffer buf(const std::string& s) { return jute::Buffer{s, false}; }

// serialize()'s bytes.
inline std::string snapshot_of(const ZnodeTree& t) {
  jute::Writer w;
  t.serialize(w);
  return w.take();
}

// Creates with defaults; returns the error code and fills `path_out` if given.
inline int32_t create(ZnodeTree& t, int64_t zxid, const std::string& path, const std::string& data = "",
                      int32_t mode = 0, const std::vector<jute::ACL>& acl = kOpen,
                      int64_t session = 0, std::string* path_out = nullptr, int64_t ttl = -1,
                      const std::vector<jute::Id>* auth = nullptr) {
  std::string created;
  std::vector<WatchTrigger> out;
  int32_t rc = t.create(ctx(zxid, session, auth), path, buf(data), acl, mode, ttl, created, nullptr, out);
  if (path_out) *path_out = created;
  return rc;
}

inline int32_t remove(ZnodeTree& t, int64_t zxid, const std::string& path, int32_t version = -1,
                      const std::vector<jute::Id>* auth = nullptr) {
  std::vector<WatchTrigger> out;
  return t.remove(ctx(zxid, 0, auth), path, version, out);
}

inline jute::Stat stat(const ZnodeTree& t, const std::string& path) {
  jute::Stat s;
  EXPECT_TRUE(t.stat_of(path, s)) << path;
  return s;
}

inline std::vector<std::string> children(const ZnodeTree& t, const std::string& path) {
  std::vector<std::string> out;
  EXPECT_EQ(t.get_children(path, kNobody, out, nullptr), jute::err::kOk) << path;
  return out;
}

// Quota nodes (their stats change with writes under /a) and config data: the changes a client's
// write makes to nodes it did not name.
inline void add_quota_and_config(ZnodeTree& t, int64_t& zxid) {
  ASSERT_EQ(create(t, ++zxid, "/a"), jute::err::kOk);
  ASSERT_EQ(create(t, ++zxid, "/zookeeper/quota/a"), jute::err::kOk);
  ASSERT_EQ(create(t, ++zxid, "/zookeeper/quota/a/zookeeper_limits", "count=100000,bytes=-1"), jute::err::kOk);
  ASSERT_EQ(create(t, ++zxid, "/zookeeper/quota/a/zookeeper_stats", "count=1,bytes=0"), jute::err::kOk);
  t.set_config_data("server.1=127.0.0.1:1:2:participant;127.0.0.1:3\nversion=0");
}

}  // namespace zkraft::tree::testing
