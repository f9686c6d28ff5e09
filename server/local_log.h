#pragma once
// A one-node ReplicatedLog: an entry is committed once it is fsynced to the local LevelDB log
// (group commit on the storage thread). The standalone server's log.

#include <utility>  // before Boost 1.74 Asio, whose awaitable.hpp uses std::exchange without it
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "consensus/group_commit_log.h"
#include "server/replicated_log.h"

namespace zkraft::server {

class LocalLog : public ReplicatedLog {
 public:
  // Opens (and recovers) the log in `dir`; nullptr with *error set on failure.
  static std::unique_ptr<LocalLog> open(boost::asio::io_context& io, const std::string& dir,
                                        uint64_t server_id, bool fsync, std::string* error);
  ~LocalLog() override;

  bool start(Callbacks callbacks, std::string* error) override;
  void stop() override;
  bool propose(std::string data) override;
  bool read_index(uint64_t context) override;
  bool is_leader() const override { return true; }
  uint64_t leader() const override { return server_id_; }
  uint64_t self_id() const override { return server_id_; }
  void send(uint64_t to, std::string payload) override {}
  ReplicationStatus replication_status() const override;
  uint64_t fsync_count() const override { return log_->stats().fsyncs; }

 private:
  LocalLog(boost::asio::io_context& io, std::unique_ptr<consensus::GroupCommitLog> log,
           uint64_t server_id);
  void flush();

  boost::asio::io_context& io_;
  std::unique_ptr<consensus::GroupCommitLog> log_;
  uint64_t server_id_;
  Callbacks cb_;
  uint64_t next_index_ = 1;
  uint64_t committed_ = 0;
  std::vector<consensus::Entry> batch_;  // proposals of this io-loop turn, submitted together
  bool flush_posted_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace zkraft::server
