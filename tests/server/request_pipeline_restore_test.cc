// The admin restore through the pipeline: proposed as one kRestore entry on the leader only; when
// it applies, the tree and the sessions are the restored ones, every client connection closes,
// and the waiting admin request gets the zxid; a leader change fails it (outcome unknown).

#include "pipeline_fixture.h"

namespace zkraft::server::testing {
namespace {

struct Outcome {
  bool called = false;
  int64_t zxid = 0;
  std::string error;
};

RequestPipeline::RestoreDone record(Outcome& o) {
  return [&o](int64_t zxid, std::string error) {
    o.called = true;
    o.zxid = zxid;
    o.error = std::move(error);
  };
}

TEST_F(PipelineTest, ARestoreReplacesTheStateOnApplyAndClosesEveryConnection) {
  start();
  // The state to restore: a tree with /kept, taken from another state machine.
  ZkStateMachine source;
  Txn t;
  t.kind = TxnKind::kCreateSession;
  t.session_id = 77;
  t.timeout_ms = 30000;
  t.password = std::string(16, 'p');
  source.apply(1, t);
  Txn c;
  c.kind = TxnKind::kRequest;
  c.session_id = 77;
  c.op = op::kCreate;
  jute::Writer w;
  jute::encode(w, create_request("/kept", "v"));
  c.request = w.take();
  ASSERT_EQ(source.apply(2, c).err, err::kOk);
  const std::string state = source.serialize();

  const int64_t session = handshake(1);
  create(1, 1, "/gone");
  ASSERT_TRUE(pipeline->state().tree().contains("/gone"));
  const size_t before = log.proposed().size();

  Outcome o;
  pipeline->admin_restore(state, record(o));
  ASSERT_EQ(log.proposed().size(), before + 1);
  EXPECT_EQ(proposed(before).kind, TxnKind::kRestore);
  EXPECT_FALSE(o.called);  // not before it applies
  EXPECT_TRUE(pipeline->state().tree().contains("/gone"));

  log.commit_all();
  ASSERT_TRUE(o.called);
  EXPECT_EQ(o.error, "");
  EXPECT_EQ(o.zxid, pipeline->state().last_zxid());
  EXPECT_TRUE(pipeline->state().tree().contains("/kept"));
  EXPECT_FALSE(pipeline->state().tree().contains("/gone"));
  EXPECT_TRUE(pipeline->state().sessions().contains(77));
  EXPECT_FALSE(pipeline->state().sessions().contains(session));
  EXPECT_TRUE(io.closed(1));  // its session and watches belonged to the state that is gone
  EXPECT_EQ(pipeline->clients().size(), 0u);
}

TEST_F(PipelineTest, ARestoreIsRefusedOffTheLeaderAndFailedByALeaderChange) {
  start(/*leader=*/2);
  Outcome off;
  pipeline->admin_restore(ZkStateMachine{}.serialize(), record(off));
  ASSERT_TRUE(off.called);
  EXPECT_NE(off.error.find("leader (server 2)"), std::string::npos) << off.error;
  EXPECT_TRUE(log.proposed().empty());

  log.set_leader(1);
  Outcome o;
  pipeline->admin_restore(ZkStateMachine{}.serialize(), record(o));
  EXPECT_FALSE(o.called);
  log.set_leader(0);
  ASSERT_TRUE(o.called);
  EXPECT_NE(o.error.find("leader changed"), std::string::npos) << o.error;
}

}  // namespace
}  // namespace zkraft::server::testing
