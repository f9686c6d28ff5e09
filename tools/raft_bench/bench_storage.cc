#include "bench_storage.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "consensus/group_commit_log.h"

namespace zkraft::tools {

using namespace consensus;  // NOLINT

std::string run_storage_bench(const StorageBenchConfig& cfg) {
  std::string err;
  StorageOptions so;
  if (cfg.write_buffer_bytes > 0) so.write_buffer_size = cfg.write_buffer_bytes;
  auto storage = LogStorage::open(cfg.dir, so, &err);
  if (!storage) throw std::runtime_error(err);
  GroupCommitOptions go;
  go.sync = cfg.fsync;
  GroupCommitLog log(std::move(storage), go);
  log.start();

  std::mutex submit_mu;  // indexes must reach the queue in order
  Index next = 1;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> done{0};
  const std::string payload(cfg.entry_size, 'p');

  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(cfg.seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < cfg.submitters; ++t) {
    threads.emplace_back([&] {
      std::mutex mu;
      std::condition_variable cv;
      while (!stop.load()) {
        bool durable = false;
        {
          std::lock_guard lock(submit_mu);
          Entry e{1, next++, EntryType::kNormal, payload};
          log.submit({std::move(e)}, std::nullopt, [&](Status s) {
            if (!s.is_ok()) std::abort();
            std::lock_guard l(mu);
            durable = true;
            cv.notify_one();
          });
        }
        std::unique_lock l(mu);
        cv.wait(l, [&] { return durable; });
        done.fetch_add(1);
      }
    });
  }
  const GroupCommitStats before = log.stats();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_until(deadline);
  const uint64_t completed = done.load();
  const auto t1 = std::chrono::steady_clock::now();
  const GroupCommitStats after = log.stats();
  stop = true;
  for (auto& th : threads) th.join();
  log.stop();

  const double secs = std::chrono::duration<double>(t1 - t0).count();
  const uint64_t fsyncs = after.fsyncs - before.fsyncs;
  nlohmann::json j;
  j["mode"] = "storage";
  j["entry_size"] = cfg.entry_size;
  j["submitters"] = cfg.submitters;
  j["fsync"] = cfg.fsync;
  j["seconds"] = secs;
  j["entries"] = completed;
  j["entries_per_sec"] = completed / secs;
  j["mb_per_sec"] = completed * cfg.entry_size / secs / 1e6;
  j["fsyncs"] = fsyncs;
  j["entries_per_fsync"] = fsyncs ? static_cast<double>(after.entries - before.entries) / fsyncs : 0.0;
  j["fsync_ms_avg"] = fsyncs ? (after.fsync_micros_total - before.fsync_micros_total) / 1000.0 / fsyncs : 0.0;
  return j.dump();
}

}  // namespace zkraft::tools
