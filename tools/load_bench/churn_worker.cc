#include "tools/load_bench/churn_worker.h"

#include <thread>

#include "jute/constants.h"
#include "jute/errors.h"

namespace zkraft::tools {

void run_churn_worker(int index, const LoadOptions& opt, LoadShared& shared, WorkerResult& out) {
  const std::string prefix = opt.root + "/e-" + opt.run_tag + "-" + std::to_string(index) + "-";
  const std::string data(static_cast<size_t>(opt.data_size), 'x');
  size_t server = static_cast<size_t>(index) % opt.servers.size();
  uint64_t n = 0;
  while (Clock::now() < shared.window_end()) {
    if (opt.max_ops != 0 && shared.issued.fetch_add(1) >= opt.max_ops) break;
    Clock::time_point t0 = Clock::now();
    ZkConnection c;
    jute::ReplyHeader h;
    if (!c.open(opt.servers[server], opt.session_timeout_ms, opt.io_timeout_ms) ||
        !c.send_create(2, prefix + std::to_string(n++), data, jute::create_mode::kEphemeral) ||
        !c.read_reply(h)) {
      ++out.connection_failures;
      out.last_error = opt.servers[server].to_string() + ": " + c.error();
      server = (server + 1) % opt.servers.size();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    c.close_session();
    if (!c.error().empty()) {  // EOF or a timeout before the closeSession reply
      ++out.connection_failures;
      out.last_error = opt.servers[server].to_string() + ": close: " + c.error();
      continue;
    }
    Clock::time_point now = Clock::now();
    if (now < shared.measure_from || now >= shared.window_end()) continue;
    if (h.err != jute::err::kOk) {
      ++out.error_replies;
      ++out.error_codes[h.err];
      continue;
    }
    ++out.ok;
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - t0).count();
    out.latency_us.push_back(static_cast<uint32_t>(std::min<int64_t>(us, UINT32_MAX)));
    if (opt.timeline) out.done_unix_us.push_back(unix_us_now());
  }
}

}  // namespace zkraft::tools
