// ReadExecutor: reads served from the local tree, watch registration at that moment (only when
// the read succeeded; exists also on NoNode), ACLs, SetWatches catch-up events sent before the
// reply, and the replies of ops it does not serve.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "client_frames.h"
#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/opcodes.h"
#include "jute/reply.h"
#include "recording_client_io.h"
#include "server/read_executor.h"
#include "server/zk_state_machine.h"
#include "session/watch_registry.h"

namespace zkraft::server {
namespace {

using namespace testing;
namespace op = jute::op;
namespace err = jute::err;
using Mode = session::WatchRegistry::Mode;

constexpr uint64_t kWatcher = 7;
constexpr int64_t kSession = 0x0100000000000001;

// Records events in one timeline with the replies the test writes after them.
struct TimelineSink final : EventSink {
  std::vector<std::string> timeline;
  void send_event(uint64_t watcher, int32_t type, const std::string& path, int64_t zxid) override {
    timeline.push_back("event " + std::to_string(watcher) + " " + std::to_string(type) + " " + path +
                       " @" + std::to_string(zxid));
  }
};

class ReadExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override { apply(create_session_txn(kSession)); }

  int64_t apply(const Txn& t) {
    auto out = sm.apply(++zxid, t);
    EXPECT_EQ(out.err, err::kOk) << "apply at zxid " << zxid;
    return zxid;
  }
  ReadResult execute(int32_t o, const jute::RequestBody& body, int32_t xid = 1) {
    ReadResult r = reads.execute(ReadCaller{kWatcher, kSession, &auth}, xid, o, body);
    sink.timeline.push_back("reply " + std::to_string(xid));
    return r;
  }
  static jute::DecodedReply decode(const ReadResult& r, int32_t o) {
    return RecordingClientIo::reply(r.reply, o);
  }
  uint8_t modes(const std::string& path) const { return watches.modes(path, kWatcher); }

  ZkStateMachine sm;
  session::WatchRegistry watches;
  TimelineSink sink;
  ReadExecutor reads{sm, watches, sink};
  std::vector<jute::Id> auth{{"ip", "127.0.0.1"}};
  int64_t zxid = 0;
};

TEST_F(ReadExecutorTest, GetDataRepliesWithDataAndStatAtTheLastZxid) {
  int64_t created = apply(create_txn(kSession, "/a", "hello"));
  ReadResult r = execute(op::kGetData, jute::GetDataRequest{"/a", false}, 5);
  EXPECT_FALSE(r.close_after);
  auto d = decode(r, op::kGetData);
  EXPECT_EQ(d.header, (jute::ReplyHeader{5, zxid, err::kOk}));
  const auto& body = std::get<jute::GetDataResponse>(d.body);
  EXPECT_EQ(body.data.bytes, "hello");
  EXPECT_EQ(body.stat.czxid, created);
  EXPECT_EQ(body.stat.data_length, 5);
  EXPECT_EQ(modes("/a"), 0);  // no watch asked
}

TEST_F(ReadExecutorTest, GetDataSetsADataWatchOnlyWhenItSucceeds) {
  apply(create_txn(kSession, "/a"));
  auto missing = decode(execute(op::kGetData, jute::GetDataRequest{"/missing", true}), op::kGetData);
  EXPECT_EQ(missing.header.err, err::kNoNode);
  EXPECT_EQ(modes("/missing"), 0);
  auto ok = decode(execute(op::kGetData, jute::GetDataRequest{"/a", true}), op::kGetData);
  EXPECT_EQ(ok.header.err, err::kOk);
  EXPECT_EQ(modes("/a"), Mode::kDataStandard);
}

TEST_F(ReadExecutorTest, ExistsSetsAWatchOnAMissingNodeToo) {
  auto missing = decode(execute(op::kExists, jute::ExistsRequest{"/later", true}), op::kExists);
  EXPECT_EQ(missing.header.err, err::kNoNode);
  EXPECT_EQ(modes("/later"), Mode::kDataStandard);
  apply(create_txn(kSession, "/here"));
  auto found = decode(execute(op::kExists, jute::ExistsRequest{"/here", true}), op::kExists);
  EXPECT_EQ(found.header.err, err::kOk);
  EXPECT_EQ(std::get<jute::ExistsResponse>(found.body).stat.czxid, zxid);
  EXPECT_EQ(modes("/here"), Mode::kDataStandard);
  execute(op::kExists, jute::ExistsRequest{"/unwatched", false});
  EXPECT_EQ(modes("/unwatched"), 0);
}

TEST_F(ReadExecutorTest, GetChildren2ListsChildrenWithTheParentStatAndSetsAChildWatch) {
  apply(create_txn(kSession, "/p"));
  apply(create_txn(kSession, "/p/b"));
  int64_t last = apply(create_txn(kSession, "/p/a"));
  auto d = decode(execute(op::kGetChildren2, jute::GetChildren2Request{"/p", true}), op::kGetChildren2);
  ASSERT_EQ(d.header.err, err::kOk);
  const auto& body = std::get<jute::GetChildren2Response>(d.body);
  std::vector<std::string> children = body.children;
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(body.stat.num_children, 2);
  EXPECT_EQ(body.stat.pzxid, last);
  EXPECT_EQ(modes("/p"), Mode::kChildStandard);

  auto missing = decode(execute(op::kGetChildren2, jute::GetChildren2Request{"/q", true}), op::kGetChildren2);
  EXPECT_EQ(missing.header.err, err::kNoNode);
  EXPECT_EQ(modes("/q"), 0);
}

TEST_F(ReadExecutorTest, AReadTheAclForbidsIsNoAuthAndSetsNoWatch) {
  std::vector<jute::ACL> only_other_host{{jute::perms::kAll, {"ip", "192.0.2.1"}}};
  apply(create_txn(kSession, "/secret", "x", 0, only_other_host));
  auto data = decode(execute(op::kGetData, jute::GetDataRequest{"/secret", true}), op::kGetData);
  EXPECT_EQ(data.header.err, err::kNoAuth);
  EXPECT_TRUE(std::holds_alternative<jute::EmptyResponse>(data.body));
  auto children = decode(execute(op::kGetChildren2, jute::GetChildren2Request{"/secret", true}),
                         op::kGetChildren2);
  EXPECT_EQ(children.header.err, err::kNoAuth);
  EXPECT_EQ(modes("/secret"), 0);
  // The identity the ACL names may read.
  auth = {{"ip", "192.0.2.1"}};
  EXPECT_EQ(decode(execute(op::kGetData, jute::GetDataRequest{"/secret", true}), op::kGetData).header.err,
            err::kOk);
  EXPECT_EQ(modes("/secret"), Mode::kDataStandard);
}

TEST_F(ReadExecutorTest, SetWatchesFiresMissedChangesBeforeItsReplyAndRegistersTheRest) {
  apply(create_txn(kSession, "/changed"));
  apply(create_txn(kSession, "/deleted"));
  apply(create_txn(kSession, "/same"));
  apply(create_txn(kSession, "/kids"));
  const int64_t seen = zxid;  // the client's last zxid when it went away
  apply(set_data_txn(kSession, "/changed", "v2"));
  apply(delete_txn(kSession, "/deleted"));
  apply(create_txn(kSession, "/born"));
  jute::SetWatches sw;
  sw.relative_zxid = seen;
  sw.data_watches = {"/changed", "/deleted", "/same"};
  sw.exist_watches = {"/born", "/absent"};
  sw.child_watches = {"/kids"};
  ReadResult r = execute(op::kSetWatches, sw, jute::xid::kSetWatches);
  const std::string at = " @" + std::to_string(zxid);
  std::vector<std::string> want{
      "event 7 " + std::to_string(jute::event::kNodeDataChanged) + " /changed" + at,
      "event 7 " + std::to_string(jute::event::kNodeDeleted) + " /deleted" + at,
      "event 7 " + std::to_string(jute::event::kNodeCreated) + " /born" + at,
      "reply " + std::to_string(jute::xid::kSetWatches),
  };
  EXPECT_EQ(sink.timeline, want);
  auto d = decode(r, op::kSetWatches);
  EXPECT_EQ(d.header, (jute::ReplyHeader{jute::xid::kSetWatches, zxid, err::kOk}));
  // What did not change is watched from now on; what fired is not.
  EXPECT_EQ(modes("/same"), Mode::kDataStandard);
  EXPECT_EQ(modes("/absent"), Mode::kDataStandard);
  EXPECT_EQ(modes("/kids"), Mode::kChildStandard);
  EXPECT_EQ(modes("/changed"), 0);
  EXPECT_EQ(modes("/born"), 0);
}

TEST_F(ReadExecutorTest, SetWatchesFiresChildChangesAndDeletedParents) {
  apply(create_txn(kSession, "/p"));
  apply(create_txn(kSession, "/gone"));
  const int64_t seen = zxid;
  apply(create_txn(kSession, "/p/new"));
  apply(delete_txn(kSession, "/gone"));
  jute::SetWatches sw;
  sw.relative_zxid = seen;
  sw.child_watches = {"/p", "/gone"};
  execute(op::kSetWatches, sw, jute::xid::kSetWatches);
  const std::string at = " @" + std::to_string(zxid);
  std::vector<std::string> want{
      "event 7 " + std::to_string(jute::event::kNodeChildrenChanged) + " /p" + at,
      "event 7 " + std::to_string(jute::event::kNodeDeleted) + " /gone" + at,
      "reply " + std::to_string(jute::xid::kSetWatches),
  };
  EXPECT_EQ(sink.timeline, want);
  EXPECT_EQ(modes("/p"), 0);
}

TEST_F(ReadExecutorTest, SetWatches2RestoresPersistentWatches) {
  apply(create_txn(kSession, "/a"));
  jute::SetWatches2 sw;
  sw.relative_zxid = zxid;
  sw.persistent_watches = {"/a"};
  sw.persistent_recursive_watches = {"/tree"};
  auto d = decode(execute(op::kSetWatches2, sw, jute::xid::kSetWatches), op::kSetWatches2);
  EXPECT_EQ(d.header.err, err::kOk);
  EXPECT_EQ(modes("/a"), Mode::kDataPersistent | Mode::kChildPersistent);
  EXPECT_EQ(modes("/tree"), Mode::kDataRecursive);
}

TEST_F(ReadExecutorTest, AddWatchWithAnUnknownModeIsBadArgumentsAndWatchesNothing) {
  auto bad = decode(execute(op::kAddWatch, jute::AddWatchRequest{"/w", 2}), op::kAddWatch);
  EXPECT_EQ(bad.header.err, err::kBadArguments);
  EXPECT_EQ(modes("/w"), 0);
  auto good = decode(execute(op::kAddWatch, jute::AddWatchRequest{"/w", jute::add_watch_mode::kPersistentRecursive}),
                     op::kAddWatch);
  EXPECT_EQ(good.header.err, err::kOk);
  EXPECT_EQ(modes("/w"), Mode::kDataRecursive);
}

TEST_F(ReadExecutorTest, CheckAndRemoveWatchesAnswerForThisWatcher) {
  apply(create_txn(kSession, "/a"));
  EXPECT_EQ(decode(execute(op::kCheckWatches, jute::CheckWatchesRequest{"/a", jute::watcher_type::kData}),
                   op::kCheckWatches)
                .header.err,
            err::kNoWatcher);
  execute(op::kGetData, jute::GetDataRequest{"/a", true});
  EXPECT_EQ(decode(execute(op::kCheckWatches, jute::CheckWatchesRequest{"/a", jute::watcher_type::kData}),
                   op::kCheckWatches)
                .header.err,
            err::kOk);
  EXPECT_EQ(decode(execute(op::kRemoveWatches, jute::RemoveWatchesRequest{"/a", jute::watcher_type::kAny}),
                   op::kRemoveWatches)
                .header.err,
            err::kOk);
  EXPECT_EQ(modes("/a"), 0);
}

// Without a SASL provider, ZooKeeper 3.9.4 (ZooKeeperServer.processSasl, no SaslServer on the
// connection) answers OK with a null token and keeps the connection; differential_raw.py compares
// it with a real ZooKeeper.
TEST_F(ReadExecutorTest, SaslWithoutAProviderIsOkWithANullTokenAndKeepsTheConnection) {
  ReadResult r = execute(op::kSasl, jute::GetSASLRequest{});
  EXPECT_FALSE(r.close_after);
  auto d = decode(r, op::kSasl);
  EXPECT_EQ(d.header, (jute::ReplyHeader{1, 0, err::kOk}));  // zxid 0, as ZooKeeper's
  EXPECT_TRUE(std::get<jute::SetSASLResponse>(d.body).token.is_null);
}

TEST_F(ReadExecutorTest, AnOpItDoesNotServeIsUnimplemented) {
  ReadResult r = execute(999, jute::EmptyRequest{}, 4);
  EXPECT_FALSE(r.close_after);
  EXPECT_EQ(decode(r, 999).header, (jute::ReplyHeader{4, zxid, err::kUnimplemented}));
}

TEST_F(ReadExecutorTest, PingIsAnsweredWithThePingXid) {
  auto d = decode(execute(op::kPing, jute::EmptyRequest{}, jute::xid::kPing), op::kPing);
  EXPECT_EQ(d.header, (jute::ReplyHeader{jute::xid::kPing, zxid, err::kOk}));
}

TEST_F(ReadExecutorTest, MultiReadAnswersEachReadWithItsOwnResult) {
  apply(create_txn(kSession, "/a", "A"));
  apply(create_txn(kSession, "/a/c"));
  jute::MultiRequest m;
  m.ops.push_back({op::kGetData, jute::GetDataRequest{"/a", false}});
  m.ops.push_back({op::kGetChildren, jute::GetChildrenRequest{"/missing", false}});
  m.ops.push_back({op::kGetChildren, jute::GetChildrenRequest{"/a", false}});
  auto d = decode(execute(op::kMultiRead, m, 3), op::kMultiRead);
  EXPECT_EQ(d.header.err, err::kOk);
  const auto& results = std::get<jute::MultiResponse>(d.body).results;
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].type, op::kGetData);
  EXPECT_EQ(std::get<jute::GetDataResponse>(results[0].body).data.bytes, "A");
  EXPECT_EQ(results[1], jute::MultiResult::error(err::kNoNode));
  EXPECT_EQ(results[2].type, op::kGetChildren);
  EXPECT_EQ(std::get<jute::GetChildrenResponse>(results[2].body).children, std::vector<std::string>{"c"});
}

TEST_F(ReadExecutorTest, MultiReadWithAWriteInsideIsAMarshallingError) {
  jute::MultiRequest m;
  m.ops.push_back({op::kCreate, create_request("/x", "")});
  auto d = decode(execute(op::kMultiRead, m), op::kMultiRead);
  EXPECT_EQ(d.header.err, err::kMarshallingError);
  EXPECT_FALSE(sm.tree().contains("/x"));
}

TEST_F(ReadExecutorTest, WhoAmIReportsTheDigestUserNameOnly) {
  auth.push_back({"digest", "alice:c2VjcmV0aGFzaA=="});
  auto d = decode(execute(op::kWhoAmI, jute::EmptyRequest{}), op::kWhoAmI);
  const auto& info = std::get<jute::WhoAmIResponse>(d.body).client_info;
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info[0], (jute::ClientInfo{"ip", "127.0.0.1"}));
  EXPECT_EQ(info[1], (jute::ClientInfo{"digest", "alice"}));
}

TEST_F(ReadExecutorTest, GetEphemeralsListsTheCallersOwn) {
  apply(create_txn(kSession, "/mine", "", jute::create_mode::kEphemeral));
  apply(create_session_txn(kSession + 1));
  apply(create_txn(kSession + 1, "/theirs", "", jute::create_mode::kEphemeral));
  auto d = decode(execute(op::kGetEphemerals, jute::GetEphemeralsRequest{"/"}), op::kGetEphemerals);
  EXPECT_EQ(std::get<jute::GetEphemeralsResponse>(d.body).ephemerals, std::vector<std::string>{"/mine"});
}

}  // namespace
}  // namespace zkraft::server
