#pragma once
// ReadExecutor: answers the requests a server serves from its own tree (reads, ping, watch
// management, whoAmI, SetWatches catch-up) and registers watches at that moment. It runs when a
// request reaches the head of its session's queue, so the tree it sees includes every earlier
// write of the same session. No I/O: events it owes a client (SetWatches catch-up) go to the
// EventSink before the reply is returned, so they reach the client first.

#include <cstdint>
#include <string>
#include <vector>

#include "jute/data.h"
#include "jute/request.h"
#include "server/zk_state_machine.h"
#include "session/watch_registry.h"

namespace zkraft::server {

// Where watch events for one watcher (a connection) go.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void send_event(uint64_t watcher, int32_t type, const std::string& path, int64_t zxid) = 0;
};

struct ReadCaller {
  uint64_t watcher = 0;     // the connection: watches are registered for it
  int64_t session_id = 0;
  const std::vector<jute::Id>* auth = nullptr;
};

struct ReadResult {
  std::string reply;  // the framed reply
  bool close_after = false;
};

class ReadExecutor {
 public:
  ReadExecutor(const ZkStateMachine& sm, session::WatchRegistry& watches, EventSink& events)
      : sm_(sm), watches_(watches), events_(events) {}

  ReadResult execute(const ReadCaller& caller, int32_t xid, int32_t op, const jute::RequestBody& body);

 private:
  ReadResult set_watches(const ReadCaller& caller, int32_t xid, int32_t op, const jute::RequestBody& body);
  ReadResult multi_read(const ReadCaller& caller, const jute::ReplyHeader& h, const jute::MultiRequest& r);

  const ZkStateMachine& sm_;
  session::WatchRegistry& watches_;
  EventSink& events_;
};

}  // namespace zkraft::server
