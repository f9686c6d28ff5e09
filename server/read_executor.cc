#include "server/read_executor.h"

#include "jute/constants.h"
#include "jute/errors.h"
#include "jute/opcodes.h"
#include "jute/reply.h"
#include "server/replies.h"

namespace zkraft::server {

namespace op = jute::op;
namespace err = jute::err;

ReadResult ReadExecutor::execute(const ReadCaller& c, int32_t xid, int32_t o,
                                 const jute::RequestBody& body) {
  const auto& tree = sm_.tree();
  const auto& auth = *c.auth;
  const int64_t zxid = sm_.last_zxid();
  const uint64_t watcher = c.watcher;
  jute::ReplyHeader h{xid, zxid, err::kOk};
  auto reply = [&](int32_t code, const auto& record) {
    h.err = code;
    return ReadResult{code == err::kOk ? jute::reply_frame(h, record) : reply_with_body(h)};
  };
  auto error = [&](int32_t code) {
    h.err = code;
    return ReadResult{reply_with_body(h)};
  };
  switch (o) {
    case op::kPing:
      return ReadResult{reply_with_body(jute::ReplyHeader{jute::xid::kPing, zxid, err::kOk})};
    case op::kExists: {
      const auto& r = std::get<jute::ExistsRequest>(body);
      jute::Stat stat;
      int32_t rc = tree.exists(r.path, auth, stat);
      // An exists watch is set whether or not the node exists (not on an ACL failure).
      if (r.watch && (rc == err::kOk || rc == err::kNoNode)) watches_.add_data_watch(r.path, watcher);
      return reply(rc, jute::ExistsResponse{stat});
    }
    case op::kGetData: {
      const auto& r = std::get<jute::GetDataRequest>(body);
      jute::GetDataResponse resp;
      int32_t rc = tree.get_data(r.path, auth, resp.data, resp.stat);
      if (r.watch && rc == err::kOk) watches_.add_data_watch(r.path, watcher);
      return reply(rc, resp);
    }
    case op::kGetChildren: {
      const auto& r = std::get<jute::GetChildrenRequest>(body);
      jute::GetChildrenResponse resp;
      int32_t rc = tree.get_children(r.path, auth, resp.children, nullptr);
      if (r.watch && rc == err::kOk) watches_.add_child_watch(r.path, watcher);
      return reply(rc, resp);
    }
    case op::kGetChildren2: {
      const auto& r = std::get<jute::GetChildren2Request>(body);
      jute::GetChildren2Response resp;
      int32_t rc = tree.get_children(r.path, auth, resp.children, &resp.stat);
      if (r.watch && rc == err::kOk) watches_.add_child_watch(r.path, watcher);
      return reply(rc, resp);
    }
    case op::kGetACL: {
      const auto& r = std::get<jute::GetACLRequest>(body);
      jute::GetACLResponse resp;
      int32_t rc = tree.get_acl(r.path, auth, resp.acl, resp.stat);
      return reply(rc, resp);
    }
    case op::kGetAllChildrenNumber: {
      const auto& r = std::get<jute::GetAllChildrenNumberRequest>(body);
      jute::GetAllChildrenNumberResponse resp;
      int32_t rc = tree.get_all_children_number(r.path, auth, resp.total_number);
      return reply(rc, resp);
    }
    case op::kGetEphemerals: {
      const auto& r = std::get<jute::GetEphemeralsRequest>(body);
      jute::GetEphemeralsResponse resp;
      resp.ephemerals = tree.ephemerals_of(c.session_id, r.prefix_path);
      return reply(err::kOk, resp);
    }
    case op::kMultiRead:
      return multi_read(c, h, std::get<jute::MultiRequest>(body));
    case op::kSetWatches:
    case op::kSetWatches2:
      return set_watches(c, xid, o, body);
    case op::kAddWatch: {
      const auto& r = std::get<jute::AddWatchRequest>(body);
      if (r.mode != jute::add_watch_mode::kPersistent &&
          r.mode != jute::add_watch_mode::kPersistentRecursive) {
        return error(err::kBadArguments);
      }
      watches_.add_persistent_watch(r.path, watcher, static_cast<jute::AddWatchMode>(r.mode));
      return reply(err::kOk, jute::ErrorResponse{0});
    }
    case op::kCheckWatches: {
      const auto& r = std::get<jute::CheckWatchesRequest>(body);
      return error(watches_.check(r.path, r.type, watcher));
    }
    case op::kRemoveWatches: {
      const auto& r = std::get<jute::RemoveWatchesRequest>(body);
      return error(watches_.remove(r.path, r.type, watcher));
    }
    case op::kWhoAmI: {
      jute::WhoAmIResponse resp;
      for (const auto& id : auth) {
        // ZooKeeper's digest provider reports the user name only.
        std::string user = id.scheme == "digest" ? id.id.substr(0, id.id.find(':')) : id.id;
        resp.client_info.push_back(jute::ClientInfo{id.scheme, std::move(user)});
      }
      return reply(err::kOk, resp);
    }
    case op::kSasl:
      // No SASL provider is configured (no JAAS server section). ZooKeeper 3.9.4 then has no
      // SaslServer on the connection: processSasl catches the NullPointerException, logs it and
      // answers OK with a null token, keeping the connection; the client's own SASL step fails.
      // Its reply header carries zxid 0, not the last zxid.
      return ReadResult{jute::reply_frame(jute::ReplyHeader{xid, 0, err::kOk},
                                          jute::SetSASLResponse{jute::Buffer::null()})};
    default:
      return error(err::kUnimplemented);
  }
}

ReadResult ReadExecutor::multi_read(const ReadCaller& c, const jute::ReplyHeader& header,
                                    const jute::MultiRequest& r) {
  jute::ReplyHeader h = header;
  if (!r.is_read_only()) {
    h.err = err::kMarshallingError;
    return ReadResult{reply_with_body(h)};
  }
  const auto& tree = sm_.tree();
  jute::MultiResponse resp;
  for (const auto& o : r.ops) {
    jute::MultiResult mr;
    if (auto* g = std::get_if<jute::GetDataRequest>(&o.body)) {
      jute::GetDataResponse d;
      int32_t rc = tree.get_data(g->path, *c.auth, d.data, d.stat);
      if (rc != err::kOk) {
        mr = jute::MultiResult::error(rc);
      } else {
        mr.type = op::kGetData, mr.body = std::move(d);
      }
    } else if (auto* gc = std::get_if<jute::GetChildrenRequest>(&o.body)) {
      jute::GetChildrenResponse ch;
      int32_t rc = tree.get_children(gc->path, *c.auth, ch.children, nullptr);
      if (rc != err::kOk) {
        mr = jute::MultiResult::error(rc);
      } else {
        mr.type = op::kGetChildren, mr.body = std::move(ch);
      }
    }
    resp.results.push_back(std::move(mr));
  }
  return ReadResult{jute::reply_frame(h, resp)};
}

ReadResult ReadExecutor::set_watches(const ReadCaller& c, int32_t xid, int32_t o,
                                     const jute::RequestBody& body) {
  const auto& tree = sm_.tree();
  const uint64_t watcher = c.watcher;
  int64_t rel = 0;
  const std::vector<std::string>*data = nullptr, *exist = nullptr, *child = nullptr,
  *persistent = nullptr, *recursive = nullptr;
  if (o == op::kSetWatches) {
    const auto& r = std::get<jute::SetWatches>(body);
    rel = r.relative_zxid, data = &r.data_watches, exist = &r.exist_watches,
    child = &r.child_watches;
  } else {
    const auto& r = std::get<jute::SetWatches2>(body);
    rel = r.relative_zxid, data = &r.data_watches, exist = &r.exist_watches,
    child = &r.child_watches, persistent = &r.persistent_watches,
    recursive = &r.persistent_recursive_watches;
  }
  // Changes the client missed while away fire now, before the SetWatches reply.
  const int64_t zxid = sm_.last_zxid();
  jute::Stat stat;
  for (const auto& path : *data) {
    if (!tree.stat_of(path, stat)) {
      events_.send_event(watcher, jute::event::kNodeDeleted, path, zxid);
    } else if (stat.mzxid > rel) {
      events_.send_event(watcher, jute::event::kNodeDataChanged, path, zxid);
    } else {
      watches_.add_data_watch(path, watcher);
    }
  }
  for (const auto& path : *exist) {
    if (tree.stat_of(path, stat)) {
      events_.send_event(watcher, jute::event::kNodeCreated, path, zxid);
    } else {
      watches_.add_data_watch(path, watcher);
    }
  }
  for (const auto& path : *child) {
    if (!tree.stat_of(path, stat)) {
      events_.send_event(watcher, jute::event::kNodeDeleted, path, zxid);
    } else if (stat.pzxid > rel) {
      events_.send_event(watcher, jute::event::kNodeChildrenChanged, path, zxid);
    } else {
      watches_.add_child_watch(path, watcher);
    }
  }
  if (persistent) {
    for (const auto& path : *persistent) {
      watches_.add_persistent_watch(path, watcher, jute::AddWatchMode::kPersistent);
    }
    for (const auto& path : *recursive) {
      watches_.add_persistent_watch(path, watcher, jute::AddWatchMode::kPersistentRecursive);
    }
  }
  return ReadResult{reply_with_body(jute::ReplyHeader{xid, zxid, err::kOk})};
}

}  // namespace zkraft::server
