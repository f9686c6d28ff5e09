#pragma once
// Test harness for RaftNode: N real nodes in one process, each with its own LevelDB directory
// under one temporary folder and a real TCP peer listener on 127.0.0.1 (ephemeral port), all
// driven by ONE io_context run on the test thread (so tests touch nodes without locks).
//
// RecordingApp is the application: it records every applied entry (index, data), so two nodes'
// states compare equal exactly when they applied the same log; its snapshot is that record.

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "consensus/raft_node.h"
#include "consensus/snapshot_file_writer.h"

namespace zkraft::consensus::testing {

class RecordingApp : public RaftApplication {
 public:
  using Record = std::vector<std::pair<Index, std::string>>;

  void apply(const Entry& e) override {
    check_not_reentered("apply");
    if (!applied.empty() && e.index <= applied.back().first) {
      ADD_FAILURE() << "entry " << e.index << " applied after " << applied.back().first;
    }
    applied.emplace_back(e.index, e.data);
  }

  std::string take_snapshot() override {
    ++snapshots_taken;
    std::string out;
    for (const auto& [index, data] : applied) {
      append_u64(out, index);
      append_u64(out, data.size());
      out += data;
    }
    return out;
  }

  // With write_snapshot_files, the snapshot goes into the storage's file (as the server's forked
  // child writes it) and only the file is answered.
  void request_snapshot_file(Index index, const SnapshotFileTarget& target, SnapshotReply reply,
                             SnapshotFileReply file_reply) override {
    if (!write_snapshot_files) {
      RaftApplication::request_snapshot_file(index, target, std::move(reply), std::move(file_reply));
      return;
    }
    SnapshotFileWriter writer;
    SnapshotFileWritten written;
    std::string bytes;
    int err = 0;
    if (append_snapshot_files && target.stored_index != 0) {
      // The record is a list of entries, so the entries applied since the stored snapshot,
      // appended to its file, are the snapshot at `index` (an incremental snapshot).
      for (const auto& [at, data] : applied) {
        if (at <= target.stored_index) continue;
        append_u64(bytes, at);
        append_u64(bytes, data.size());
        bytes += data;
      }
      err = writer.open_append(target);
      if (err == ESTALE) {  // the stored snapshot changed since the target was handed out
        ++snapshots_stale;
        file_reply(index, Status::error(Status::Code::kSnapshotOutOfDate, "stale"), written);
        return;
      }
      ++snapshots_appended;
    } else {
      bytes = take_snapshot();
      err = writer.open(target);
    }
    if (err == 0) err = writer.append(bytes);
    if (err == 0) err = writer.finish(&written);
    EXPECT_EQ(err, 0) << target.path << ": " << std::strerror(err);
    ++snapshots_written_to_files;
    file_reply(index, err == 0 ? Status::ok() : Status::io_error(std::strerror(err)), written);
  }

  void restore_snapshot(const SnapshotMeta& meta, SnapshotBytes bytes) override {
    const std::string_view data = bytes->bytes();
    ++snapshots_restored;
    restored_at.push_back(meta.index);
    applied.clear();
    size_t pos = 0;
    while (pos < data.size()) {
      if (data.size() - pos < 16) {
        ADD_FAILURE() << "truncated snapshot";
        return;
      }
      Index index = read_u64(data, pos);
      uint64_t len = read_u64(data, pos + 8);
      pos += 16;
      if (data.size() - pos < len) {
        ADD_FAILURE() << "truncated snapshot entry";
        return;
      }
      applied.emplace_back(index, std::string(data.substr(pos, len)));
      pos += len;
    }
    if (!applied.empty() && applied.back().first > meta.index) ADD_FAILURE() << "snapshot beyond its index";
  }

  void on_membership(const Membership& m) override { memberships.push_back(m); }

  void on_leader_change(NodeId leader, Term term, bool self) override {
    check_not_reentered("on_leader_change");
    leader_changes.push_back({leader, term, self});
  }

  void on_read_state(uint64_t context, Index index) override {
    check_not_reentered("on_read_state");
    read_states[context] = index;
  }

  // Set while the test is inside a RaftNode call (callbacks must not run then).
  bool in_node_call = false;
  void check_not_reentered(const char* what) {
    if (in_node_call) ADD_FAILURE() << what << " ran inside a RaftNode call";
  }

  void on_app_message(NodeId from, std::string payload) override {
    app_messages.emplace_back(from, payload);
    if (on_message) on_message(from, std::move(payload));
  }

  void on_fatal_error(const std::string& what) override {
    fatal_errors.push_back(what);
    if (!expect_fatal) ADD_FAILURE() << "fatal raft error: " << what;
  }

  // Data of the non-empty entries, in order (the leaders' no-ops left out).
  std::vector<std::string> data() const {
    std::vector<std::string> out;
    for (const auto& [i, d] : applied) {
      if (!d.empty()) out.push_back(d);
    }
    return out;
  }

  struct LeaderChange {
    NodeId leader;
    Term term;
    bool self;
  };

  Record applied;
  int snapshots_taken = 0;
  bool write_snapshot_files = false;
  bool append_snapshot_files = false;  // with write_snapshot_files: append when a snapshot is stored
  int snapshots_written_to_files = 0;
  int snapshots_appended = 0;
  int snapshots_stale = 0;
  int snapshots_restored = 0;
  std::vector<Index> restored_at;
  std::vector<Membership> memberships;
  std::vector<LeaderChange> leader_changes;
  std::map<uint64_t, Index> read_states;
  std::vector<std::pair<NodeId, std::string>> app_messages;
  std::function<void(NodeId, std::string)> on_message;
  std::vector<std::string> fatal_errors;
  bool expect_fatal = false;

 private:
  static void append_u64(std::string& out, uint64_t v) {
    char b[8];
    std::memcpy(b, &v, 8);
    out.append(b, 8);
  }
  static uint64_t read_u64(std::string_view s, size_t pos) {
    uint64_t v;
    std::memcpy(&v, s.data() + pos, 8);
    return v;
  }
};

class RaftNodeCluster {
 public:
  struct Member {
    std::unique_ptr<RecordingApp> app;
    std::unique_ptr<RaftNode> node;
    std::string dir;
  };

  // `base` supplies timing/snapshot options; id, dir, membership and peers are filled in here.
  explicit RaftNodeCluster(RaftNodeOptions base) : base_(std::move(base)), work_(io_.get_executor()) {
    std::random_device rd;
    root_ = std::filesystem::temp_directory_path() /
            ("zkraft-raftnode-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(root_);
  }

  ~RaftNodeCluster() {
    members_.clear();  // stops every node
    io_.poll();        // lets posted completions see their nodes are gone
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  boost::asio::io_context& io() { return io_; }
  // The directory under which each node has its own.
  const std::filesystem::path& root() const { return root_; }

  // Apps opened from now on write their snapshots into the storage's files themselves.
  bool apps_write_snapshot_files = false;
  bool apps_append_snapshot_files = false;

  // Opens and starts nodes `ids` (all voters of the bootstrap membership `bootstrap`).
  void start(const std::vector<NodeId>& ids, const Membership& bootstrap) {
    bootstrap_ = bootstrap;
    for (NodeId id : ids) open_node(id);
    for (NodeId id : ids) start_node(id);
  }

  // Opens node `id` on its directory (fresh or existing) and tells every other node its address.
  void open_node(NodeId id) {
    const std::string error = try_open_node(id);
    ASSERT_EQ(error, "");
  }

  // open_node, but returns open()'s error ("" once opened) instead of failing the test.
  std::string try_open_node(NodeId id) {
    Member& m = members_[id];
    m.dir = (root_ / ("node" + std::to_string(id))).string();
    m.app = std::make_unique<RecordingApp>();
    m.app->write_snapshot_files = apps_write_snapshot_files;
    m.app->append_snapshot_files = apps_append_snapshot_files;
    RaftNodeOptions o = base_;
    o.id = id;
    o.dir = m.dir;
    o.initial_membership = bootstrap_;
    o.peers.clear();
    if (envs_.count(id)) o.storage.env = envs_[id];
    m.node = std::make_unique<RaftNode>(io_, o, *m.app);
    std::string error;
    if (!m.node->open(&error)) {
      members_.erase(id);
      return error.empty() ? "open() failed without a reason" : error;
    }
    ports_[id] = m.node->peer_port();
    return "";
  }

  void start_node(NodeId id) {
    RaftNode& n = node(id);
    for (const auto& [other, port] : ports_) {
      if (other == id) continue;
      n.add_peer(other, PeerAddress{"127.0.0.1", port});
      if (members_.count(other) && members_[other].node) {
        members_[other].node->add_peer(id, PeerAddress{"127.0.0.1", ports_[id]});
      }
    }
    n.start();
  }

  void restart(NodeId id) {
    open_node(id);
    start_node(id);
  }

  // Destroys the node (stopping it); its directory stays.
  void kill(NodeId id) { members_.erase(id); }

  void wipe(NodeId id) {
    kill(id);
    std::filesystem::remove_all(root_ / ("node" + std::to_string(id)));
  }

  // Node `id` opens its LevelDB through `env` from its next open on (not owned).
  void set_env(NodeId id, leveldb::Env* env) { envs_[id] = env; }

  bool alive(NodeId id) const { return members_.count(id) && members_.at(id).node; }
  RaftNode& node(NodeId id) { return *members_.at(id).node; }
  RecordingApp& app(NodeId id) { return *members_.at(id).app; }
  std::vector<NodeId> ids() const {
    std::vector<NodeId> out;
    for (const auto& [id, m] : members_) out.push_back(id);
    return out;
  }

  // Runs the io_context until pred() holds or `timeout` passes; returns pred().
  bool run_until(const std::function<bool()>& pred,
                 std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      io_.run_one_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // The single leader among live nodes that all live nodes agree on, or 0.
  NodeId agreed_leader() {
    NodeId lead = 0;
    for (auto& [id, m] : members_) {
      if (!m.node) continue;
      if (m.node->is_leader()) {
        if (lead != 0) return 0;
        lead = id;
      }
    }
    if (lead == 0) return 0;
    for (auto& [id, m] : members_) {
      if (m.node && m.node->leader() != lead) return 0;
    }
    return lead;
  }

  NodeId wait_for_leader(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    NodeId lead = 0;
    run_until([&] { return (lead = agreed_leader()) != 0; }, timeout);
    return lead;
  }

  // Waits until every live node applied every index any live node has in its log (so every
  // proposal made so far is committed or replaced) and all applied records are equal.
  bool wait_converged(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return run_until([&] { return converged(); }, timeout);
  }

  bool converged() {
    Index max_last = 0;
    for (auto& [id, m] : members_) {
      if (m.node) max_last = std::max(max_last, m.node->status().last_index);
    }
    const RecordingApp::Record* first = nullptr;
    for (auto& [id, m] : members_) {
      if (!m.node) continue;
      if (m.node->applied_index() < max_last) return false;
      if (first && m.app->applied != *first) return false;
      first = &m.app->applied;
    }
    return true;
  }

 private:
  RaftNodeOptions base_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::filesystem::path root_;
  Membership bootstrap_;
  std::map<NodeId, Member> members_;
  std::map<NodeId, uint16_t> ports_;
  std::map<NodeId, leveldb::Env*> envs_;
};

// Fast timing for tests: 10 ms ticks, election timeout 300-600 ms (shorter ones let a loaded CI
// machine's scheduling stalls depose leaders mid-test, losing uncommitted proposals).
inline RaftNodeOptions fast_options() {
  RaftNodeOptions o;
  o.tick_ms = 10;
  o.election_ticks = 30;
  o.heartbeat_ticks = 2;
  o.cluster_name = "raft-node-test";
  return o;
}

}  // namespace zkraft::consensus::testing
