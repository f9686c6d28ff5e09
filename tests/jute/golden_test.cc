// Golden bytes captured from kazoo and the Java client talking to Apache ZooKeeper 3.8.0
// (golden/README.md): every frame must decode with our decoders and re-encode identically.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "jute/records.h"
#include "jute/reply.h"
#include "jute/request.h"
#include "test_util.h"

namespace zkraft::jute {
namespace {

using testing::encoded;
using testing::from_hex;
using testing::to_hex;

struct Transcript {
  std::vector<std::pair<char, std::string>> frames;  // '>' client->server, '<' server->client
};

Transcript load(const std::string& name) {
  Transcript t;
  std::ifstream in(std::string(ZKRAFT_JUTE_GOLDEN_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(line.size() > 2 && (line[0] == '>' || line[0] == '<') && line[1] == ' ') << line;
    t.frames.emplace_back(line[0], from_hex(std::string_view(line).substr(2)));
  }
  return t;
}

// What a transcript contained, for the per-file expectations.
struct Summary {
  std::set<int32_t> request_ops;
  std::vector<DecodedReply> replies;
  std::map<int32_t, int32_t> op_of_xid;
  int notifications = 0;
  size_t connect_response_size = 0;
  std::vector<std::pair<int32_t, MultiResponse>> multis;  // (op, response)
};

// Decodes and re-encodes every frame; records failures with gtest.
void replay(const Transcript& t, Summary& s) {
  bool connected_req = false, connected_resp = false;
  for (const auto& [dir, bytes] : t.frames) {
    SCOPED_TRACE(std::string(1, dir) + " " + to_hex(bytes));
    if (dir == '>' && !connected_req) {
      connected_req = true;
      ConnectRequest c;
      ASSERT_EQ(decode_connect_request(bytes, Limits{}, c), err::kOk);
      EXPECT_EQ(to_hex(encoded(c)), to_hex(bytes));
      continue;
    }
    if (dir == '<' && !connected_resp) {
      connected_resp = true;
      ConnectResponse c;
      ASSERT_EQ(decode_connect_response(bytes, Limits{}, c), err::kOk);
      EXPECT_EQ(to_hex(encoded(c)), to_hex(bytes));
      s.connect_response_size = bytes.size();
      continue;
    }
    if (dir == '>') {
      DecodedRequest d;
      ASSERT_EQ(decode_request(bytes, Limits{}, d), err::kOk) << op_name(d.header.type);
      EXPECT_EQ(to_hex(encode_request(d)), to_hex(bytes)) << op_name(d.header.type);
      s.request_ops.insert(d.header.type);
      s.op_of_xid[d.header.xid] = d.header.type;
      continue;
    }
    DecodedReply rep;
    Reader peek(bytes);
    ReplyHeader h;
    ASSERT_TRUE(decode(peek, h));
    int32_t op = 0;
    switch (h.xid) {
      case xid::kNotification: ++s.notifications; break;
      case xid::kPing: op = op::kPing; break;
      case xid::kAuth: op = op::kAuth; break;
      case xid::kSetWatches: op = op::kSetWatches; break;
      default: {
        auto it = s.op_of_xid.find(h.xid);
        ASSERT_NE(it, s.op_of_xid.end()) << "reply to unknown xid " << h.xid;
        op = it->second;
      }
    }
    ASSERT_EQ(decode_reply(bytes, op, Limits{}, rep), err::kOk) << op_name(op);
    EXPECT_EQ(to_hex(encode_reply(rep)), to_hex(bytes)) << op_name(op);
    if (auto* m = std::get_if<MultiResponse>(&rep.body)) s.multis.emplace_back(op, *m);
    s.replies.push_back(std::move(rep));
  }
  EXPECT_TRUE(connected_req && connected_resp);
}

std::vector<std::pair<int32_t, int32_t>> type_err(const MultiResponse& m) {
  std::vector<std::pair<int32_t, int32_t>> out;
  for (const auto& r : m.results) out.emplace_back(r.type, r.err);
  return out;
}

TEST(Golden, KazooTranscriptRoundTrips) {
  Transcript t = load("kazoo.frames");
  ASSERT_GT(t.frames.size(), 30u);
  Summary s;
  replay(t, s);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(s.connect_response_size, 37u);
  const std::set<int32_t> expected = {op::kAuth,    op::kCreate,       op::kGetData,
                                      op::kSetData, op::kGetChildren2, op::kGetChildren,
                                      op::kExists,  op::kGetACL,       op::kSetACL,
                                      op::kSync,    op::kMulti,        op::kPing,
                                      op::kDelete,  op::kCloseSession};
  EXPECT_EQ(s.request_ops, expected);
  EXPECT_GE(s.notifications, 1);
  // The multi with a failing check: everything rolled back, header err 0.
  ASSERT_EQ(s.multis.size(), 2u);
  using V = std::vector<std::pair<int32_t, int32_t>>;
  EXPECT_EQ(type_err(s.multis[0].second),
            (V{{-1, 0}, {-1, err::kBadVersion}, {-1, err::kRuntimeInconsistency}}));
  EXPECT_EQ(type_err(s.multis[1].second),
            (V{{op::kCreate, 0}, {op::kSetData, 0}, {op::kCheck, 0}, {op::kDelete, 0}}));
}

TEST(Golden, JavaClientTranscriptRoundTrips) {
  Transcript t = load("java.frames");
  ASSERT_GT(t.frames.size(), 30u);
  Summary s;
  replay(t, s);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(s.connect_response_size, 37u);
  const std::set<int32_t> expected = {
      op::kCreate2,      op::kCreateContainer, op::kCreateTTL,     op::kAddWatch,
      op::kSetData,      op::kGetEphemerals,   op::kGetAllChildrenNumber,
      op::kWhoAmI,       op::kMultiRead,       op::kMulti,         op::kGetACL,
      op::kSetACL,       op::kExists,          op::kGetChildren2,  op::kGetChildren,
      op::kCheckWatches, op::kRemoveWatches,   op::kPing,          op::kDelete,
      op::kCloseSession};
  EXPECT_EQ(s.request_ops, expected);
  EXPECT_GE(s.notifications, 2);
  bool saw_read_multi = false;
  for (const auto& [op, m] : s.multis) {
    if (op != op::kMultiRead) continue;
    saw_read_multi = true;
    ASSERT_EQ(m.results.size(), 3u);
    EXPECT_EQ(m.results[0].type, op::kGetData);
    EXPECT_EQ(m.results[1].type, op::kGetChildren);
    EXPECT_EQ(m.results[2].type, -1);  // getData of a missing node, the others still succeed
    EXPECT_EQ(m.results[2].err, err::kNoNode);
  }
  EXPECT_TRUE(saw_read_multi);
  // whoAmI answers [("ip", "127.0.0.1")].
  bool saw_whoami = false;
  for (const auto& r : s.replies) {
    if (auto* w = std::get_if<WhoAmIResponse>(&r.body)) {
      saw_whoami = true;
      EXPECT_EQ(w->client_info, (std::vector<ClientInfo>{{"ip", "127.0.0.1"}}));
    }
  }
  EXPECT_TRUE(saw_whoami);
}

TEST(Golden, JavaClientReconnectResumesSessionAndWatches) {
  // Connection 0 opens the session and sets watches; the proxy cuts it; connection 1 resumes the
  // session and re-registers with SetWatches; after adding persistent watches, connection 2
  // resumes again with SetWatches2.
  Transcript t0 = load("java-reconnect-0.frames");
  Transcript t1 = load("java-reconnect-1.frames");
  Transcript t2 = load("java-reconnect-2.frames");
  Summary s0, s1, s2;
  replay(t0, s0);
  replay(t1, s1);
  replay(t2, s2);
  ASSERT_FALSE(HasFatalFailure());

  ConnectResponse first;
  ASSERT_EQ(decode_connect_response(t0.frames.at(1).second, Limits{}, first), err::kOk);
  EXPECT_NE(first.session_id, 0);
  for (const Transcript* t : {&t1, &t2}) {
    ConnectRequest again;
    ASSERT_EQ(t->frames.at(0).first, '>');
    ASSERT_EQ(decode_connect_request(t->frames.at(0).second, Limits{}, again), err::kOk);
    EXPECT_EQ(again.session_id, first.session_id);
    EXPECT_EQ(again.passwd, first.passwd);
    EXPECT_GT(again.last_zxid_seen, 0);
  }
  EXPECT_TRUE(s1.request_ops.count(op::kSetWatches));
  EXPECT_TRUE(s2.request_ops.count(op::kSetWatches2));

  // The 3.8.0 Java client sends SetWatches with an ordinary xid (not -8); the paths re-register
  // the three one-shot watches set on connection 0.
  bool checked = false;
  for (const auto& [dir, bytes] : t1.frames) {
    DecodedRequest d;
    if (dir != '>' || decode_request(bytes, Limits{}, d) != err::kOk) continue;
    if (auto* w = std::get_if<SetWatches>(&d.body)) {
      checked = true;
      EXPECT_GT(d.header.xid, 0);
      EXPECT_EQ(w->data_watches, (std::vector<std::string>{"/gr"}));
      EXPECT_EQ(w->exist_watches, (std::vector<std::string>{"/gr/none"}));
      EXPECT_EQ(w->child_watches, (std::vector<std::string>{"/gr"}));
    }
  }
  EXPECT_TRUE(checked);
}

TEST(Golden, EveryGoldenFileIsCovered) {
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(ZKRAFT_JUTE_GOLDEN_DIR)) {
    if (e.path().extension() == ".frames") files.insert(e.path().filename().string());
  }
  EXPECT_EQ(files, (std::set<std::string>{"kazoo.frames", "java.frames", "java-reconnect-0.frames",
                                          "java-reconnect-1.frames", "java-reconnect-2.frames"}));
}

}  // namespace
}  // namespace zkraft::jute
