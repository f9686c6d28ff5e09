// ZkStateMachine: the replicated state applied from Txns. Determinism, sessions, snapshots and the
// error transactions ZooKeeper clients see.

#include <gtest/gtest.h>

#include <algorithm>

#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/multi.h"
#include "jute/opcodes.h"
#include "jute/requests.h"
#include "jute/responses.h"
#include "server/membership_text.h"
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

TEST(ZkStateMachine, SnapshotInPiecesIsTheSnapshotAndStopsWhenRefused) {
  ZkStateMachine sm;
  sm.apply(1, session_txn(1));
  int64_t zxid = 2;
  for (int i = 0; i < 200; ++i) sm.apply(zxid++, create(1, "/n" + std::to_string(i)));
  const std::string whole = sm.serialize();
  for (size_t piece : {size_t{1}, size_t{100}, size_t{4096}, whole.size() + 1}) {
    std::string joined;
    size_t calls = 0, largest = 0;
    ASSERT_TRUE(sm.serialize_to(piece, [&](std::string_view p) {
      joined.append(p);
      ++calls;
      largest = std::max(largest, p.size());
      return true;
    }));
    EXPECT_EQ(joined, whole) << "pieces of " << piece;
    if (piece == 100) {
      EXPECT_GT(calls, whole.size() / 200);  // really in pieces
      EXPECT_LT(largest, 100u + 100u);       // under a piece, plus one node (< 100 bytes here)
    }
  }
  size_t calls = 0;
  EXPECT_FALSE(sm.serialize_to(100, [&](std::string_view) { return ++calls < 3; }));
  EXPECT_EQ(calls, 3u);  // nothing more after the refusal
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

// ---- The digest history `hash` prints (DataTree.logZxidDigest). ----

// The write of entry `zxid` in a deterministic little workload: creates, sets, deletes, a multi,
// ephemerals and session churn; some fail, as real workloads do.
Txn workload_txn(int64_t zxid) {
  const int64_t session = 1 + (zxid / 97) % 3;
  const std::string path = "/n" + std::to_string(zxid % 17);
  switch (zxid % 7) {
    case 0: return session_txn(session);  // already there most of the time: SessionExpired
    case 1: return create(session, path, zxid % 2 == 0 ? jute::create_mode::kEphemeral : 0);
    case 2: return request(session, op::kSetData, bytes_of(jute::SetDataRequest{path, {"v" + std::to_string(zxid), false}, -1}), zxid);
    case 3: return request(session, op::kDelete, bytes_of(jute::DeleteRequest{path, -1}), zxid);
    case 4: {
      jute::MultiRequest m;
      m.ops.push_back({op::kCreate, jute::CreateRequest{path + "m", {"x", false}, kOpen, 0}});
      m.ops.push_back({op::kSetData, jute::SetDataRequest{path, {"y", false}, -1}});
      return request(session, op::kMulti, bytes_of(m), zxid);
    }
    case 5: {
      Txn close;
      close.kind = TxnKind::kCloseSession;
      close.session_id = session;
      return close;
    }
    default: return create(session, path + "s-", jute::create_mode::kPersistentSequential);
  }
}

TEST(ZkStateMachineDigest, RecordsTheTreeDigestEvery128ZxidsAndKeepsTheLast1024) {
  ZkStateMachine sm;
  std::vector<ZxidDigest> expected;
  for (int64_t z = 1; z <= 3 * 128 + 5; ++z) {
    if (z % 11 == 0) {
      sm.skip(z);  // a Raft no-op still takes its zxid and its turn
    } else {
      sm.apply(z, workload_txn(z));
    }
    if (z % 128 == 0) expected.push_back({z, static_cast<int64_t>(sm.tree().tree_digest())});
  }
  ASSERT_EQ(sm.digest_log().size(), 3u);
  EXPECT_EQ(std::vector<ZxidDigest>(sm.digest_log().begin(), sm.digest_log().end()), expected);
  EXPECT_EQ(sm.digest_log()[2].zxid, 384);  // hex 180
  // The workload changes the tree between the pairs.
  EXPECT_NE(expected[0].digest, expected[1].digest);
  EXPECT_NE(expected[1].digest, expected[2].digest);

  // The oldest pairs go once 1024 are kept.
  for (int64_t z = 3 * 128 + 6; z <= 1030 * 128; ++z) sm.skip(z);
  ASSERT_EQ(sm.digest_log().size(), ZkStateMachine::kDigestLogLimit);
  EXPECT_EQ(sm.digest_log().front().zxid, 7 * 128);
  EXPECT_EQ(sm.digest_log().back().zxid, 1030 * 128);
}

// Two servers, one restored from the other's snapshot midway (a follower that installed a
// snapshot, or restarted): the same pairs for every zxid both applied.
TEST(ZkStateMachineDigest, ARestoredReplicaRecordsTheSamePairsAsOneThatAppliedEverything) {
  ZkStateMachine straight, other, restored;
  const int64_t cut = 300;
  for (int64_t z = 1; z <= 1000; ++z) {
    Txn t = workload_txn(z);
    straight.apply(z, t, true);
    if (z <= cut) other.apply(z, t, false);
    if (z == cut) ASSERT_TRUE(restored.restore(cut, other.serialize()));
    if (z > cut) restored.apply(z, t, false);
  }
  ASSERT_EQ(straight.digest_log().size(), 7u);
  // The restored one has the pairs after its snapshot, identical to the straight one's.
  std::vector<ZxidDigest> tail(straight.digest_log().begin() + 2, straight.digest_log().end());
  EXPECT_EQ(std::vector<ZxidDigest>(restored.digest_log().begin(), restored.digest_log().end()), tail);
  EXPECT_EQ(restored.tree().tree_digest(), straight.tree().tree_digest());
}

TEST(ZkStateMachineDigest, DigestDisabledRecordsZeroAtTheSameCadence) {
  StateMachineOptions o;
  o.digest_enabled = false;  // zookeeper.digest.enabled=false: ZooKeeper's tree hash stays 0
  ZkStateMachine sm(o);
  for (int64_t z = 1; z <= 260; ++z) sm.apply(z, workload_txn(z));
  ASSERT_EQ(sm.digest_log().size(), 2u);
  EXPECT_EQ(sm.digest_log()[0], (ZxidDigest{128, 0}));
  EXPECT_EQ(sm.digest_log()[1], (ZxidDigest{256, 0}));
}

TEST(ZkStateMachineDigest, RestoreToAnEarlierZxidForgetsLaterPairs) {
  ZkStateMachine a;
  for (int64_t z = 1; z <= 200; ++z) a.apply(z, workload_txn(z));
  const std::string snap = a.serialize();
  for (int64_t z = 201; z <= 300; ++z) a.apply(z, workload_txn(z));
  ASSERT_EQ(a.digest_log().size(), 2u);
  ASSERT_TRUE(a.restore(200, snap));
  ASSERT_EQ(a.digest_log().size(), 1u);
  EXPECT_EQ(a.digest_log()[0].zxid, 128);
}

// ---- reconfig: ZooKeeper's checks in PrepRequestProcessor's order. ----

class ReconfigOrder : public ::testing::Test {
 protected:
  static constexpr int64_t kSession = 5;
  static std::string spec(int64_t id, int32_t base, bool client = true,
                          const std::string& host = "192.0.2.1") {
    std::string s = "server." + std::to_string(id) + "=" + host + ":" + std::to_string(base) + ":" +
                    std::to_string(base + 1);
    if (client) s += ";" + host + ":" + std::to_string(base + 2);
    return s;
  }
  static std::vector<PeerConfig> three() {
    std::vector<PeerConfig> out;
    for (int64_t id : {1, 2, 3}) {
      PeerConfig p;
      EXPECT_TRUE(parse_server_spec(spec(id, 2000 + 10 * static_cast<int32_t>(id)), p, nullptr));
      out.push_back(p);
    }
    return out;
  }
  ZkStateMachine make(bool enabled = true, bool ensemble = true) {
    StateMachineOptions o;
    o.reconfig_enabled = enabled;
    ZkStateMachine sm(o);
    if (ensemble) sm.mutable_tree().set_config_data(membership_text(three(), 0));
    EXPECT_TRUE(sm.apply(++zxid, session_txn(kSession)).session_created);
    return sm;
  }
  int32_t reconfig(ZkStateMachine& sm, const std::string& joining, const std::string& leaving,
                   const std::string& members, int64_t from = -1, bool super = false,
                   int64_t session = kSession) {
    jute::ReconfigRequest r{joining, leaving, members, from};
    Txn t = request(session, op::kReconfig, bytes_of(r));
    if (super) t.auth = {{"super", ""}};
    return sm.apply(++zxid, t).err;
  }
  std::string config(const ZkStateMachine& sm) {
    jute::Buffer d;
    jute::Stat st;
    EXPECT_EQ(sm.tree().get_data("/zookeeper/config", {}, d, st), err::kOk);
    return d.bytes;
  }
  int64_t zxid = 0;
};

TEST_F(ReconfigOrder, DisabledComesBeforeTheSessionAndTheSessionBeforeStandalone) {
  auto off = make(false);
  EXPECT_EQ(reconfig(off, spec(4, 2040), "", "", -1, false, 999), err::kReconfigDisabled);
  auto on = make(true, false);  // standalone: no membership in /zookeeper/config
  EXPECT_EQ(reconfig(on, spec(4, 2040), "", "", -1, false, 999), err::kSessionExpired);
  EXPECT_EQ(reconfig(on, spec(4, 2040), "", "", 12345), err::kUnimplemented);  // not NoAuth, not BadVersion
}

TEST_F(ReconfigOrder, WithoutWritePermissionABadVersionIsBadVersion) {
  auto sm = make();
  EXPECT_EQ(reconfig(sm, spec(4, 2040), "", "", 12345), err::kBadVersion);
  EXPECT_EQ(reconfig(sm, spec(4, 2040), "", "", -5), err::kBadVersion);  // only -1 means "any"
  EXPECT_EQ(reconfig(sm, "", "3", "", 1), err::kBadVersion);
}

TEST_F(ReconfigOrder, WithoutWritePermissionBadMembersAreBadArguments) {
  auto sm = make();
  EXPECT_EQ(reconfig(sm, "garbage", "", ""), err::kBadArguments);                 // no '='
  EXPECT_EQ(reconfig(sm, "server.4=127.0.0.1:2040", "", ""), err::kBadArguments);  // one port
  EXPECT_EQ(reconfig(sm, spec(4, 2040, false), "", ""), err::kBadArguments);      // no client port
  EXPECT_EQ(reconfig(sm, spec(4, 2010), "", ""), err::kBadArguments);  // server 1's addresses
  EXPECT_EQ(reconfig(sm, "server.4=192.0.2.2:2010:2011;192.0.2.1:2012", "", ""), err::kBadArguments);
  EXPECT_EQ(reconfig(sm, "", "", "nonsense"), err::kBadArguments);
  // Long.parseLong's exception is a MarshallingError in ZooKeeper.
  EXPECT_EQ(reconfig(sm, "", "two", ""), err::kMarshallingError);
  EXPECT_EQ(reconfig(sm, "server.x=127.0.0.1:1:2;3", "", ""), err::kMarshallingError);
  // standaloneEnabled's rule: the new config keeps at least 2 voters.
  EXPECT_EQ(reconfig(sm, "", "2,3", ""), err::kBadArguments);
  EXPECT_EQ(reconfig(sm, "", "", spec(1, 2010)), err::kBadArguments);
  // A bad version is found before bad members.
  EXPECT_EQ(reconfig(sm, "garbage", "", "", 77), err::kBadVersion);
  // Only a well-formed change reaches the permission check. Loopback and wildcard addresses are
  // not compared (checkAddressDuplicate leaves them out).
  ZkStateMachine local;
  {
    std::vector<PeerConfig> loopback;
    for (int64_t id : {1, 2}) {
      PeerConfig p;
      ASSERT_TRUE(parse_server_spec(spec(id, 3000 + 10 * static_cast<int32_t>(id), true, "127.0.0.1"), p, nullptr));
      loopback.push_back(p);
    }
    StateMachineOptions o;
    o.reconfig_enabled = true;
    local = ZkStateMachine(o);
    local.mutable_tree().set_config_data(membership_text(loopback, 0));
    ASSERT_TRUE(local.apply(++zxid, session_txn(kSession)).session_created);
  }
  EXPECT_EQ(reconfig(local, spec(4, 3010, true, "127.0.0.1"), "", ""), err::kNoAuth);
  EXPECT_EQ(reconfig(local, "server.4=0.0.0.0:3010:3011;0.0.0.0:3012", "", ""), err::kNoAuth);
  EXPECT_EQ(reconfig(sm, spec(4, 2040), "", ""), err::kNoAuth);
  EXPECT_EQ(reconfig(sm, "", "3", "", 0), err::kNoAuth);
  EXPECT_EQ(config(sm), membership_text(three(), 0));  // nothing changed
}

TEST_F(ReconfigOrder, WithPermissionTheChangeIsMadeLeavingServersFirst) {
  auto sm = make();
  ASSERT_EQ(reconfig(sm, spec(4, 2040), "", "", 0, true), err::kOk);
  const int64_t made = zxid;
  std::vector<PeerConfig> members;
  int64_t version = 0;
  ASSERT_TRUE(parse_membership_text(config(sm), members, &version));
  EXPECT_EQ(version, made);
  EXPECT_EQ(members.size(), 4u);
  EXPECT_EQ(reconfig(sm, "", "4", "", 0, true), err::kBadVersion);  // the old version is gone
  // Leaving goes before joining: a server both leaving and joining stays, with its new spec.
  ASSERT_EQ(reconfig(sm, spec(3, 2050), "3", "", made, true), err::kOk);
  ASSERT_TRUE(parse_membership_text(config(sm), members, &version));
  ASSERT_EQ(members.size(), 4u);
  EXPECT_EQ(members[2].id, 3);
  EXPECT_EQ(members[2].peer_port, 2050);
}

TEST(Txn, SyncedServersRoundTripAndOlderEntriesDecodeWithout) {
  Txn t = request(1, op::kReconfig, "body");
  const std::string before = encode_txn(t);  // the layout entries had before the field
  t.synced = {3, 1};
  const std::string with = encode_txn(t);
  EXPECT_EQ(with.substr(0, before.size()), before);  // appended at the end
  auto back = decode_txn(with);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->synced, (std::vector<uint64_t>{3, 1}));
  auto old = decode_txn(before);
  ASSERT_TRUE(old.has_value());
  EXPECT_TRUE(old->synced.empty());
  for (size_t cut = before.size() + 1; cut < with.size(); ++cut) {
    EXPECT_FALSE(decode_txn(std::string_view(with).substr(0, cut)).has_value()) << cut;
  }
  EXPECT_EQ(peek_request_op(with), op::kReconfig);
  EXPECT_EQ(peek_request_op(encode_txn(session_txn(4))), std::nullopt);
  EXPECT_EQ(peek_request_op("short"), std::nullopt);
}

// Leader.isQuorumSynced: a majority of the new config's voters must be in sync with the leader,
// checked after the voter count and before the permission.
TEST_F(ReconfigOrder, ANewConfigWithoutASyncedMajorityIsNewConfigNoQuorumBeforeNoAuth) {
  auto sm = make();
  auto stamped = [&](const std::string& joining, const std::string& leaving, const std::string& members,
                     std::vector<uint64_t> synced, bool super = false) {
    jute::ReconfigRequest r{joining, leaving, members, -1};
    Txn t = request(kSession, op::kReconfig, bytes_of(r));
    t.synced = std::move(synced);
    if (super) t.auth = {{"super", ""}};
    return sm.apply(++zxid, t).err;
  };
  const std::string far = spec(1, 2010) + "," + spec(8, 2080) + "," + spec(9, 2090);
  EXPECT_EQ(stamped("", "", far, {1, 2, 3}), err::kNewConfigNoQuorum);  // 1 of 3 in sync
  EXPECT_EQ(stamped("", "", far, {1, 2, 3}, true), err::kNewConfigNoQuorum);
  EXPECT_EQ(stamped("", "", far, {1, 8}), err::kNoAuth);  // 2 of 3
  // Adding two servers nobody has heard of to three in sync: 3 of 5 is a majority.
  EXPECT_EQ(stamped(spec(4, 2040) + "," + spec(5, 2050), "", "", {1, 2, 3}), err::kNoAuth);
  EXPECT_EQ(stamped(spec(4, 2040), "", "", {1, 2}), err::kNewConfigNoQuorum);  // 2 of 4
  // Observers do not vote: only voters count on either side.
  EXPECT_EQ(stamped("server.4=192.0.2.1:2040:2041:observer;192.0.2.1:2042", "", "", {1, 2}), err::kNoAuth);
  // Earlier checks first.
  EXPECT_EQ(stamped("", "2,3", "", {1}), err::kBadArguments);  // one voter left
  EXPECT_EQ(stamped("garbage", "", "", {1}), err::kBadArguments);
  // Not stamped (an entry from before the field): not checked.
  EXPECT_EQ(reconfig(sm, "", "", far), err::kNoAuth);
  ASSERT_EQ(stamped("", "3", "", {1, 2, 3}, true), err::kOk);
  EXPECT_EQ(config(sm).find("server.3="), std::string::npos);
}

}  // namespace
}  // namespace zkraft::server
