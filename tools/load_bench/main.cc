// zk_load: a ZooKeeper-protocol load generator (speaks jute directly, one thread per session).
// Works against zkraft and Apache ZooKeeper alike. See docs/benchmarks.md for how it is used.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "jute/errors.h"
#include "tools/load_bench/latency_stats.h"
#include "tools/load_bench/load_worker.h"

using namespace zkraft::tools;

namespace {

const char* op_name(LoadOp op) {
  switch (op) {
    case LoadOp::kCreate: return "create";
    case LoadOp::kSet: return "set";
    case LoadOp::kGet: return "get";
    case LoadOp::kMixed: return "mixed";
  }
  return "?";
}

// Creates the root node (ignoring NodeExists) so that workers can create under it.
bool prepare_root(const LoadOptions& opt, std::string& why) {
  for (const HostPort& s : opt.servers) {
    ZkConnection c;
    if (!c.open(s, opt.session_timeout_ms, opt.io_timeout_ms)) {
      why = s.to_string() + ": " + c.error();
      continue;
    }
    zkraft::jute::ReplyHeader h;
    if (c.send_create(1, opt.root, "", 0) && c.read_reply(h) &&
        (h.err == zkraft::jute::err::kOk || h.err == zkraft::jute::err::kNodeExists)) {
      c.close_session();
      return true;
    }
    why = s.to_string() + ": create " + opt.root + " failed: " +
          (c.error().empty() ? "err " + std::to_string(h.err) : c.error());
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zk_load: ZooKeeper protocol load generator (zkraft or Apache ZooKeeper)"};
  LoadOptions opt;
  std::string servers = "127.0.0.1:2181";
  std::string op = "set";
  bool json = false;
  std::string timeline;
  app.add_option("-s,--servers", servers, "host:port[,host:port...]; sessions are spread over them");
  app.add_option("-n,--sessions", opt.sessions, "sessions (connections), one thread each")
      ->check(CLI::Range(1, 4096));
  app.add_option("-k,--inflight", opt.inflight, "requests kept in flight per session")
      ->check(CLI::Range(1, 10000));
  app.add_option("-o,--op", op, "create | set | get | mixed")
      ->check(CLI::IsMember({"create", "set", "get", "mixed"}));
  app.add_option("-b,--size", opt.data_size, "data bytes for create/setData")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--read-percent", opt.read_percent, "mixed: percent getData (rest setData)")
      ->check(CLI::Range(0, 100));
  app.add_option("-w,--warmup", opt.warmup_s, "seconds of load before measuring");
  app.add_option("-d,--duration", opt.duration_s, "seconds measured");
  app.add_option("--root", opt.root, "parent znode for the benchmark's nodes");
  app.add_option("--max-ops", opt.max_ops, "stop after this many requests in total (0: no limit)");
  app.add_option("--io-timeout-ms", opt.io_timeout_ms, "connect/read/write timeout per session");
  app.add_option("--session-timeout-ms", opt.session_timeout_ms, "requested session timeout");
  app.add_flag("--failover", opt.failover,
               "continuous setData; report the largest gap between successful writes");
  app.add_option("--timeline", timeline,
                 "failover: write the unix time (us) of every successful write to this file");
  app.add_flag("--json", json, "print one JSON object instead of text");
  CLI11_PARSE(app, argc, argv);

  if (!parse_servers(servers, opt.servers)) {
    std::cerr << "bad --servers: " << servers << "\n";
    return 2;
  }
  opt.op = op == "create" ? LoadOp::kCreate
         : op == "get"    ? LoadOp::kGet
         : op == "mixed"  ? LoadOp::kMixed
                          : LoadOp::kSet;
  if (opt.failover) opt.op = LoadOp::kSet;

  std::string why;
  if (!prepare_root(opt, why)) {
    std::cerr << "cannot prepare " << opt.root << ": " << why << "\n";
    return 1;
  }

  LoadShared shared;
  Clock::time_point start = Clock::now();
  shared.measure_from = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(opt.warmup_s));
  shared.measure_until = shared.measure_from + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(opt.duration_s));
  std::vector<WorkerResult> results(static_cast<size_t>(opt.sessions));
  std::vector<std::thread> threads;
  for (int i = 0; i < opt.sessions; ++i) {
    threads.emplace_back(
        [&, i] { run_worker(i, opt, shared, results[static_cast<size_t>(i)]); });
  }
  for (auto& t : threads) t.join();
  Clock::time_point end = Clock::now();

  // The window is cut short when --max-ops ends the run early.
  Clock::time_point window_end = std::min(end, shared.measure_until);
  double window_s =
      std::max(1e-9, std::chrono::duration<double>(window_end - shared.measure_from).count());

  std::vector<uint32_t> lat;
  std::vector<int64_t> writes;
  uint64_t ok = 0, errors = 0, conn_failures = 0;
  std::map<int32_t, uint64_t> codes;
  std::string last_error;
  for (auto& r : results) {
    lat.insert(lat.end(), r.latency_us.begin(), r.latency_us.end());
    writes.insert(writes.end(), r.write_success_unix_us.begin(), r.write_success_unix_us.end());
    ok += r.ok;
    errors += r.error_replies;
    conn_failures += r.connection_failures;
    for (auto& [c, n] : r.error_codes) codes[c] += n;
    if (!r.last_error.empty()) last_error = r.last_error;
  }
  LatencySummary s = summarize(lat);
  double ops_per_s = static_cast<double>(ok) / window_s;
  Gap gap = opt.failover ? largest_gap(writes) : Gap{};  // sorts writes
  if (opt.failover && !timeline.empty()) {
    std::FILE* f = std::fopen(timeline.c_str(), "w");
    if (f == nullptr) {
      std::cerr << "cannot write " << timeline << "\n";
      return 1;
    }
    for (int64_t t : writes) std::fprintf(f, "%lld\n", static_cast<long long>(t));
    std::fclose(f);
  }

  if (json) {
    nlohmann::json j;
    j["op"] = op_name(opt.op);
    j["servers"] = servers;
    j["sessions"] = opt.sessions;
    j["inflight"] = opt.inflight;
    j["size"] = opt.data_size;
    j["window_s"] = window_s;
    j["ok"] = ok;
    j["ops_per_s"] = ops_per_s;
    j["latency_ms"] = {{"p50", s.p50_ms}, {"p99", s.p99_ms}, {"p999", s.p999_ms},
                       {"max", s.max_ms}, {"mean", s.mean_ms}};
    j["error_replies"] = errors;
    nlohmann::json jc = nlohmann::json::object();
    for (auto& [c, n] : codes) jc[std::to_string(c)] = n;
    j["error_codes"] = jc;
    j["connection_failures"] = conn_failures;
    j["last_error"] = last_error;
    if (opt.failover) {
      j["successful_writes"] = writes.size();
      j["largest_gap_ms"] = gap.length_ms;
      j["gap_from_unix_us"] = gap.from_unix_us;
      j["gap_to_unix_us"] = gap.to_unix_us;
    }
    std::cout << j.dump() << "\n";
  } else {
    std::printf("op=%s sessions=%d inflight=%d size=%d servers=%s\n", op_name(opt.op),
                opt.sessions, opt.inflight, opt.data_size, servers.c_str());
    std::printf("window %.2f s: %llu ok, %.0f ops/s\n", window_s,
                static_cast<unsigned long long>(ok), ops_per_s);
    std::printf("latency ms: p50 %.3f  p99 %.3f  p999 %.3f  max %.3f  mean %.3f\n", s.p50_ms,
                s.p99_ms, s.p999_ms, s.max_ms, s.mean_ms);
    std::printf("error replies %llu, connection failures %llu\n",
                static_cast<unsigned long long>(errors),
                static_cast<unsigned long long>(conn_failures));
    for (auto& [c, n] : codes) std::printf("  err %d: %llu\n", c, static_cast<unsigned long long>(n));
    if (!last_error.empty()) std::printf("last error: %s\n", last_error.c_str());
    if (opt.failover) {
      std::printf("successful writes %zu, largest gap %.1f ms (from unix_us %lld to %lld)\n",
                  writes.size(), gap.length_ms, static_cast<long long>(gap.from_unix_us),
                  static_cast<long long>(gap.to_unix_us));
    }
  }
  return 0;
}
