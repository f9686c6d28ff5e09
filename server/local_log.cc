#include "server/local_log.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace zkraft::server {

std::unique_ptr<LocalLog> LocalLog::open(boost::asio::io_context& io, const std::string& dir,
                                         uint64_t server_id, bool fsync, std::string* error) {
  consensus::StorageOptions options;
  auto storage = consensus::LogStorage::open(dir, options, error);
  if (!storage) return nullptr;
  consensus::GroupCommitOptions gc;
  gc.sync = fsync;
  auto log = std::make_unique<consensus::GroupCommitLog>(std::move(storage), gc);
  return std::unique_ptr<LocalLog>(new LocalLog(io, std::move(log), server_id));
}

LocalLog::LocalLog(boost::asio::io_context& io, std::unique_ptr<consensus::GroupCommitLog> log,
                   uint64_t server_id)
    : io_(io), log_(std::move(log)), server_id_(server_id) {}

LocalLog::~LocalLog() { stop(); }

bool LocalLog::start(Callbacks callbacks, std::string* error) {
  cb_ = std::move(callbacks);
  // Everything in the log was fsynced before it was acknowledged: replay all of it.
  auto& storage = log_->storage();
  consensus::Index lo = storage.first_index(), hi = storage.last_index();
  for (consensus::Index i = lo; hi > 0 && i <= hi;) {
    std::vector<consensus::Entry> entries;
    auto st = storage.entries(i, hi + 1, 64 << 20, &entries);
    if (!st.is_ok() || entries.empty()) {
      *error = "cannot read log entry " + std::to_string(i) + ": " + st.to_string();
      return false;
    }
    for (const auto& e : entries) cb_.apply(e.index, e.data);
    i = entries.back().index + 1;
  }
  next_index_ = hi + 1;
  committed_ = hi;
  log_->start();
  if (cb_.leader_changed) cb_.leader_changed(server_id_, true);
  return true;
}

bool LocalLog::propose(std::string data) {
  consensus::Entry e;
  e.term = 1;
  e.index = next_index_++;
  e.data = std::move(data);
  batch_.push_back(std::move(e));
  if (!flush_posted_) {
    flush_posted_ = true;
    boost::asio::post(io_, [this, alive = alive_] {
      if (*alive) flush();
    });
  }
  return true;
}

bool LocalLog::read_index(uint64_t context) {
  // Alone, this server's proposals are the whole history: the read point is the last proposal.
  uint64_t index = next_index_ - 1;
  boost::asio::post(io_, [this, context, index, alive = alive_] {
    if (*alive && cb_.read_ready) cb_.read_ready(context, index);
  });
  return true;
}

void LocalLog::flush() {
  flush_posted_ = false;
  if (batch_.empty()) return;
  auto entries = std::make_shared<std::vector<consensus::Entry>>(std::move(batch_));
  batch_.clear();
  std::vector<consensus::Entry> copy = *entries;  // the storage thread consumes its own copy
  log_->submit(std::move(copy), std::nullopt,
               [this, entries, alive = alive_](consensus::Status st) {
                 // Storage thread: hop back to the io thread, where all server state lives.
                 boost::asio::post(io_, [this, entries, st, alive] {
                   if (!*alive) return;
                   if (!st.is_ok()) {
                     // An entry we cannot make durable must never be acknowledged; there is no
                     // safe way to go on serving writes.
                     spdlog::critical("log write failed: {}; stopping", st.to_string());
                     std::abort();
                   }
                   for (const auto& e : *entries) {
                     committed_ = e.index;
                     cb_.apply(e.index, e.data);
                   }
                 });
               });
}

ReplicationStatus LocalLog::replication_status() const {
  ReplicationStatus s;
  s.mode = "standalone";
  s.leader_id = server_id_;
  s.commit_index = committed_;
  return s;
}

void LocalLog::stop() {
  if (!*alive_) return;
  *alive_ = false;
  log_->stop();
}

}  // namespace zkraft::server
