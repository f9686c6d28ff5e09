// The Prometheus page without sockets (server/prometheus_metrics.h): the exposition text exactly,
// escaping, cumulative histogram buckets, quantiles over the window, the families a status gives,
// the HTTP answers of the metrics port, and the metricsProvider.* keys.

#include "server/prometheus_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "consensus/log_buckets.h"
#include "server/config.h"

namespace zkraft::server {
namespace {

using consensus::kLogBucketCount;
using consensus::log_bucket;
using consensus::log_bucket_lower;
using consensus::log_bucket_upper;

std::vector<uint64_t> counts_of(std::initializer_list<uint64_t> values) {
  std::vector<uint64_t> c(kLogBucketCount);
  for (uint64_t v : values) ++c[log_bucket(v)];
  return c;
}

TEST(LogBuckets, EveryValueIsInsideItsBucketAndPowersOfTwoStartOne) {
  for (uint64_t v : {0ull, 1ull, 15ull, 16ull, 17ull, 31ull, 32ull, 1000ull, 1023ull, 1024ull,
                     123456789ull, (1ull << 63) + 5, ~0ull}) {
    const size_t i = log_bucket(v);
    ASSERT_LT(i, kLogBucketCount) << v;
    EXPECT_LE(log_bucket_lower(i), v) << v;
    if (i + 1 < kLogBucketCount) EXPECT_LT(v, log_bucket_upper(i)) << v;
  }
  for (int e = 0; e < 64; ++e) {
    const uint64_t p = uint64_t{1} << e;
    EXPECT_EQ(log_bucket_lower(log_bucket(p)), p) << e;
  }
  for (size_t i = 16; i + 1 < kLogBucketCount; ++i) {  // width at most 1/8 of the lower bound
    EXPECT_LE((log_bucket_upper(i) - log_bucket_lower(i)) * 8, log_bucket_lower(i)) << i;
  }
}

TEST(Exposition, ExactTextWithEscapedLabelsAndHelp) {
  MetricFamily g = gauge_family("zkraft_x", "a \\ back\nslash", 12);
  MetricFamily c{"zkraft_y_total", "y", MetricType::kCounter, {}};
  c.samples.push_back(MetricSample{"", {{"member", "a\"b\\c\nd"}, {"k", "v"}}, 1e7});
  c.samples.push_back(MetricSample{"", {{"member", "2"}}, 0.5});
  MetricFamily s = summary_family("readlatency", "readlatency", {{0.5, std::nan("")}, {0.99, 3}},
                                  0, 0);
  EXPECT_EQ(render_exposition({g, c, s}),
            "# HELP zkraft_x a \\\\ back\\nslash\n"
            "# TYPE zkraft_x gauge\n"
            "zkraft_x 12.0\n"
            "# HELP zkraft_y_total y\n"
            "# TYPE zkraft_y_total counter\n"
            "zkraft_y_total{member=\"a\\\"b\\\\c\\nd\",k=\"v\",} 1.0E7\n"
            "zkraft_y_total{member=\"2\",} 0.5\n"
            "# HELP readlatency readlatency\n"
            "# TYPE readlatency summary\n"
            "readlatency{quantile=\"0.5\",} NaN\n"
            "readlatency{quantile=\"0.99\",} 3.0\n"
            "readlatency_count 0.0\n"
            "readlatency_sum 0.0\n");
}

TEST(Exposition, GoDoubleIsJavasWithGoInfinities) {
  EXPECT_EQ(go_double(0), "0.0");
  EXPECT_EQ(go_double(1.28e-4), "1.28E-4");
  EXPECT_EQ(go_double(0.001), "0.001");
  EXPECT_EQ(go_double(65.536), "65.536");
  EXPECT_EQ(go_double(1234567), "1234567.0");
  EXPECT_EQ(go_double(-2.5), "-2.5");
  EXPECT_EQ(go_double(INFINITY), "+Inf");
  EXPECT_EQ(go_double(-INFINITY), "-Inf");
  EXPECT_EQ(go_double(NAN), "NaN");
}

TEST(Exposition, HistogramBucketsAreCumulativeAndEndWithInfEqualToCount) {
  const auto counts = counts_of({0, 3, 40, 100, 5000});
  MetricFamily h = log_histogram_family("zkraft_h_seconds", "h", counts, {1, 4, 64, 128}, 1000,
                                        5.143);
  EXPECT_EQ(render_exposition({h}),
            "# HELP zkraft_h_seconds h\n"
            "# TYPE zkraft_h_seconds histogram\n"
            "zkraft_h_seconds_bucket{le=\"0.001\",} 1.0\n"   // 0
            "zkraft_h_seconds_bucket{le=\"0.004\",} 2.0\n"   // 0, 3
            "zkraft_h_seconds_bucket{le=\"0.064\",} 3.0\n"   // ..., 40
            "zkraft_h_seconds_bucket{le=\"0.128\",} 4.0\n"   // ..., 100
            "zkraft_h_seconds_bucket{le=\"+Inf\",} 5.0\n"
            "zkraft_h_seconds_count 5.0\n"
            "zkraft_h_seconds_sum 5.143\n");
}

TEST(Quantiles, FromBucketsExactBelowSixteenNanWhenEmpty) {
  EXPECT_TRUE(std::isnan(bucket_quantile(std::vector<uint64_t>(kLogBucketCount), 0.5)));
  const auto c = counts_of({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  EXPECT_EQ(bucket_quantile(c, 0.5), 5);
  EXPECT_EQ(bucket_quantile(c, 0.9), 9);
  EXPECT_EQ(bucket_quantile(c, 0.99), 10);
  const double big = bucket_quantile(counts_of({1000}), 0.5);
  EXPECT_NEAR(big, 1000, 1000 / 8.0);
}

TEST(Quantiles, WindowForgetsWhatIsOlderThanTenMinutes) {
  SummaryWindow w;
  auto old = counts_of({7, 7, 7});
  // First scrape: everything since the start.
  EXPECT_EQ(bucket_quantile(w.window(old, 0), 0.5), 7);
  // 2 minutes later: the 7s are still in the window, with the new 3.
  auto later = old;
  ++later[log_bucket(3)];
  auto win = w.window(later, SummaryWindow::kRotateMs);
  EXPECT_EQ(bucket_quantile(win, 0.5), 7);
  // 11 minutes after the first: the base is the snapshot of minute 2, so only what came since.
  auto now = later;
  ++now[log_bucket(12)];
  win = w.window(now, 11 * 60000);
  EXPECT_EQ(bucket_quantile(win, 0.5), 12);
  EXPECT_EQ(bucket_quantile(win, 0.99), 12);
  // Nothing new for the next scrape 20 minutes later: the newest older snapshot is the base.
  win = w.window(now, 31 * 60000);
  EXPECT_TRUE(std::isnan(bucket_quantile(win, 0.5)));
}

MetricsStatus leader_status() {
  MetricsStatus m;
  m.server.node_count = 9;
  m.server.watch_count = 2;
  m.replication.mode = "leader";
  m.replication.leader_id = 1;
  m.replication.quorum_size = 2;
  m.replication.learners = 2;
  m.replication.synced_followers = 2;
  m.read_latency_ms.record(3);
  m.read_latency_ms.record(5);
  ConsensusFigures& c = m.consensus;
  c.known = true;
  c.term = 4;
  c.commit_index = 100;
  c.applied_index = 99;
  c.last_index = 101;
  c.peers = {PeerProgress{2, 101, false, true}, PeerProgress{3, 90, false, true}};
  c.fsyncs = 2;
  c.fsync_micros_total = 3000;
  c.fsync_micros_buckets = counts_of({1000, 2000});
  return m;
}

std::string page(const MetricsStatus& m, const std::string& query, int* status = nullptr) {
  PrometheusExporter e;
  AdminRequest r{"GET", "/metrics" + query, std::nullopt, "127.0.0.1", ""};
  AdminReply reply = handle_metrics_request(r, [&] { return std::optional<MetricsStatus>(m); }, e, 0);
  if (status) *status = reply.status;
  EXPECT_EQ(reply.content_type, "text/plain; version=0.0.4; charset=utf-8");
  return reply.body;
}

TEST(Page, ZooKeeperNamesAndPerMemberLagExactly) {
  EXPECT_EQ(page(leader_status(),
                 "?name[]=znode_count&name%5B%5D=quorum_size&name[]=readlatency&name[]=fsynctime"
                 "&name[]=zkraft_follower_lag_entries"),
            "# HELP znode_count znode_count\n"
            "# TYPE znode_count gauge\n"
            "znode_count 9.0\n"
            "# HELP quorum_size quorum_size\n"
            "# TYPE quorum_size gauge\n"
            "quorum_size 2.0\n"
            "# HELP readlatency readlatency\n"
            "# TYPE readlatency summary\n"
            "readlatency{quantile=\"0.5\",} 3.0\n"
            "readlatency{quantile=\"0.9\",} 5.0\n"
            "readlatency{quantile=\"0.99\",} 5.0\n"
            "readlatency_count 2.0\n"
            "readlatency_sum 8.0\n"
            "# HELP fsynctime fsynctime\n"
            "# TYPE fsynctime summary\n"
            "fsynctime{quantile=\"0.5\",} 0.9915\n"  // 1000 us is in [960, 1024): its middle, in ms
            "fsynctime_count 2.0\n"
            "fsynctime_sum 3.0\n"
            "# HELP zkraft_follower_lag_entries Leader only: entries of the leader's log not yet "
            "replicated on each other member (last index - match index).\n"
            "# TYPE zkraft_follower_lag_entries gauge\n"
            "zkraft_follower_lag_entries{member=\"2\",} 0.0\n"
            "zkraft_follower_lag_entries{member=\"3\",} 11.0\n");
}

TEST(Page, EveryFamilyOnceAndNoConsensusFiguresWithoutConsensus) {
  MetricsStatus standalone;  // consensus.known false (the unit tests' fake log)
  const std::string text = page(standalone, "");
  EXPECT_EQ(text.find("zkraft_"), std::string::npos);
  EXPECT_EQ(text.find("quorum_size"), std::string::npos);  // only in an ensemble
  const std::string full = page(leader_status(), "");
  std::set<std::string> seen;
  size_t pos = 0;
  while ((pos = full.find("# TYPE ", pos)) != std::string::npos) {
    pos += 7;
    const std::string name = full.substr(pos, full.find(' ', pos) - pos);
    EXPECT_TRUE(seen.insert(name).second) << name;
  }
  for (const char* n : {"znode_count", "watch_count", "packets_received", "learners",
                        "synced_followers", "updatelatency", "snapshottime", "proposal_count",
                        "election_time", "looking_count",
                        "zkraft_raft_term", "zkraft_fsync_duration_seconds",
                        "zkraft_peer_bytes_total", "zkraft_follower_match_index",
                        "zkraft_log_memory_bytes", "zkraft_log_entries_read_back_total"}) {
    EXPECT_TRUE(seen.count(n)) << n;
  }
}

TEST(Page, OtherPathsAndMethodsAnsweredAsZooKeepersJetty) {
  PrometheusExporter e;
  int calls = 0;
  auto fetch = [&] {
    ++calls;
    return std::optional<MetricsStatus>(MetricsStatus{});
  };
  auto ask = [&](const char* method, const char* target) {
    return handle_metrics_request(AdminRequest{method, target, std::nullopt, "", ""}, fetch, e, 0)
        .status;
  };
  EXPECT_EQ(ask("GET", "/"), 404);
  EXPECT_EQ(ask("GET", "/metrics/"), 404);
  EXPECT_EQ(ask("GET", "/commands"), 404);
  EXPECT_EQ(ask("TRACE", "/metrics"), 403);
  EXPECT_EQ(ask("PUT", "/metrics"), 405);
  EXPECT_EQ(ask("OPTIONS", "/metrics"), 200);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(ask("POST", "/metrics"), 200);
  EXPECT_EQ(ask("HEAD", "/metrics"), 200);
  EXPECT_EQ(calls, 2);
  auto none = [] { return std::optional<MetricsStatus>(); };
  EXPECT_EQ(handle_metrics_request(AdminRequest{"GET", "/metrics", std::nullopt, "", ""}, none, e, 0)
                .status,
            503);
}

TEST(MetricsConfig, ZooKeepersKeysAndDefaults) {
  Config c;
  std::string err;
  ASSERT_TRUE(parse_zoo_cfg("dataDir=/d\nmetricsProvider.className=" +
                                std::string(kPrometheusProviderClass) + "\n",
                            c, &err))
      << err;
  EXPECT_EQ(c.metrics_provider, kPrometheusProviderClass);
  EXPECT_EQ(c.metrics_host, "0.0.0.0");  // PrometheusMetricsProvider's httpHost default
  EXPECT_EQ(c.metrics_port, 7000);
  EXPECT_TRUE(c.warnings.empty());
  Config j;  // accepted (the start-up line says there is no JVM to describe)
  ASSERT_TRUE(parse_zoo_cfg("dataDir=/d\nmetricsProvider.exportJvmInfo=false\n", j, &err)) << err;
  EXPECT_FALSE(j.metrics_export_jvm_info);
  EXPECT_TRUE(j.warnings.empty()) << j.warnings[0];
}

}  // namespace
}  // namespace zkraft::server
