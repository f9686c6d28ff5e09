#include "server/local_log.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace zkraft::server {

std::unique_ptr<LocalLog> LocalLog::open(boost::asio::io_context& io, const std::string& dir,
                                         bool fsync, std::string* error) {
  consensus::StorageOptions options;
  auto storage = consensus::LogStorage::open(dir, options, error);
  if (!storage) return nullptr;
  consensus::GroupCommitOptions gc;
  gc.sync = fsync;
  auto log = std::make_unique<consensus::GroupCommitLog>(std::move(storage), gc);
  return std::unique_ptr<LocalLog>(new LocalLog(io, std::move(log)));
}

LocalLog::LocalLog(boost::asio::io_context& io, std::unique_ptr<consensus::GroupCommitLog> log)
    : io_(io), log_(std::move(log)) {}

LocalLog::~LocalLog() { stop(); }

uint64_t LocalLog::recover(const ApplyFn& apply) {
  auto& storage = log_->storage();
  consensus::Index lo = storage.first_index(), hi = storage.last_index();
  for (consensus::Index i = lo; i <= hi && hi > 0;) {
    std::vector<consensus::Entry> entries;
    auto st = storage.entries(i, hi + 1, 64 << 20, &entries);
    if (!st.is_ok() || entries.empty()) {
      spdlog::critical("log recovery: cannot read entry {}: {}", i, st.to_string());
      std::abort();
    }
    for (const auto& e : entries) apply(e.index, e.data);
    i = entries.back().index + 1;
  }
  next_index_ = hi + 1;
  return hi;
}

void LocalLog::start(ApplyFn apply) {
  apply_ = std::move(apply);
  log_->start();
}

bool LocalLog::propose(std::string data) {
  if (failed_) return false;
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

void LocalLog::flush() {
  flush_posted_ = false;
  if (batch_.empty()) return;
  auto entries = std::make_shared<std::vector<consensus::Entry>>(std::move(batch_));
  batch_.clear();
  std::vector<consensus::Entry> copy = *entries;  // the storage keeps its own; we apply ours
  log_->submit(std::move(copy), std::nullopt,
               [this, entries, alive = alive_](consensus::Status st) {
                 // Storage thread: hop back to the io thread, where all server state lives.
                 boost::asio::post(io_, [this, entries, st, alive] {
                   if (!*alive) return;
                   if (!st.is_ok()) {
                     // An entry we cannot make durable must never be acknowledged; there is no
                     // safe way to continue serving writes.
                     spdlog::critical("log write failed: {}; stopping", st.to_string());
                     failed_ = true;
                     std::abort();
                   }
                   for (const auto& e : *entries) apply_(e.index, e.data);
                 });
               });
}

void LocalLog::stop() {
  if (!*alive_) return;
  *alive_ = false;
  log_->stop();
}

}  // namespace zkraft::server
