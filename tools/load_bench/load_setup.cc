#include "tools/load_bench/load_setup.h"

#include <deque>

#include "jute/constants.h"
#include "jute/errors.h"

namespace zkraft::tools {

std::string watched_node(const LoadOptions& opt) { return opt.root + "/watched"; }

bool create_all(ZkConnection& c, const std::vector<std::string>& names, const std::string& data,
                int window, std::string& why) {
  size_t next = 0;
  int32_t xid = 2;
  std::deque<int32_t> pending;
  while (next < names.size() || !pending.empty()) {
    while (next < names.size() && static_cast<int>(pending.size()) < window) {
      if (!c.send_create(xid, names[next], data, jute::create_mode::kPersistent)) {
        why = c.error();
        return false;
      }
      pending.push_back(xid++);
      ++next;
    }
    jute::ReplyHeader h;
    if (!c.read_reply(h)) {
      why = c.error();
      return false;
    }
    if (h.xid != pending.front()) {
      why = "reply xid " + std::to_string(h.xid) + " != " + std::to_string(pending.front());
      return false;
    }
    pending.pop_front();
    if (h.err != jute::err::kOk && h.err != jute::err::kNodeExists) {
      why = "create failed: err " + std::to_string(h.err);
      return false;
    }
  }
  return true;
}

namespace {

// Opens a session on the first server that answers, starting at `first`.
bool open_any(const LoadOptions& opt, size_t first, ZkConnection& c, std::string& why) {
  for (size_t i = 0; i < opt.servers.size(); ++i) {
    const HostPort& s = opt.servers[(first + i) % opt.servers.size()];
    if (c.open(s, opt.session_timeout_ms, opt.io_timeout_ms)) return true;
    why = s.to_string() + ": " + c.error();
  }
  return false;
}

}  // namespace

bool prepare_run(const LoadOptions& opt, std::string& why) {
  ZkConnection c;
  if (!open_any(opt, 0, c, why)) return false;
  std::vector<std::string> names{opt.root};
  if (!create_all(c, names, "", 1, why)) return false;
  names.clear();
  if (opt.op == LoadOp::kList || opt.op == LoadOp::kMixed) {
    const std::string list = list_node(opt);
    if (!create_all(c, {list}, "", 1, why)) return false;
    for (int i = 0; i < opt.list_children; ++i) names.push_back(list + "/c" + std::to_string(i));
  }
  if (opt.op == LoadOp::kWatch) names.push_back(watched_node(opt));
  if (opt.op == LoadOp::kCreateSeq) {
    for (int j = 0; j < opt.parents; ++j) names.push_back(opt.root + "/g" + std::to_string(j));
  }
  std::string data(static_cast<size_t>(opt.data_size), 'x');
  if (!create_all(c, names, data, 64, why)) return false;
  c.close_session();
  return true;
}

bool setup_worker(int index, const LoadOptions& opt, WorkerResult& out) {
  std::vector<std::string> names;
  std::string data(static_cast<size_t>(opt.data_size), 'x');
  if (opt.op == LoadOp::kSet || opt.op == LoadOp::kGet || opt.op == LoadOp::kExists ||
      opt.op == LoadOp::kMixed) {
    names.push_back(worker_node(opt, index));
  }
  // Mixed deletes take these first, then what the run itself created.
  int pool = opt.op == LoadOp::kDelete ? opt.delete_pool : opt.op == LoadOp::kMixed ? 20 : 0;
  const std::string prefix = opt.root + "/d-" + opt.run_tag + "-" + std::to_string(index) + "-";
  for (int j = 0; j < pool; ++j) {
    names.push_back(prefix + std::to_string(j));
    out.existing.push_back(names.back());
  }
  if (names.empty()) return true;
  ZkConnection c;
  std::string why;
  if (!open_any(opt, static_cast<size_t>(index), c, why) || !create_all(c, names, data, 64, why)) {
    out.last_error = "setup of session " + std::to_string(index) + ": " + why;
    return false;
  }
  c.close_session();
  return true;
}

}  // namespace zkraft::tools
