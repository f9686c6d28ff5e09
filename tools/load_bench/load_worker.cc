#include "tools/load_bench/load_worker.h"

#include <random>
#include <thread>

#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/opcodes.h"

namespace zkraft::tools {

namespace {

struct Outstanding {
  int32_t xid;
  Clock::time_point sent;
  bool write;
  std::string created;  // mixed creates: the name, kept for a later delete once the reply is OK
};

// Creates the worker's node if it is missing. False only on a broken connection.
bool ensure_node(ZkConnection& c, const std::string& path, const std::string& data) {
  jute::ReplyHeader h;
  if (!c.send_create(1, path, data, jute::create_mode::kPersistent)) return false;
  return c.read_reply(h);  // kOk or kNodeExists both leave the node there
}

bool needs_own_node(LoadOp op) {
  return op == LoadOp::kSet || op == LoadOp::kGet || op == LoadOp::kExists || op == LoadOp::kMixed;
}

}  // namespace

int64_t unix_us_now() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Clock::time_point LoadShared::window_end() const {
  int64_t ns = exhausted_at_ns.load(std::memory_order_relaxed);
  if (ns == 0) return measure_until;
  return std::min(measure_until, Clock::time_point(std::chrono::nanoseconds(ns)));
}

std::string worker_node(const LoadOptions& opt, int index) {
  return opt.root + "/n" + std::to_string(index);
}

std::string list_node(const LoadOptions& opt) { return opt.root + "/list"; }

std::string createseq_parent(const LoadOptions& opt, int index, uint64_t nth) {
  if (opt.parents <= 0) return opt.root;
  uint64_t slot = nth * static_cast<uint64_t>(opt.sessions) + static_cast<uint64_t>(index);
  return opt.root + "/g" + std::to_string(slot % static_cast<uint64_t>(opt.parents));
}

void run_worker(int index, const LoadOptions& opt, LoadShared& shared, WorkerResult& out) {
  const std::string node = worker_node(opt, index);
  const std::string name_prefix = opt.root + "/p-" + opt.run_tag + "-" + std::to_string(index) + "-";
  const std::string list = list_node(opt);
  const std::string data(static_cast<size_t>(opt.data_size), 'x');
  std::mt19937 rng(static_cast<uint32_t>(index) * 7919u + 17u);
  std::uniform_int_distribution<int> draw(0, std::max(0, opt.mix.total() - 1));
  size_t server = static_cast<size_t>(index) % opt.servers.size();
  bool node_ready = !needs_own_node(opt.op);
  uint64_t created = 0;
  int32_t next_xid = 2;
  ZkConnection conn;
  conn.set_pipelined(true);

  auto done = [&] { return Clock::now() >= shared.window_end(); };
  auto budget_left = [&] {
    return opt.max_ops == 0 || shared.issued.fetch_add(1) < opt.max_ops;
  };

  while (!done()) {
    if (!conn.open(opt.servers[server], opt.session_timeout_ms, opt.io_timeout_ms) ||
        (!node_ready && !ensure_node(conn, node, data))) {
      ++out.connection_failures;
      out.last_error = opt.servers[server].to_string() + ": " + conn.error();
      server = (server + 1) % opt.servers.size();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    node_ready = true;

    std::deque<Outstanding> pending;
    bool broken = false;
    bool budget = true;
    auto send_one = [&]() -> bool {
      if (!budget || done() || !(budget = budget_left())) return true;
      LoadOp op = opt.op == LoadOp::kMixed ? pick(opt.mix, draw(rng)) : opt.op;
      if (op == LoadOp::kDelete && out.existing.empty()) {
        if (opt.op == LoadOp::kDelete) {
          // Out of nodes: the window ends now for every worker.
          int64_t zero = 0;
          shared.exhausted_at_ns.compare_exchange_strong(
              zero, std::chrono::duration_cast<std::chrono::nanoseconds>(
                        Clock::now().time_since_epoch())
                        .count());
          budget = false;
          return true;
        }
        op = LoadOp::kCreate;  // mixed: nothing of ours to delete yet
      }
      int32_t xid = next_xid++;
      if (next_xid <= 1) next_xid = 2;
      Outstanding o{xid, {}, true, {}};
      bool sent;
      switch (op) {
        case LoadOp::kCreate: {
          std::string name = name_prefix + std::to_string(created++);
          sent = conn.send_create(xid, name, data, jute::create_mode::kPersistent);
          if (opt.op == LoadOp::kMixed) o.created = std::move(name);
          break;
        }
        case LoadOp::kCreateSeq:
          sent = conn.send_create(xid, createseq_parent(opt, index, created++) + "/c-", data,
                                  jute::create_mode::kPersistentSequential);
          break;
        case LoadOp::kGet:
          o.write = false;
          sent = conn.send_get_data(xid, node);
          break;
        case LoadOp::kExists:
          o.write = false;
          sent = conn.send_exists(xid, node);
          break;
        case LoadOp::kList:
          o.write = false;
          sent = conn.send_get_children(xid, list);
          break;
        case LoadOp::kDelete:
          sent = conn.send_delete(xid, out.existing.front());
          out.existing.pop_front();
          break;
        default:
          sent = conn.send_set_data(xid, node, data);
          break;
      }
      o.sent = Clock::now();
      if (sent) pending.push_back(std::move(o));
      return sent;
    };

    for (int i = 0; i < opt.inflight && !broken; ++i) broken = !send_one();
    while (!broken && !pending.empty()) {
      jute::ReplyHeader h;
      if (!conn.read_reply(h)) {
        broken = true;
        break;
      }
      Clock::time_point now = Clock::now();
      Outstanding o = std::move(pending.front());
      pending.pop_front();
      if (h.xid != o.xid) {
        out.last_error = "reply xid " + std::to_string(h.xid) + " != " + std::to_string(o.xid);
        broken = true;
        break;
      }
      bool in_window = now >= shared.measure_from && now < shared.window_end();
      if (h.err == jute::err::kOk) {
        if (in_window) {
          ++out.ok;
          auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - o.sent).count();
          out.latency_us.push_back(static_cast<uint32_t>(std::min<int64_t>(us, UINT32_MAX)));
          if (opt.timeline) out.done_unix_us.push_back(unix_us_now());
        }
        if (opt.failover && o.write) out.write_success_unix_us.push_back(unix_us_now());
        if (!o.created.empty()) out.existing.push_back(std::move(o.created));
      } else if (in_window) {
        ++out.error_replies;
        ++out.error_codes[h.err];
      }
      broken = !send_one();
    }
    if (broken) {
      ++out.connection_failures;
      if (!conn.error().empty()) out.last_error = opt.servers[server].to_string() + ": " + conn.error();
      conn.close();
      server = (server + 1) % opt.servers.size();
      continue;
    }
    break;  // window over (or op budget spent) and nothing outstanding
  }
  conn.close_session();
}

}  // namespace zkraft::tools
