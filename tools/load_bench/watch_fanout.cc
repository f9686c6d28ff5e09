#include "tools/load_bench/watch_fanout.h"

#include <poll.h>

#include <memory>
#include <thread>

#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/opcodes.h"
#include "tools/load_bench/load_setup.h"

namespace zkraft::tools {

namespace {

struct Sessions {
  std::vector<std::unique_ptr<ZkConnection>> watchers;
  ZkConnection writer;
};

bool open_all(const LoadOptions& opt, Sessions& s, std::string& why) {
  s.watchers.clear();
  for (int i = 0; i < opt.sessions; ++i) {
    auto c = std::make_unique<ZkConnection>();
    const HostPort& hp = opt.servers[static_cast<size_t>(i) % opt.servers.size()];
    if (!c->open(hp, opt.session_timeout_ms, opt.io_timeout_ms)) {
      why = hp.to_string() + ": " + c->error();
      return false;
    }
    s.watchers.push_back(std::move(c));
  }
  const HostPort& hp = opt.servers[static_cast<size_t>(opt.sessions) % opt.servers.size()];
  if (!s.writer.open(hp, opt.session_timeout_ms, opt.io_timeout_ms)) {
    why = "writer " + hp.to_string() + ": " + s.writer.error();
    return false;
  }
  return true;
}

// Sets every watch; true once all replies are in (the watch is registered when its reply is sent).
bool arm(Sessions& s, const std::string& node, int32_t xid, std::string& why) {
  for (auto& c : s.watchers) {
    if (!c->send_get_data(xid, node, true)) return why = c->error(), false;
  }
  for (auto& c : s.watchers) {
    jute::ReplyHeader h;
    if (!c->read_reply(h)) return why = c->error(), false;
    if (h.xid != xid || h.err != jute::err::kOk) {
      why = "watch getData: xid " + std::to_string(h.xid) + " err " + std::to_string(h.err);
      return false;
    }
  }
  return true;
}

// Waits for one notification on each watcher and for the writer's reply. Returns the time the
// last notification was read, or nullopt (why set).
std::optional<Clock::time_point> collect(Sessions& s, int32_t write_xid, int timeout_ms,
                                         std::string& why) {
  const size_t n = s.watchers.size();
  std::vector<bool> got(n, false);
  size_t remaining = n;
  bool write_done = false;
  Clock::time_point last{};
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<pollfd> fds;
  std::vector<size_t> who;  // index into watchers, n = the writer
  while (remaining > 0 || !write_done) {
    fds.clear();
    who.clear();
    for (size_t i = 0; i < n; ++i) {
      if (!got[i]) fds.push_back({s.watchers[i]->fd(), POLLIN, 0}), who.push_back(i);
    }
    if (!write_done) fds.push_back({s.writer.fd(), POLLIN, 0}), who.push_back(n);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return why = "round timed out", std::nullopt;
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (rc < 0) return why = "poll failed", std::nullopt;
    for (size_t j = 0; j < fds.size(); ++j) {
      if (fds[j].revents == 0) continue;
      jute::ReplyHeader h;
      if (who[j] == n) {
        if (!s.writer.read_reply(h)) return why = "writer: " + s.writer.error(), std::nullopt;
        if (h.xid != write_xid || h.err != jute::err::kOk) {
          return why = "setData err " + std::to_string(h.err), std::nullopt;
        }
        write_done = true;
        continue;
      }
      ZkConnection& c = *s.watchers[who[j]];
      if (!c.read_message(h)) return why = "watcher: " + c.error(), std::nullopt;
      if (h.xid != jute::xid::kNotification) continue;  // not expected; skipped
      got[who[j]] = true;
      --remaining;
      last = Clock::now();
    }
  }
  return last;
}

}  // namespace

void run_watch_fanout(const LoadOptions& opt, LoadShared& shared, WorkerResult& out) {
  const std::string node = watched_node(opt);
  const std::string data(static_cast<size_t>(opt.data_size), 'x');
  Sessions s;
  bool open = false;
  int32_t xid = 2;
  std::string why;
  while (Clock::now() < shared.window_end()) {
    if (!open) {
      if (!open_all(opt, s, why)) {
        ++out.connection_failures;
        out.last_error = why;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      open = true;
    }
    int32_t watch_xid = xid++;
    int32_t write_xid = xid++;
    std::optional<Clock::time_point> last;
    Clock::time_point t0;
    if (arm(s, node, watch_xid, why)) {
      t0 = Clock::now();
      if (s.writer.send_set_data(write_xid, node, data)) {
        last = collect(s, write_xid, opt.io_timeout_ms, why);
      } else {
        why = s.writer.error();
      }
    }
    if (!last) {
      ++out.connection_failures;
      out.last_error = why;
      open = false;
      continue;
    }
    if (t0 < shared.measure_from || *last >= shared.window_end()) continue;
    ++out.ok;
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(*last - t0).count();
    out.latency_us.push_back(static_cast<uint32_t>(std::min<int64_t>(us, UINT32_MAX)));
    if (opt.timeline) out.done_unix_us.push_back(unix_us_now());
  }
  for (auto& c : s.watchers) c->close_session();
  s.writer.close_session();
}

}  // namespace zkraft::tools
