// zk_load: a ZooKeeper-protocol load generator (speaks jute directly, one thread per session).
// Works against zkraft and Apache ZooKeeper alike. See docs/benchmarks.md for how it is used.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "jute/errors.h"
#include "tools/load_bench/churn_worker.h"
#include "tools/load_bench/latency_stats.h"
#include "tools/load_bench/load_setup.h"
#include "tools/load_bench/load_worker.h"
#include "tools/load_bench/watch_fanout.h"

using namespace zkraft::tools;

int main(int argc, char** argv) {
  CLI::App app{"zk_load: ZooKeeper protocol load generator (zkraft or Apache ZooKeeper)"};
  LoadOptions opt;
  std::string servers = "127.0.0.1:2181";
  std::string op = "set";
  bool json = false;
  std::string timeline;
  std::string latency_timeline;
  std::string mix = "create=1,set=8,get=45,list=45,delete=1";
  int read_percent = -1;
  app.add_option("-s,--servers", servers, "host:port[,host:port...]; sessions are spread over them");
  app.add_option("-n,--sessions", opt.sessions, "sessions (connections), one thread each")
      ->check(CLI::Range(1, 4096));
  app.add_option("-k,--inflight", opt.inflight, "requests kept in flight per session")
      ->check(CLI::Range(1, 10000));
  app.add_option("-o,--op", op,
                 "create (persistent, a new name each) | createseq (sequential) | set | get | "
                 "exists (own node) | list (getChildren of <root>/list) | delete (--pool nodes per "
                 "session, made first) | mixed (--mix) | churn (connect, create an ephemeral, close) | "
                 "watch (-n watchers of one node, one writer)")
      ->check(CLI::IsMember({"create", "createseq", "set", "get", "exists", "list", "delete",
                             "mixed", "churn", "watch"}));
  app.add_option("-b,--size", opt.data_size, "data bytes for create/setData")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--mix", mix, "mixed: weights of create, set, get, list, delete, exists");
  app.add_option("--read-percent", read_percent,
                 "mixed: percent getData, the rest setData (replaces --mix; the old mixed op)")
      ->check(CLI::Range(0, 100));
  app.add_option("--pool", opt.delete_pool, "delete: nodes created per session before the run")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--parents", opt.parents,
                 "createseq: spread the nodes over this many parents <root>/gN (0: the root)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--list-children", opt.list_children, "list: children of the listed node")
      ->check(CLI::Range(0, 100000));
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
  app.add_option("--latency-timeline", latency_timeline,
                 "write 'completion unix_us, latency us' of every success in the window here");
  app.add_flag("--json", json, "print one JSON object instead of text");
  CLI11_PARSE(app, argc, argv);

  if (!parse_servers(servers, opt.servers)) {
    std::cerr << "bad --servers: " << servers << "\n";
    return 2;
  }
  opt.op = *parse_op(op);
  if (opt.failover) opt.op = LoadOp::kSet;
  std::string why;
  if (read_percent >= 0) {
    opt.mix = Mix{0, 100 - read_percent, read_percent, 0, 0, 0};
  } else if (auto m = parse_mix(mix, why)) {
    opt.mix = *m;
  } else {
    std::cerr << "bad --mix: " << why << "\n";
    return 2;
  }
  opt.timeline = !latency_timeline.empty();
  // Names this run creates carry the start time, so runs on one tree never collide.
  opt.run_tag = std::to_string(unix_us_now() % 100000000000LL);

  if (!prepare_run(opt, why)) {
    std::cerr << "cannot prepare " << opt.root << ": " << why << "\n";
    return 1;
  }
  std::vector<WorkerResult> results(static_cast<size_t>(opt.sessions));
  if (opt.op != LoadOp::kWatch && opt.op != LoadOp::kChurn) {
    std::vector<std::thread> setup;
    std::vector<char> ok_setup(results.size(), 0);
    for (int i = 0; i < opt.sessions; ++i) {
      setup.emplace_back([&, i] {
        ok_setup[static_cast<size_t>(i)] = setup_worker(i, opt, results[static_cast<size_t>(i)]);
      });
    }
    for (auto& t : setup) t.join();
    for (size_t i = 0; i < results.size(); ++i) {
      if (!ok_setup[i]) {
        std::cerr << results[i].last_error << "\n";
        return 1;
      }
    }
  }

  // compare.py takes the servers' CPU time from here on, so setup is not charged to the op.
  std::fputs("zk_load: clocks start\n", stderr);
  std::fflush(stderr);
  LoadShared shared;
  Clock::time_point start = Clock::now();
  shared.measure_from = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(opt.warmup_s));
  shared.measure_until = shared.measure_from + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(opt.duration_s));
  std::vector<std::thread> threads;
  if (opt.op == LoadOp::kWatch) {
    threads.emplace_back([&] { run_watch_fanout(opt, shared, results[0]); });
  } else {
    for (int i = 0; i < opt.sessions; ++i) {
      threads.emplace_back([&, i] {
        WorkerResult& r = results[static_cast<size_t>(i)];
        if (opt.op == LoadOp::kChurn) {
          run_churn_worker(i, opt, shared, r);
        } else {
          run_worker(i, opt, shared, r);
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  Clock::time_point end = Clock::now();

  // The window is cut short when --max-ops ends the run early.
  Clock::time_point window_end = std::min(end, shared.window_end());
  bool pool_exhausted = shared.exhausted_at_ns.load() != 0;
  double window_s =
      std::max(1e-9, std::chrono::duration<double>(window_end - shared.measure_from).count());

  std::vector<uint32_t> lat;
  std::vector<int64_t> writes;
  std::vector<std::pair<int64_t, uint32_t>> done_at;  // timeline: completion, latency
  uint64_t ok = 0, errors = 0, conn_failures = 0;
  std::map<int32_t, uint64_t> codes;
  std::string last_error;
  for (auto& r : results) {
    lat.insert(lat.end(), r.latency_us.begin(), r.latency_us.end());
    writes.insert(writes.end(), r.write_success_unix_us.begin(), r.write_success_unix_us.end());
    for (size_t i = 0; i < r.done_unix_us.size() && i < r.latency_us.size(); ++i) {
      done_at.emplace_back(r.done_unix_us[i], r.latency_us[i]);
    }
    ok += r.ok;
    errors += r.error_replies;
    conn_failures += r.connection_failures;
    for (auto& [c, n] : r.error_codes) codes[c] += n;
    if (!r.last_error.empty()) last_error = r.last_error;
  }
  if (opt.timeline) {
    std::sort(done_at.begin(), done_at.end());
    std::FILE* f = std::fopen(latency_timeline.c_str(), "w");
    if (f == nullptr) {
      std::cerr << "cannot write " << latency_timeline << "\n";
      return 1;
    }
    for (auto& [t, us] : done_at) std::fprintf(f, "%lld %u\n", static_cast<long long>(t), us);
    std::fclose(f);
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
    j["pool_exhausted"] = pool_exhausted;
    if (opt.op == LoadOp::kWatch) j["watchers"] = opt.sessions;
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
    std::printf("window %.2f s%s: %llu ok, %.0f ops/s\n", window_s,
                pool_exhausted ? " (cut short: the delete pool ran out)" : "",
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
