// ZkStateMachine: the replicated state applied from Txns. Determinism, sessions, snapshots and the
// error transactions ZooKeeper clients see.

#include <gtest/gtest.h>

#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/multi.h"
#include "jute/opcodes.h"
#include "jute/requests.h"
#include "jute/responses.h"
#include "server/txn.h"
#include "server/zk_state_machine.h"
#include "session/session_password.h"

namespace zkraft::server {
namespace {

namespace op = jute::op;
namespace err = jute::err;

const std::vector<jute::ACL> kOpen{{jute::perms::kAll, {"world", "anyone"}}};

template <class T>
std::string bytes_of(const T& record) {
  jute::Writer w;
  jute::encode(w, record);
  return w.take();
}

Txn session_txn(int64_t id, int32_t timeout = 4000) {
  Txn t;
  t.kind = TxnKind::kCreateSession;
  t.session_id = id;
  t.timeout_ms = timeout;
  t.password = session::to_bytes(session::make_password(id, 7));
  return t;
}

Txn request(int64_t session, int32_t opcode, std::string body, int64_t time_ms = 1000) {
  Txn t;
  t.kind = TxnKind::kRequest;
  t.session_id = session;
  t.op = opcode;
  t.time_ms = time_ms;
  t.request = std::move(body);
  return t;
}

Txn create(int64_t session, const std::string& path, int32_t flags = 0, const std::string& data = "d") {
  return request(session, op::kCreate2, bytes_of(jute::CreateRequest{path, {data, false}, kOpen, flags}));
}

TEST(Txn, RoundTripsEveryField) {
  Txn t = session_txn(0x0100000000000001);
  t.xid = 7;
  t.op = op::kCreate;
  t.time_ms = 123456;
  t.origin_server = 3;
  t.origin_request = 99;
  t.auth = {{"ip", "127.0.0.1"}, {"digest", "u:hash"}};
  t.request = std::string("\0\1\2", 3);
  t.path = "/p";
  t.expired = true;
  auto back = decode_txn(encode_txn(t));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->kind, t.kind);
  EXPECT_EQ(back->session_id, t.session_id);
  EXPECT_EQ(back->xid, t.xid);
  EXPECT_EQ(back->op, t.op);
  EXPECT_EQ(back->time_ms, t.time_ms);
  EXPECT_EQ(back->origin_server, t.origin_server);
  EXPECT_EQ(back->origin_request, t.origin_request);
  EXPECT_EQ(back->auth, t.auth);
  EXPECT_EQ(back->request, t.request);
  EXPECT_EQ(back->timeout_ms, t.timeout_ms);
  EXPECT_EQ(back->password, t.password);
  EXPECT_EQ(back->path, t.path);
  EXPECT_EQ(back->expired, t.expired);
}

TEST(Txn, RejectsBytesThatAreNotATxn) {
  EXPECT_FALSE(decode_txn("").has_value());
  EXPECT_FALSE(decode_txn("garbage bytes").has_value());
  std::string good = encode_txn(session_txn(5));
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(decode_txn(std::string_view(good).substr(0, cut)).has_value()) << cut;
  }
}

TEST(ZkStateMachine, CloseSessionDeletesItsEphemeralsWithTriggers) {
  ZkStateMachine sm;
  EXPECT_TRUE(sm.apply(1, session_txn(10)).session_created);
  EXPECT_EQ(sm.apply(2, create(10, "/e", jute::create_mode::kEphemeral)).err, err::kOk);
  EXPECT_EQ(sm.tree().ephemeral_count(), 1u);
  Txn close;
  close.kind = TxnKind::kCloseSession;
  close.session_id = 10;
  auto out = sm.apply(3, close);
  EXPECT_TRUE(out.session_closed);
  EXPECT_FALSE(sm.tree().contains("/e"));
  ASSERT_FALSE(out.triggers.empty());
  EXPECT_EQ(out.triggers.front().path, "/e");
  EXPECT_FALSE(sm.sessions().contains(10));
  EXPECT_EQ(sm.last_zxid(), 3);
}

TEST(ZkStateMachine, RequestOfAnUnknownSessionFailsWithSessionExpired) {
  ZkStateMachine sm;
  auto out = sm.apply(1, create(42, "/x"));
  EXPECT_EQ(out.err, err::kSessionExpired);
  EXPECT_FALSE(sm.tree().contains("/x"));
}

TEST(ZkStateMachine, SameEntriesGiveTheSameStateAndSnapshotsRoundTrip) {
  std::vector<Txn> log = {session_txn(1), create(1, "/a"), create(1, "/a/s-", 2),
                          create(1, "/a/s-", 3), create(1, "/a", 0)};
  log.push_back(request(1, op::kSetData, bytes_of(jute::SetDataRequest{"/a", {"v2", false}, 0})));
  ZkStateMachine a, b;
  for (size_t i = 0; i < log.size(); ++i) {
    auto ra = a.apply(static_cast<int64_t>(i + 1), log[i]);
    auto rb = b.apply(static_cast<int64_t>(i + 1), log[i]);
    EXPECT_EQ(ra.err, rb.err);
    EXPECT_EQ(ra.reply, rb.reply);
  }
  EXPECT_EQ(a.tree().digest(), b.tree().digest());

  ZkStateMachine c;
  ASSERT_TRUE(c.restore(static_cast<int64_t>(log.size()), a.serialize()));
  EXPECT_EQ(c.tree().digest(), a.tree().digest());
  EXPECT_EQ(c.sessions(), a.sessions());
  EXPECT_EQ(c.last_zxid(), a.last_zxid());
  // Applying more on the restored copy stays in step with the original.
  auto more = create(1, "/b");
  EXPECT_EQ(a.apply(10, more).reply, c.apply(10, more).reply);
  EXPECT_EQ(c.tree().digest(), a.tree().digest());
}

TEST(ZkStateMachine, RestoreOfGarbageLeavesTheStateAlone) {
  ZkStateMachine sm;
  sm.apply(1, session_txn(1));
  sm.apply(2, create(1, "/keep"));
  uint64_t before = sm.tree().digest();
  std::string snap = sm.serialize();
  EXPECT_FALSE(sm.restore(5, "not a snapshot"));
  EXPECT_FALSE(sm.restore(5, std::string_view(snap).substr(0, snap.size() / 2)));
  EXPECT_EQ(sm.tree().digest(), before);
  EXPECT_TRUE(sm.tree().contains("/keep"));
}

TEST(ZkStateMachine, FailedMultiReportsPerOpResultsAndChangesNothing) {
  ZkStateMachine sm;
  sm.apply(1, session_txn(1));
  jute::MultiRequest m;
  m.ops.push_back({op::kCreate, jute::CreateRequest{"/m1", {"", false}, kOpen, 0}});
  m.ops.push_back({op::kDelete, jute::DeleteRequest{"/missing", -1}});
  m.ops.push_back({op::kCreate, jute::CreateRequest{"/m2", {"", false}, kOpen, 0}});
  auto out = sm.apply(2, request(1, op::kMulti, bytes_of(m)));
  EXPECT_EQ(out.err, err::kOk);  // the header says ok; the results carry the errors
  jute::Reader r(out.reply);
  jute::MultiResponse resp;
  ASSERT_TRUE(jute::decode(r, resp));
  ASSERT_EQ(resp.results.size(), 3u);
  EXPECT_EQ(resp.results[0].err, err::kOk);
  EXPECT_EQ(resp.results[1].err, err::kNoNode);
  EXPECT_EQ(resp.results[2].err, err::kRuntimeInconsistency);
  EXPECT_FALSE(sm.tree().contains("/m1"));
  EXPECT_TRUE(out.triggers.empty());
}

TEST(ZkStateMachine, TtlNodesNeedExtendedTypes) {
  jute::CreateTTLRequest ttl{"/t", {"", false}, kOpen, jute::create_mode::kPersistentWithTTL, 5000};
  ZkStateMachine off;
  off.apply(1, session_txn(1));
  EXPECT_EQ(off.apply(2, request(1, op::kCreateTTL, bytes_of(ttl))).err, err::kUnimplemented);
  ZkStateMachine on(StateMachineOptions{true});
  on.apply(1, session_txn(1));
  EXPECT_EQ(on.apply(2, request(1, op::kCreateTTL, bytes_of(ttl))).err, err::kOk);
  EXPECT_TRUE(on.tree().contains("/t"));
}

// zookeeper.enforceQuota reaches the tree, also after a snapshot is restored; the tree's quota line
// comes back in the outcome for the server's log, whether or not it enforces.
TEST(ZkStateMachine, EnforceQuotaRefusesPastAHardLimitAndSurvivesARestore) {
  auto setup = [](ZkStateMachine& sm) {
    sm.apply(1, session_txn(1));
    sm.apply(2, create(1, "/q", 0, ""));
    sm.apply(3, create(1, "/zookeeper/quota/q", 0, ""));
    sm.apply(4, create(1, "/zookeeper/quota/q/zookeeper_limits", 0,
                       "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2"));
    sm.apply(5, create(1, "/zookeeper/quota/q/zookeeper_stats", 0, "count=0,bytes=0"));
    EXPECT_EQ(sm.apply(6, create(1, "/q/a")).err, err::kOk);
  };
  ZkStateMachine on(StateMachineOptions{false, false, true});
  setup(on);
  ApplyOutcome refused = on.apply(7, create(1, "/q/b"));
  EXPECT_EQ(refused.err, err::kQuotaExceeded);
  EXPECT_EQ(refused.quota_warning, "Quota exceeded: /q [current count=3, hardCountLimit=2]");
  EXPECT_FALSE(on.tree().contains("/q/b"));
  ZkStateMachine restored(StateMachineOptions{false, false, true});
  ASSERT_TRUE(restored.restore(7, on.serialize()));
  EXPECT_EQ(restored.apply(8, create(1, "/q/b")).err, err::kQuotaExceeded);

  ZkStateMachine off;
  setup(off);
  ApplyOutcome allowed = off.apply(7, create(1, "/q/b"));
  EXPECT_EQ(allowed.err, err::kOk);
  EXPECT_EQ(allowed.quota_warning, "Quota exceeded: /q [current count=3, hardCountLimit=2]");
  EXPECT_EQ(off.apply(8, create(1, "/other")).quota_warning, "");
}

// ZooKeeper 3.9.4 (MultiOperationRecord keeps the op code, Op.Create.getOpcode turns a container or
// TTL mode into createContainer/createTTL, FinalRequestProcessor answers those and create2 with
// CreateResult(path, stat), type 15): only a plain create answers type 1 with the path alone.
// 3.8 differs for create2 (it answers type 1): the differential suite compares the rest.
TEST(ZkStateMachine, CreatesInAMultiAnswerCreate2WithAStatButAPlainCreate) {
  ZkStateMachine sm(StateMachineOptions{true});
  sm.apply(1, session_txn(1));
  jute::MultiRequest m;
  m.ops.push_back({op::kCreate, jute::CreateRequest{"/plain", {"", false}, kOpen, 0}});
  m.ops.push_back({op::kCreate2, jute::CreateRequest{"/two", {"", false}, kOpen, 0}});
  m.ops.push_back({op::kCreateContainer, jute::CreateRequest{"/box", {"", false}, kOpen, 4}});
  m.ops.push_back({op::kCreateTTL, jute::CreateTTLRequest{"/ttl", {"", false}, kOpen, 5, 5000}});
  m.ops.push_back({op::kCreate, jute::CreateRequest{"/box2", {"", false}, kOpen, 4}});
  auto out = sm.apply(2, request(1, op::kMulti, bytes_of(m)));
  ASSERT_EQ(out.err, err::kOk);
  jute::Reader r(out.reply);
  jute::MultiResponse resp;
  ASSERT_TRUE(jute::decode(r, resp));
  ASSERT_EQ(resp.results.size(), 5u);
  EXPECT_EQ(resp.results[0].type, op::kCreate);
  EXPECT_EQ(std::get<jute::CreateResponse>(resp.results[0].body).path, "/plain");
  for (size_t i = 1; i < 5; ++i) {
    EXPECT_EQ(resp.results[i].type, op::kCreate2) << i;
    const auto& c = std::get<jute::Create2Response>(resp.results[i].body);
    EXPECT_EQ(c.stat.czxid, 2) << i;
  }
  EXPECT_EQ(std::get<jute::Create2Response>(resp.results[2].body).path, "/box");
  EXPECT_EQ(std::get<jute::Create2Response>(resp.results[4].body).path, "/box2");
}

TEST(ZkStateMachine, MalformedRequestIsAMarshallingErrorThatStillUsesAZxid) {
  ZkStateMachine sm;
  sm.apply(1, session_txn(1));
  auto out = sm.apply(2, request(1, op::kSetData, "\x01"));
  EXPECT_EQ(out.err, err::kMarshallingError);
  EXPECT_EQ(sm.last_zxid(), 2);
}

}  // namespace
}  // namespace zkraft::server
