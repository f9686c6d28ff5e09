// collect_status: one plain ServerStatus from the parts of a server, a pure function of what it
// is given. Connection figures, watches mapped from connections to sessions, expiry buckets moved
// from the monotonic to the wall clock, uptime on the monotonic clock, leader-only metrics.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "client_frames.h"
#include "jute/opcodes.h"
#include "server/status_collector.h"

namespace zkraft::server {
namespace {

using namespace testing;
namespace op = jute::op;

constexpr int64_t kS1 = 0x0100000000000001;
constexpr int64_t kS2 = 0x0100000000000002;
constexpr int64_t kMono = 5'000'000;
constexpr int64_t kWall = 1'700'000'000'000;

class StatusCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sm.apply(1, create_session_txn(kS1, 6000));
    sm.apply(2, create_session_txn(kS2, 6000));
    sm.apply(3, create_txn(kS1, "/e1", "xy", jute::create_mode::kEphemeral));
    sm.apply(4, create_txn(kS2, "/p"));

    Client& a = clients.add(10, "127.0.0.1", 40001);
    clients.bind_session(a, kS1);
    a.timeout_ms = 6000;
    a.packets_received = 7;
    a.packets_sent = 6;
    a.stats.last_op = op::kGetData;
    a.stats.last_cxid = 12;
    a.stats.last_zxid = 4;
    a.stats.established_ms = kWall - 60'000;
    a.stats.latency.record(2);
    a.stats.latency.record(4);
    QueuedRequest q;
    q.state = QueuedRequest::InFlight{1, false, {}};
    a.queue.push(q);

    Client& b = clients.add(11, "192.0.2.7", 50000);
    clients.bind_session(b, kS2);
    b.stats.last_op = op::kCreateSession;

    clients.add(12, "127.0.0.1", 40002);  // connected, no handshake yet

    watches.add_data_watch("/p", 10);
    watches.add_data_watch("/e1", 10);
    watches.add_data_watch("/p", 11);
    watches.add_child_watch("/e1", 11);  // child table: not in the dumps (ZooKeeper's neither)
    watches.add_data_watch("/p", 99);  // a watcher whose connection is gone

    expiry.touch(kS1, 6000, kMono);        // due at round_up(kMono + 6000) = kMono + 8000
    expiry.touch(kS2, 6000, kMono + 2500);  // kMono + 10000

    stats.packets_received = 30;
    stats.packets_sent = 29;
    stats.latency.record(10);
    stats.auth_failed = 2;
  }

  StatusSources sources() const {
    StatusSources s;
    s.clients = &clients;
    s.watches = &watches;
    s.state = &sm;
    s.expiry = &expiry;
    s.stats = &stats;
    s.serving = true;
    s.fsyncs = 17;
    s.outstanding = 1;
    s.pending_syncs = 3;
    s.monotonic_ms = kMono;
    s.wall_ms = kWall;
    s.started_monotonic_ms = kMono - 90'000;
    s.file_descriptors = {20, 1024};
    return s;
  }
  static const ConnectionStatus& by_remote(const ServerStatus& st, const std::string& remote) {
    auto it = std::find_if(st.connections.begin(), st.connections.end(),
                           [&](const ConnectionStatus& c) { return c.remote == remote; });
    EXPECT_NE(it, st.connections.end()) << remote;
    static const ConnectionStatus none;
    return it == st.connections.end() ? none : *it;
  }
  static std::map<std::string, std::string> metrics(const ServerStatus& st) {
    return {st.extra_metrics.begin(), st.extra_metrics.end()};
  }

  ZkStateMachine sm;
  ClientTable clients;
  session::WatchRegistry watches;
  session::SessionExpiryTracker expiry{2000};
  ServerStats stats;
};

TEST_F(StatusCollectorTest, ConnectionFiguresComeFromTheClientTable) {
  ServerStatus st = collect_status(sources());
  EXPECT_EQ(st.num_alive_connections, 3);
  ASSERT_EQ(st.connections.size(), 3u);
  const auto& a = by_remote(st, "/127.0.0.1:40001");
  EXPECT_EQ(a.session_id, kS1);
  EXPECT_EQ(a.queued, 1);
  EXPECT_EQ(a.received, 7);
  EXPECT_EQ(a.sent, 6);
  EXPECT_EQ(a.last_op, "GETD");
  EXPECT_EQ(a.last_cxid, 12);
  EXPECT_EQ(a.last_zxid, 4);
  EXPECT_EQ(a.timeout_ms, 6000);
  EXPECT_EQ(a.established_ms, kWall - 60'000);
  EXPECT_EQ(a.min_latency_ms, 2);
  EXPECT_EQ(a.avg_latency_ms, 3);
  EXPECT_EQ(a.max_latency_ms, 4);
  EXPECT_EQ(by_remote(st, "/192.0.2.7:50000").last_op, "SESS");
  const auto& c = by_remote(st, "/127.0.0.1:40002");
  EXPECT_EQ(c.session_id, 0);
  EXPECT_EQ(c.last_op, "NA");
}

TEST_F(StatusCollectorTest, ServerCountersAndTreeFigures) {
  ServerStatus st = collect_status(sources());
  EXPECT_TRUE(st.serving);
  EXPECT_EQ(st.packets_received, 30);
  EXPECT_EQ(st.packets_sent, 29);
  EXPECT_EQ(st.min_latency_ms, 10);
  EXPECT_EQ(st.max_latency_ms, 10);
  EXPECT_EQ(st.outstanding_requests, 1);
  EXPECT_EQ(st.last_zxid, 4);
  EXPECT_EQ(st.node_count, static_cast<int64_t>(sm.tree().node_count()));
  EXPECT_EQ(st.ephemerals_count, 1);
  ASSERT_EQ(st.ephemerals_by_session.size(), 1u);
  EXPECT_EQ(st.ephemerals_by_session[0].first, kS1);
  EXPECT_EQ(st.ephemerals_by_session[0].second, std::vector<std::string>{"/e1"});
  EXPECT_EQ(st.global_sessions, 2);
  EXPECT_EQ(st.auth_failed_count, 2);
  EXPECT_EQ(st.open_file_descriptor_count, 20);
  EXPECT_EQ(st.max_file_descriptor_count, 1024);
}

TEST_F(StatusCollectorTest, WatchesAreReportedBySessionNotByConnection) {
  ServerStatus st = collect_status(sources());
  std::map<int64_t, std::vector<std::string>> by_session(st.watches_by_session.begin(),
                                                         st.watches_by_session.end());
  ASSERT_TRUE(by_session.count(kS1));
  auto s1 = by_session[kS1];
  std::sort(s1.begin(), s1.end());
  EXPECT_EQ(s1, (std::vector<std::string>{"/e1", "/p"}));
  EXPECT_EQ(by_session[kS2], std::vector<std::string>{"/p"});
  EXPECT_TRUE(by_session.count(0));  // the connection that is gone has no session
  EXPECT_FALSE(by_session.count(10));
  EXPECT_FALSE(by_session.count(11));

  std::map<std::string, std::vector<int64_t>> by_path(st.watches_by_path.begin(), st.watches_by_path.end());
  auto p = by_path["/p"];
  std::sort(p.begin(), p.end());
  EXPECT_EQ(p, (std::vector<int64_t>{0, kS1, kS2}));
  EXPECT_EQ(by_path["/e1"], std::vector<int64_t>{kS1});  // kS2's child watch is not listed

  auto summary = watches.summary();
  EXPECT_EQ(st.watch_connections, static_cast<int64_t>(summary.connections));
  EXPECT_EQ(st.watch_paths, static_cast<int64_t>(summary.paths));
  EXPECT_EQ(st.watch_total, static_cast<int64_t>(summary.total));
  EXPECT_EQ(st.watch_count, static_cast<int64_t>(watches.watch_count()));
}

TEST_F(StatusCollectorTest, ExpiryBucketsAreShownAsWallClockDates) {
  ServerStatus st = collect_status(sources());
  EXPECT_EQ(st.tracked_sessions, 2);
  ASSERT_EQ(st.session_buckets.size(), 2u);
  EXPECT_EQ(st.session_buckets[0].expire_at_ms, kWall + 8000);
  EXPECT_EQ(st.session_buckets[0].session_ids, std::vector<int64_t>{kS1});
  EXPECT_EQ(st.session_buckets[1].expire_at_ms, kWall + 10000);
  EXPECT_EQ(st.session_buckets[1].session_ids, std::vector<int64_t>{kS2});
  // A wall-clock step moves the dates shown, not the deadlines.
  StatusSources stepped = sources();
  stepped.wall_ms += 3'600'000;
  EXPECT_EQ(collect_status(stepped).session_buckets[0].expire_at_ms, kWall + 3'600'000 + 8000);
}

TEST_F(StatusCollectorTest, UptimeIsMeasuredOnTheMonotonicClock) {
  StatusSources s = sources();
  EXPECT_EQ(collect_status(s).uptime_ms, 90'000);
  s.wall_ms -= 86'400'000;  // a clock stepped back a day changes nothing
  EXPECT_EQ(collect_status(s).uptime_ms, 90'000);
}

TEST_F(StatusCollectorTest, LeaderOnlyMetricsAppearOnlyInLeaderMode) {
  StatusSources s = sources();
  s.replication.mode = "follower";
  s.replication.learners = 2;
  s.replication.quorum_size = 2;
  auto follower = metrics(collect_status(s));
  EXPECT_EQ(follower["fsync_count"], "17");
  for (const char* key : {"learners", "followers", "synced_followers", "synced_non_voting_followers",
                          "synced_observers", "pending_syncs", "quorum_size"}) {
    EXPECT_EQ(follower.count(key), 0u) << key;
  }
  EXPECT_EQ(collect_status(s).mode, "follower");

  s.replication.mode = "leader";
  s.replication.synced_followers = 1;
  s.replication.synced_observers = 1;
  auto leader = metrics(collect_status(s));
  EXPECT_EQ(leader["fsync_count"], "17");
  EXPECT_EQ(leader["learners"], "2");
  EXPECT_EQ(leader["followers"], "2");
  EXPECT_EQ(leader["synced_followers"], "1");
  EXPECT_EQ(leader["synced_non_voting_followers"], "1");
  EXPECT_EQ(leader["synced_observers"], "1");
  EXPECT_EQ(leader["pending_syncs"], "3");
  EXPECT_EQ(leader["quorum_size"], "2");
}

TEST_F(StatusCollectorTest, AServerWithoutALeaderIsNotServing) {
  StatusSources s = sources();
  s.serving = false;
  EXPECT_FALSE(collect_status(s).serving);
}

TEST_F(StatusCollectorTest, TheSameSourcesGiveTheSameStatus) {
  ServerStatus a = collect_status(sources());
  ServerStatus b = collect_status(sources());
  EXPECT_EQ(a.connections.size(), b.connections.size());
  EXPECT_EQ(a.watches_by_path, b.watches_by_path);
  EXPECT_EQ(a.extra_metrics, b.extra_metrics);
}

TEST_F(StatusCollectorTest, HashShowsTheStateMachinesDigestHistory) {
  EXPECT_TRUE(collect_status(sources()).digests.empty());  // zxid 4: none yet
  for (int64_t z = 5; z <= 256; ++z) sm.skip(z);
  const ServerStatus st = collect_status(sources());
  ASSERT_EQ(st.digests.size(), 2u);
  EXPECT_EQ(st.digests[0].first, 128);
  EXPECT_EQ(st.digests[1].first, 256);
  EXPECT_EQ(st.digests[1].second, static_cast<int64_t>(sm.tree().tree_digest()));
}

TEST_F(StatusCollectorTest, TheDashboardGetsPeersFsyncTimeAndTheLatencySum) {
  StatusSources s = sources();
  s.replication.mode = "leader";
  s.replication.peers = {PeerProgress{2, 40, false, true}, PeerProgress{3, 12, true, false}};
  s.replication.fsync_micros_total = 5100;
  s.replication.fsync_micros_max = 900;
  stats.latency.record(4);  // with the 10 of SetUp
  ServerStatus st = collect_status(s);
  ASSERT_EQ(st.peers.size(), 2u);
  EXPECT_EQ(st.peers[0].id, 2u);
  EXPECT_EQ(st.peers[0].match, 40u);
  EXPECT_FALSE(st.peers[0].learner);
  EXPECT_TRUE(st.peers[0].recent_active);
  EXPECT_EQ(st.peers[1].id, 3u);
  EXPECT_EQ(st.peers[1].match, 12u);
  EXPECT_TRUE(st.peers[1].learner);
  EXPECT_FALSE(st.peers[1].recent_active);
  EXPECT_EQ(st.fsync_count, 17u);
  EXPECT_EQ(st.fsync_micros_total, 5100u);
  EXPECT_EQ(st.fsync_micros_max, 900u);
  EXPECT_EQ(st.latency_sum_ms, 14);
  EXPECT_EQ(st.latency_count, 2);
}

TEST_F(StatusCollectorTest, WithoutListsTheCountsStayAndTheListsAreLeftOut) {
  const ServerStatus full = collect_status(sources());
  StatusSources s = sources();
  s.lists = false;
  const ServerStatus counts = collect_status(s);
  EXPECT_FALSE(full.connections.empty());
  EXPECT_FALSE(full.watches_by_path.empty());
  EXPECT_FALSE(full.ephemerals_by_session.empty());
  EXPECT_FALSE(full.session_buckets.empty());
  EXPECT_TRUE(counts.connections.empty());
  EXPECT_TRUE(counts.watches_by_session.empty());
  EXPECT_TRUE(counts.watches_by_path.empty());
  EXPECT_TRUE(counts.ephemerals_by_session.empty());
  EXPECT_TRUE(counts.session_buckets.empty());
  EXPECT_EQ(counts.num_alive_connections, full.num_alive_connections);
  EXPECT_EQ(counts.watch_count, full.watch_count);
  EXPECT_EQ(counts.watch_total, full.watch_total);
  EXPECT_EQ(counts.node_count, full.node_count);
  EXPECT_EQ(counts.ephemerals_count, full.ephemerals_count);
  EXPECT_EQ(counts.global_sessions, full.global_sessions);
  EXPECT_EQ(counts.packets_received, full.packets_received);
  EXPECT_EQ(counts.latency_count, full.latency_count);
}

}  // namespace
}  // namespace zkraft::server
