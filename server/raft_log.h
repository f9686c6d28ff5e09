#pragma once
// The ensemble's ReplicatedLog: a consensus::RaftNode (Raft core, LevelDB log with group commit,
// peer transport) adapted to what the ZooKeeper front end needs. Runs on the server's io thread.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "consensus/raft_node.h"
#include "server/config.h"
#include "server/replicated_log.h"

namespace zkraft::server {

class RaftLog : public ReplicatedLog, public consensus::RaftApplication {
 public:
  // Builds the Raft options from the ensemble config (server.N lines, myid); the log lives in
  // <dataDir>/raft. nullptr with *error if the config has no entry for this server.
  static std::unique_ptr<RaftLog> create(boost::asio::io_context& io, const Config& config,
                                         std::string* error);
  ~RaftLog() override;

  bool start(Callbacks callbacks, std::string* error) override;
  void stop() override;
  bool propose(std::string data) override;
  bool read_index(uint64_t context) override;
  bool is_leader() const override { return node_->is_leader(); }
  uint64_t leader() const override { return node_->leader(); }
  uint64_t self_id() const override { return node_->id(); }
  void send(uint64_t to, std::string payload) override;
  ReplicationStatus replication_status() const override;
  uint64_t fsync_count() const override { return node_->fsync_count(); }
  MembershipView membership() const override;
  void add_peer(uint64_t id, const std::string& host, uint16_t port) override;
  bool change_membership(MembershipChange change, uint64_t id) override;

 private:
  RaftLog(boost::asio::io_context& io, consensus::RaftNodeOptions options);

  // consensus::RaftApplication
  void apply(const consensus::Entry& e) override;
  std::string take_snapshot() override;
  void restore_snapshot(const consensus::SnapshotMeta& meta, std::string_view data) override;
  void on_leader_change(consensus::NodeId leader, consensus::Term term, bool self) override;
  void on_read_state(uint64_t context, consensus::Index index) override;
  void on_app_message(consensus::NodeId from, std::string payload) override;

  std::unique_ptr<consensus::RaftNode> node_;
  Callbacks cb_;
  bool observer_ = false;
};

}  // namespace zkraft::server
