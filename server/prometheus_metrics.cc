#include "server/prometheus_metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "consensus/log_buckets.h"
#include "server/four_letter_words.h"

namespace zkraft::server {

namespace {

const char* type_name(MetricType t) {
  switch (t) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kSummary: return "summary";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

MetricFamily one_sample(std::string name, std::string help, MetricType type, double value) {
  MetricFamily f{std::move(name), std::move(help), type, {}};
  f.samples.push_back(MetricSample{"", {}, value});
  return f;
}

double as_double(uint64_t v) { return static_cast<double>(v); }
double as_double(int64_t v) { return static_cast<double>(v); }

// Powers of two from 2^lo to 2^hi: bucket boundaries of consensus/log_buckets.h.
std::vector<uint64_t> powers_of_two(int lo, int hi) {
  std::vector<uint64_t> out;
  for (int e = lo; e <= hi; ++e) out.push_back(uint64_t{1} << e);
  return out;
}

}  // namespace

// ---------------------------------------------------------------- the exposition model

MetricFamily gauge_family(std::string name, std::string help, double value) {
  return one_sample(std::move(name), std::move(help), MetricType::kGauge, value);
}

MetricFamily counter_family(std::string name, std::string help, double value) {
  return one_sample(std::move(name), std::move(help), MetricType::kCounter, value);
}

MetricFamily summary_family(std::string name, std::string help,
                            const std::vector<std::pair<double, double>>& quantiles,
                            uint64_t count, double sum) {
  MetricFamily f{std::move(name), std::move(help), MetricType::kSummary, {}};
  for (const auto& [q, v] : quantiles) {
    f.samples.push_back(MetricSample{"", {{"quantile", go_double(q)}}, v});
  }
  f.samples.push_back(MetricSample{"_count", {}, as_double(count)});
  f.samples.push_back(MetricSample{"_sum", {}, sum});
  return f;
}

MetricFamily log_histogram_family(std::string name, std::string help,
                                  const std::vector<uint64_t>& counts,
                                  const std::vector<uint64_t>& bounds, double divisor, double sum) {
  MetricFamily f{std::move(name), std::move(help), MetricType::kHistogram, {}};
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  for (uint64_t bound : bounds) {
    // A bound is the lowest value of its bucket: everything below it is in the buckets before.
    const size_t end = std::min(consensus::log_bucket(bound), counts.size());
    uint64_t below = 0;
    for (size_t i = 0; i < end; ++i) below += counts[i];
    f.samples.push_back(MetricSample{
        "_bucket", {{"le", go_double(static_cast<double>(bound) / divisor)}}, as_double(below)});
  }
  f.samples.push_back(MetricSample{"_bucket", {{"le", "+Inf"}}, as_double(total)});
  f.samples.push_back(MetricSample{"_count", {}, as_double(total)});
  f.samples.push_back(MetricSample{"_sum", {}, sum});
  return f;
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string go_double(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return java_double(v);  // four_letter_words.h: NaN, and Java's layout of the shortest digits
}

std::string render_exposition(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const auto& f : families) {
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + " " + type_name(f.type) + "\n";
    for (const auto& s : f.samples) {
      out += f.name + s.suffix;
      if (!s.labels.empty()) {
        out += '{';
        for (const auto& [k, v] : s.labels) out += k + "=\"" + escape_label_value(v) + "\",";
        out += '}';
      }
      out += ' ' + go_double(s.value) + '\n';
    }
  }
  return out;
}

// ---------------------------------------------------------------- quantiles over a window

double bucket_quantile(const std::vector<uint64_t>& counts, double q) {
  uint64_t n = 0;
  for (uint64_t c : counts) n += c;
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(n))));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) {
      const uint64_t lo = consensus::log_bucket_lower(i);
      const uint64_t hi = consensus::log_bucket_upper(i);
      if (hi - lo <= 1) return static_cast<double>(lo);
      return static_cast<double>(lo) + static_cast<double>(hi - lo - 1) / 2.0;
    }
  }
  return std::numeric_limits<double>::quiet_NaN();  // unreachable: seen reaches n
}

std::vector<uint64_t> SummaryWindow::window(const std::vector<uint64_t>& cumulative,
                                            int64_t now_ms) {
  // What was observed before the first scrape counts as observed at it.
  if (snapshots_.empty()) snapshots_.emplace_back(now_ms, std::vector<uint64_t>(cumulative.size()));
  // The base: the oldest remembered snapshot within the window, else the newest one at all.
  const std::vector<uint64_t>* base = nullptr;
  size_t base_at = 0;
  for (size_t i = 0; i < snapshots_.size(); ++i) {
    if (now_ms - snapshots_[i].first <= kMaxAgeMs) {
      base = &snapshots_[i].second;
      base_at = i;
      break;
    }
  }
  if (base == nullptr && !snapshots_.empty()) {
    base_at = snapshots_.size() - 1;
    base = &snapshots_.back().second;
  }
  std::vector<uint64_t> out = cumulative;
  if (base != nullptr) {
    for (size_t i = 0; i < out.size() && i < base->size(); ++i) {
      out[i] = out[i] >= (*base)[i] ? out[i] - (*base)[i] : 0;
    }
  }
  // Older snapshots than the base will never be a base again.
  snapshots_.erase(snapshots_.begin(), snapshots_.begin() + static_cast<std::ptrdiff_t>(base_at));
  if (snapshots_.empty() || now_ms - snapshots_.back().first >= kRotateMs) {
    snapshots_.emplace_back(now_ms, cumulative);
  }
  return out;
}

// ---------------------------------------------------------------- the page

MetricFamily PrometheusExporter::summary(const std::string& name, const BucketCounts& counts,
                                         const std::vector<double>& quantiles, int64_t now_ms) {
  const std::vector<uint64_t> recent = windows_[name].window(counts.buckets, now_ms);
  std::vector<std::pair<double, double>> qs;
  for (double q : quantiles) qs.emplace_back(q, bucket_quantile(recent, q));
  return summary_family(name, name, qs, counts.count, as_double(counts.sum));
}

std::vector<MetricFamily> PrometheusExporter::families(const MetricsStatus& m, int64_t now_ms) {
  std::vector<MetricFamily> out;
  const ServerStatus& s = m.server;
  // ZooKeeper's names (HELP = name, as the provider builds them). ZooKeeperServer.registerMetrics:
  auto zk_gauge = [&](const char* name, double v) { out.push_back(gauge_family(name, name, v)); };
  zk_gauge("avg_latency", s.avg_latency_ms);
  zk_gauge("max_latency", as_double(s.max_latency_ms));
  zk_gauge("min_latency", as_double(s.min_latency_ms));
  zk_gauge("packets_received", as_double(s.packets_received));
  zk_gauge("packets_sent", as_double(s.packets_sent));
  zk_gauge("num_alive_connections", as_double(s.num_alive_connections));
  zk_gauge("outstanding_requests", as_double(s.outstanding_requests));
  zk_gauge("uptime", as_double(s.uptime_ms));
  zk_gauge("znode_count", as_double(s.node_count));
  zk_gauge("watch_count", as_double(s.watch_count));
  zk_gauge("ephemerals_count", as_double(s.ephemerals_count));
  zk_gauge("approximate_data_size", as_double(s.approximate_data_size));
  zk_gauge("global_sessions", as_double(s.global_sessions));
  zk_gauge("local_sessions", as_double(s.local_sessions));
  zk_gauge("open_file_descriptor_count", as_double(s.open_file_descriptor_count));
  zk_gauge("max_file_descriptor_count", as_double(s.max_file_descriptor_count));
  zk_gauge("auth_failed_count", as_double(s.auth_failed_count));
  const std::string& mode = m.replication.mode;
  const bool quorum = mode == "leader" || mode == "follower" || mode == "observer";
  // QuorumZooKeeperServer.registerMetrics (a server of an ensemble, not a read-only one):
  if (quorum && !s.read_only) zk_gauge("quorum_size", as_double(m.replication.quorum_size));
  if (mode == "leader" && !s.read_only) {  // LeaderZooKeeperServer.registerMetrics
    zk_gauge("learners", as_double(m.replication.learners));
    zk_gauge("synced_followers", as_double(m.replication.synced_followers));
    zk_gauge("synced_non_voting_followers", as_double(m.replication.synced_observers));
    zk_gauge("synced_observers", as_double(m.replication.synced_observers));
    zk_gauge("pending_syncs", as_double(m.pending_syncs));
    if (s.proposal_sizes && s.proposal_sizes->size() == 3) {
      zk_gauge("last_proposal_size", as_double((*s.proposal_sizes)[0]));
      zk_gauge("max_proposal_size", as_double((*s.proposal_sizes)[2]));
      zk_gauge("min_proposal_size", as_double((*s.proposal_sizes)[1]));
    }
  } else if (mode == "follower" && !s.read_only) {  // FollowerZooKeeperServer.registerMetrics
    zk_gauge("synced_observers", as_double(m.replication.synced_observers));
  }
  // ServerMetrics: summaries (ADVANCED: 0.5, 0.9, 0.99; BASIC: 0.5) and counters.
  out.push_back(summary("readlatency", m.read_latency_ms, {0.5, 0.9, 0.99}, now_ms));
  out.push_back(summary("updatelatency", m.update_latency_ms, {0.5, 0.9, 0.99}, now_ms));
  const ConsensusFigures& c = m.consensus;
  if (c.known) {
    // fsynctime and snapshottime are in milliseconds; the fsyncs are counted in microseconds.
    const auto recent = windows_["fsynctime"].window(c.fsync_micros_buckets, now_ms);
    const double median = bucket_quantile(recent, 0.5) / 1000.0;
    out.push_back(summary_family("fsynctime", "fsynctime", {{0.5, median}}, c.fsyncs,
                                 as_double(c.fsync_micros_total) / 1000.0));
    BucketCounts snap{c.snapshot_ms_buckets, c.snapshots, c.snapshot_ms_total};
    out.push_back(summary("snapshottime", snap, {0.5}, now_ms));
    out.push_back(counter_family("proposal_count", "proposal_count", as_double(c.proposals)));
    BucketCounts elections{c.election_ms_buckets, c.elections, c.election_ms_total};
    out.push_back(summary("election_time", elections, {0.5}, now_ms));
    out.push_back(counter_family("looking_count", "looking_count", as_double(c.looking_count)));
  }
  out.push_back(counter_family("connection_rejected", "connection_rejected",
                               as_double(m.connections_rejected)));
  if (!c.known) return out;

  // zkraft's own.
  out.push_back(gauge_family("zkraft_raft_term", "Current Raft term.", as_double(c.term)));
  out.push_back(gauge_family("zkraft_raft_leader", "Id of the leader this server knows (0: none).",
                             as_double(m.replication.leader_id)));
  out.push_back(gauge_family("zkraft_raft_commit_index", "Highest log index known committed.",
                             as_double(c.commit_index)));
  out.push_back(gauge_family("zkraft_raft_applied_index",
                             "Highest log index applied to the state machine.",
                             as_double(c.applied_index)));
  out.push_back(gauge_family("zkraft_raft_last_index", "Last index in this server's log.",
                             as_double(c.last_index)));
  out.push_back(gauge_family("zkraft_raft_snapshot_index", "Index of the latest snapshot.",
                             as_double(c.snapshot_index)));
  if (!c.peers.empty()) {
    MetricFamily match{"zkraft_follower_match_index",
                       "Leader only: highest log index known replicated on each other member.",
                       MetricType::kGauge, {}};
    MetricFamily lag{"zkraft_follower_lag_entries",
                     "Leader only: entries of the leader's log not yet replicated on each other "
                     "member (last index - match index).",
                     MetricType::kGauge, {}};
    for (const auto& p : c.peers) {
      const std::vector<std::pair<std::string, std::string>> member{{"member", std::to_string(p.id)}};
      match.samples.push_back(MetricSample{"", member, as_double(p.match)});
      lag.samples.push_back(
          MetricSample{"", member, as_double(c.last_index > p.match ? c.last_index - p.match : 0)});
    }
    out.push_back(std::move(match));
    out.push_back(std::move(lag));
  }
  out.push_back(counter_family("zkraft_leader_changes_total",
                               "Leader or term changes this server has seen (including to no leader).",
                               as_double(c.leader_changes)));
  out.push_back(counter_family("zkraft_proposals_total", "Entries proposed to Raft by this server.",
                               as_double(c.proposals)));
  out.push_back(counter_family("zkraft_proposal_batches_total",
                               "Batches the proposals reached Raft in (proposals / batches = "
                               "mean batch size).",
                               as_double(c.proposal_batches)));
  out.push_back(counter_family("zkraft_read_index_rounds_total",
                               "ReadIndex requests (linearizable read points) made.",
                               as_double(c.read_index_rounds)));
  out.push_back(counter_family("zkraft_log_entries_written_total",
                               "Log entries written to storage.", as_double(c.log_entries)));
  out.push_back(counter_family("zkraft_log_bytes_written_total",
                               "Entry data bytes written to storage.", as_double(c.log_bytes)));
  out.push_back(counter_family("zkraft_log_write_groups_total",
                               "Storage writes (group commit: each carries one or more "
                               "submissions, with at most one fsync).",
                               as_double(c.log_groups)));
  out.push_back(gauge_family("zkraft_log_memory_bytes",
                             "Bytes of Raft log entries held in memory; applied ones beyond a "
                             "budget live only in storage.",
                             as_double(c.log_memory_bytes)));
  out.push_back(counter_family("zkraft_log_entries_read_back_total",
                               "Log entries read back from storage to send to a follower that "
                               "needed entries no longer in memory.",
                               as_double(c.log_entries_read_back)));
  out.push_back(log_histogram_family("zkraft_fsync_duration_seconds",
                                     "Time of each log write with fsync.", c.fsync_micros_buckets,
                                     powers_of_two(5, 24), 1e6,
                                     as_double(c.fsync_micros_total) / 1e6));
  out.push_back(counter_family("zkraft_snapshots_total", "Snapshots this server serialised.",
                               as_double(c.snapshots)));
  out.push_back(gauge_family("zkraft_snapshot_last_bytes", "Size of the latest snapshot taken.",
                             as_double(c.last_snapshot_bytes)));
  out.push_back(log_histogram_family("zkraft_snapshot_duration_seconds",
                                     "Time to serialise each snapshot.", c.snapshot_ms_buckets,
                                     powers_of_two(0, 16), 1e3,
                                     as_double(c.snapshot_ms_total) / 1e3));
  MetricFamily bytes{"zkraft_peer_bytes_total",
                     "Payload bytes on the Raft peer transport, by direction.",
                     MetricType::kCounter, {}};
  bytes.samples.push_back(MetricSample{"", {{"direction", "received"}}, as_double(c.peer_bytes_received)});
  bytes.samples.push_back(MetricSample{"", {{"direction", "sent"}}, as_double(c.peer_bytes_sent)});
  out.push_back(std::move(bytes));
  MetricFamily messages{"zkraft_peer_messages_total",
                        "Messages on the Raft peer transport, by direction.",
                        MetricType::kCounter, {}};
  messages.samples.push_back(
      MetricSample{"", {{"direction", "received"}}, as_double(c.peer_messages_received)});
  messages.samples.push_back(MetricSample{"", {{"direction", "sent"}}, as_double(c.peer_messages_sent)});
  out.push_back(std::move(messages));
  out.push_back(counter_family("zkraft_peer_auth_failures_total",
                               "Peer-port handshakes refused for authentication (no or wrong "
                               "quorum credentials).",
                               as_double(c.peer_auth_failures)));
  return out;
}

AdminReply handle_metrics_request(const AdminRequest& request,
                                  const std::function<std::optional<MetricsStatus>()>& fetch,
                                  PrometheusExporter& exporter, int64_t now_ms) {
  const std::string& target = request.target;
  const size_t q = target.find('?');
  const std::string path = url_decode(std::string_view(target).substr(0, q));
  if (path != "/metrics") return AdminReply(404, "text/plain", "Not Found\n");
  const std::string& method = request.method;
  if (method == "TRACE") return AdminReply(403, "text/plain", "Forbidden\n");
  if (method == "OPTIONS") {
    AdminReply r(200, "", "");
    r.headers.emplace_back("Allow", "GET, HEAD, POST, TRACE, OPTIONS");
    return r;
  }
  if (method != "GET" && method != "HEAD" && method != "POST") {
    return AdminReply(405, "text/plain", "HTTP method " + method + " is not supported by this URL\n");
  }
  std::set<std::string> only;  // MetricsServlet's name[] parameters
  if (q != std::string::npos) {
    std::string_view query = std::string_view(target).substr(q + 1);
    while (!query.empty()) {
      const size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      const size_t eq = pair.find('=');
      if (eq != std::string_view::npos && url_decode(pair.substr(0, eq)) == "name[]") {
        only.insert(url_decode(pair.substr(eq + 1)));
      }
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
  }
  std::optional<MetricsStatus> status = fetch();
  if (!status) {
    return AdminReply(503, "text/plain", "The server did not report its figures in time\n");
  }
  std::vector<MetricFamily> families = exporter.families(*status, now_ms);
  if (!only.empty()) {
    std::erase_if(families, [&](const MetricFamily& f) { return only.count(f.name) == 0; });
  }
  return AdminReply(200, std::string(kPrometheusContentType), render_exposition(families));
}

}  // namespace zkraft::server
