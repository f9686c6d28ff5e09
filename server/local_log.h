#pragma once
// A one-node ReplicatedLog: an entry is committed once it is fsynced to the local LevelDB log
// (group commit on the storage thread). The standalone server's log; the ensemble replaces it with
// Raft behind the same interface.

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
                                        bool fsync, std::string* error);
  ~LocalLog() override;

  uint64_t recover(const ApplyFn& apply) override;
  void start(ApplyFn apply) override;
  bool propose(std::string data) override;
  void stop() override;
  uint64_t fsync_count() const override { return log_->stats().fsyncs; }

 private:
  LocalLog(boost::asio::io_context& io, std::unique_ptr<consensus::GroupCommitLog> log);
  void flush();

  boost::asio::io_context& io_;
  std::unique_ptr<consensus::GroupCommitLog> log_;
  ApplyFn apply_;
  uint64_t next_index_ = 1;
  std::vector<consensus::Entry> batch_;  // proposals of this io-loop turn, submitted together
  bool flush_posted_ = false;
  bool failed_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace zkraft::server
