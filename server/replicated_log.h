#pragma once
// What the ZooKeeper front end needs from the log beneath it. The standalone server uses a
// one-node log (LocalLog: durable = committed); an ensemble uses Raft (RaftLog) behind the same
// interface. Every callback runs on the server's io thread.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace zkraft::server {

// Cluster figures for srvr/mntr (ZooKeeper's leader-only keys).
struct ReplicationStatus {
  std::string mode = "standalone";  // standalone | leader | follower | observer
  uint64_t leader_id = 0;
  int64_t learners = 0;             // zk_learners: followers + observers
  int64_t synced_followers = 0;     // zk_synced_followers
  int64_t synced_observers = 0;     // zk_synced_non_voting_followers
  int64_t quorum_size = 1;
  uint64_t term = 0;
  uint64_t commit_index = 0;
};

struct MembershipView {
  std::vector<uint64_t> voters;    // sorted
  std::vector<uint64_t> learners;  // sorted
};

enum class MembershipChange { kAddLearner, kPromote, kRemove };

class ReplicatedLog {
 public:
  struct Callbacks {
    // Each committed entry, once, in index order. Empty data: a log no-op (advances the zxid).
    std::function<void(uint64_t index, std::string_view data)> apply;
    // The application state as of the last applied entry, and its inverse.
    std::function<std::string()> take_snapshot;
    std::function<void(uint64_t index, std::string_view data)> restore_snapshot;
    // The leader changed (0: none known now).
    std::function<void(uint64_t leader, bool self)> leader_changed;
    // A read point for read_index(context): answer once applied >= index.
    std::function<void(uint64_t context, uint64_t index)> read_ready;
    // A payload another server sent with send().
    std::function<void(uint64_t from, std::string payload)> message;
  };

  virtual ~ReplicatedLog() = default;
  // Recovers what is durable (snapshot and log, replayed through the callbacks) and starts.
  virtual bool start(Callbacks callbacks, std::string* error) = 0;
  virtual void stop() = 0;
  // Appends an entry if this server leads. False otherwise: the caller forwards to leader().
  virtual bool propose(std::string data) = 0;
  // Asks for a linearizable read point; the answer arrives through read_ready. False if no
  // leader is known.
  virtual bool read_index(uint64_t context) = 0;
  virtual bool is_leader() const = 0;
  virtual uint64_t leader() const = 0;
  virtual uint64_t self_id() const = 0;
  // At-most-once message to another server of the ensemble.
  virtual void send(uint64_t to, std::string payload) = 0;
  virtual ReplicationStatus replication_status() const = 0;
  virtual uint64_t fsync_count() const = 0;
  // Membership in effect, and the leader's way to change it one server at a time.
  virtual MembershipView membership() const = 0;
  virtual void add_peer(uint64_t id, const std::string& host, uint16_t port) = 0;
  // False if this server cannot make the change now (not leader, a change is pending).
  virtual bool change_membership(MembershipChange change, uint64_t id) = 0;
};

}  // namespace zkraft::server
