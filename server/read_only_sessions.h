#pragma once
// ReadOnlySessions: the sessions a server in read-only mode creates for read-only clients. They
// are local to this server, never replicated (the server has no quorum to replicate them to):
// ZooKeeper's ReadOnlyZooKeeperServer keeps them in a local session tracker, and they vanish
// when it shuts down. A client may reattach to its session on this server while the session
// lives: while it has a connection, and for its timeout after the connection was last heard.
// All of them are dropped when the server is back in contact with a quorum.
//
// Invariant: ids never collide with replicated sessions (they come from the same generator, and
// the caller skips ids the replicated state knows).

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace zkraft::server {

class ReadOnlySessions {
 public:
  void create(int64_t id, std::string password, int32_t timeout_ms, int64_t now_ms) {
    sessions_[id] = Session{std::move(password), timeout_ms, now_ms};
  }
  bool contains(int64_t id) const { return sessions_.count(id) != 0; }
  bool valid(int64_t id, const std::string& password) const {
    auto it = sessions_.find(id);
    return it != sessions_.end() && it->second.password == password;
  }
  void heard(int64_t id, int64_t now_ms) {
    auto it = sessions_.find(id);
    if (it != sessions_.end()) it->second.last_heard_ms = now_ms;
  }
  void remove(int64_t id) { sessions_.erase(id); }
  // Forgets the sessions not heard from for longer than their timeout.
  void expire(int64_t now_ms) {
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (now_ms - it->second.last_heard_ms > it->second.timeout_ms) {
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  void clear() { sessions_.clear(); }
  size_t size() const { return sessions_.size(); }

 private:
  struct Session {
    std::string password;
    int32_t timeout_ms;
    int64_t last_heard_ms;  // monotonic
  };
  std::unordered_map<int64_t, Session> sessions_;
};

}  // namespace zkraft::server
