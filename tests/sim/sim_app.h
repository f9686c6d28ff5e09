#pragma once
// The simulation's replicated state machine, as a RaftApplication: a running hash of the kNormal
// entries applied (so two nodes agree at an index exactly when they applied the same entries
// there) and the data of the non-empty ones (for scenario assertions).
//
// Its snapshot is the hash, padded so that it takes several chunks to send. Snapshot requests
// are answered at once through RaftApplication's default (take_snapshot) or, with a defer hook,
// later: the state is captured when asked and handed back after a simulated delay, as a state
// machine on its own thread would. When the storage offers a snapshot file and `files` is set,
// the snapshot is written into that storage's file instead and only the file is answered, as
// the server's forked child does.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "consensus/raft_application.h"
#include "consensus/ready.h"
#include "tests/sim/safety_checker.h"
#include "tests/sim/sim_storage.h"

namespace zkraft::sim {

class SimApp : public consensus::RaftApplication {
 public:
  // Runs a task after a simulated delay (unset: snapshot requests are answered at once).
  using Defer = std::function<void(std::function<void()>)>;

  static std::string encode(uint64_t hash) {
    std::string out = std::to_string(hash) + ":";
    out.resize(3000, '.');
    return out;
  }
  static uint64_t decode(std::string_view s) {
    return std::stoull(std::string(s.substr(0, s.find(':'))));
  }

  // A restart: the state is rebuilt from the stored snapshot and the log (applied_data is a
  // record of what was ever applied and is kept).
  void reset() {
    hash = 0;
    read_states.clear();
  }

  void apply(const consensus::Entry& e) override {
    hash ^= e.index * 0x9E3779B97F4A7C15ull;
    hash = hash_bytes(e.data, hash ^ e.term);
    if (!e.data.empty()) applied_data.push_back(e.data);
  }
  std::string take_snapshot() override { return encode(hash); }
  void request_snapshot(consensus::Index index, consensus::SnapshotReply reply) override {
    if (!defer) {
      RaftApplication::request_snapshot(index, std::move(reply));
      return;
    }
    defer([index, data = encode(hash), reply = std::move(reply)] { reply(index, data); });
  }
  void request_snapshot_file(consensus::Index index, const consensus::SnapshotFileTarget& target,
                             consensus::SnapshotReply reply, consensus::SnapshotFileReply file_reply) override {
    if (files == nullptr) {
      RaftApplication::request_snapshot_file(index, target, std::move(reply), std::move(file_reply));
      return;
    }
    auto write = [storage = files, index, token = target.token, data = encode(hash),
                  file_reply = std::move(file_reply)]() mutable {
      consensus::SnapshotFileWritten written;
      written.token = token;
      written.size = data.size();  // the simulated disk keeps no checksum
      storage->write_file(token, std::move(data));
      file_reply(index, consensus::Status::ok(), written);
    };
    if (!defer) {
      write();
      return;
    }
    defer(std::move(write));
  }
  void restore_snapshot(const consensus::SnapshotMeta&, consensus::SnapshotBytes data) override {
    hash = decode(data->bytes());
  }
  void on_read_state(uint64_t context, consensus::Index index) override {
    read_states.push_back(consensus::ReadState{context, index});
  }

  Defer defer;
  SimStorage* files = nullptr;  // this node's disk, which the snapshot files are written to
  uint64_t hash = 0;
  std::vector<std::string> applied_data;
  std::vector<consensus::ReadState> read_states;
};

}  // namespace zkraft::sim
