#pragma once
// The Prometheus page (/metrics on metricsProvider.httpPort), without sockets or threads: the
// figures a server has (MetricsStatus, collected on the state thread) to the text exposition
// format 0.0.4, as ZooKeeper 3.9.4's PrometheusMetricsProvider (Prometheus simpleclient 0.9.0)
// writes it. admin_server.h is the HTTP around it.
//
// Names: ZooKeeper's own where zkraft has the figure, with ZooKeeper's type and meaning (the
// gauges of ZooKeeperServer/QuorumZooKeeperServer/LeaderZooKeeperServer.registerMetrics, the
// counters and summaries of ServerMetrics.java; HELP is the name, as the provider builds every
// metric with build(name, name)); zkraft's own under zkraft_ (Raft, storage, transport). A figure
// zkraft does not have is not exported: nothing here is a constant standing in for one.
//
// Format (simpleclient TextFormat.write004): per family "# HELP", "# TYPE", then its samples;
// each family once; labels written as name="value", each followed by ',' (simpleclient's
// spelling, valid in 0.0.4); values as Java's Double.toString ("12.0", "1.0E7", "NaN", "+Inf").
// Histograms: cumulative _bucket samples ending with le="+Inf" equal to _count, then _count and
// _sum. Summaries: the quantile samples, then _count and _sum.
//
// Summaries' quantiles are over about the last 10 minutes (simpleclient's maxAgeSeconds 600 in 5
// age buckets), from log-linear bucket counts (consensus/log_buckets.h: within 12.5% of the
// true value, where simpleclient's CKMS is within a rank error); _count and _sum are over the
// process's life. With nothing observed in the window a quantile is NaN, as simpleclient's.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/admin_commands.h"
#include "server/replicated_log.h"
#include "server/server_stats.h"
#include "server/server_status.h"

namespace zkraft::server {

// ZooKeeper's metricsProvider.className that turns the Prometheus page on.
inline constexpr std::string_view kPrometheusProviderClass =
    "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider";
// TextFormat.CONTENT_TYPE_004.
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Everything the page shows, gathered on the state thread (RequestPipeline::metrics_status). The
// server's own figures are as of that moment; replication and consensus as of consensus' last
// report (ReplicatedLog: at most one refresh, 50 ms, old).
struct MetricsStatus {
  ServerStatus server;
  ReplicationStatus replication;
  ConsensusFigures consensus;
  int64_t pending_syncs = 0;
  uint64_t connections_rejected = 0;
  BucketCounts read_latency_ms;
  BucketCounts update_latency_ms;
};

// ---------------------------------------------------------------- the exposition model

enum class MetricType { kCounter, kGauge, kSummary, kHistogram };

struct MetricSample {
  std::string suffix;  // "", "_bucket", "_count", "_sum"
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<MetricSample> samples;
};

MetricFamily gauge_family(std::string name, std::string help, double value);
MetricFamily counter_family(std::string name, std::string help, double value);
// Quantile samples (q, value), then _count and _sum.
MetricFamily summary_family(std::string name, std::string help,
                            const std::vector<std::pair<double, double>>& quantiles,
                            uint64_t count, double sum);
// Cumulative buckets from per-bucket counts `counts` (consensus/log_buckets.h) at the `le`
// bounds given in the counts' unit, each bound a power of two (a bucket boundary), divided by
// `divisor` for display (1e6: microseconds shown as seconds). count = the counts' total.
MetricFamily log_histogram_family(std::string name, std::string help,
                                  const std::vector<uint64_t>& counts,
                                  const std::vector<uint64_t>& bounds, double divisor, double sum);

// The text of `families`, in order (format in the header comment).
std::string render_exposition(const std::vector<MetricFamily>& families);

// Collector.doubleToGoString: Java's Double.toString (four_letter_words.h java_double), with
// "+Inf", "-Inf" and "NaN".
std::string go_double(double v);
// Label values: backslash, double quote and newline escaped (\\, \", \n).
std::string escape_label_value(std::string_view v);
// HELP text: backslash and newline escaped.
std::string escape_help(std::string_view v);

// ---------------------------------------------------------------- quantiles over a window

// The q-quantile of per-bucket counts (NaN when they are all zero): the value of the bucket
// holding the ceil(q * n)-th observation (exact below 16, the bucket's middle above).
double bucket_quantile(const std::vector<uint64_t>& counts, double q);

// One summary's sliding window: given the cumulative counts at each scrape, the counts
// observed in about the last kMaxAgeMs (from the oldest remembered scrape no older than that;
// with none, the newest older one). What was observed before the first scrape counts as observed
// at it. Snapshots are remembered at most every kRotateMs. Not thread-safe: one per summary, on the metrics thread.
class SummaryWindow {
 public:
  static constexpr int64_t kMaxAgeMs = 600000;
  static constexpr int64_t kRotateMs = 120000;
  std::vector<uint64_t> window(const std::vector<uint64_t>& cumulative, int64_t now_ms);

 private:
  std::deque<std::pair<int64_t, std::vector<uint64_t>>> snapshots_;
};

// ---------------------------------------------------------------- the page

// The families of one scrape, and the summaries' windows between scrapes (metrics thread).
class PrometheusExporter {
 public:
  std::vector<MetricFamily> families(const MetricsStatus& s, int64_t now_ms);

 private:
  MetricFamily summary(const std::string& name, const BucketCounts& counts,
                       const std::vector<double>& quantiles, int64_t now_ms);
  std::map<std::string, SummaryWindow> windows_;
};

// What the metrics port answers (PrometheusMetricsProvider's Jetty: MetricsServlet on /metrics
// only): GET, POST and HEAD of /metrics the page (name[]=<family> parameters keep only those
// families, as MetricsServlet filters); TRACE 403 (the provider's constraint); other methods
// 405; other paths 404. fetch: the status from the state thread, nullopt (503) if it did not
// answer.
AdminReply handle_metrics_request(const AdminRequest& request,
                                  const std::function<std::optional<MetricsStatus>()>& fetch,
                                  PrometheusExporter& exporter, int64_t now_ms);

}  // namespace zkraft::server
