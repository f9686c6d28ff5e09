#pragma once
// FakeReplicatedLog: an in-memory ReplicatedLog for the server's unit tests, so the parts above
// the consensus seam (RequestPipeline, WriteRouter, LeaderDuties) run without Raft, threads or
// sockets. Nothing happens on its own: the test decides when entries commit, when read points
// arrive and when leadership changes, and every listener call is made from inside one of those
// test-called methods (as the real log delivers them on the state thread, never from inside
// propose() or read_index()).
//
//  - propose() appends to proposed() and to the log; replicate() appends an entry some other
//    server proposed (what a follower receives). commit_next()/commit_all() deliver the log in
//    order through on_apply with consecutive indexes starting at 1, then on_batch_done.
//  - read_index() records its context; answer_reads(ok) answers every recorded one with
//    on_read_index(context, last_index(), ok): the read point is the end of the log, possibly
//    ahead of what was applied, which is the case the server must wait for.
//  - set_leader() changes leader()/is_leader() and, once started, calls on_leader_changed in the
//    same step (the real log also updates what it reports right before that call).
//  - quorum_contact_age_ms() is 0 while a leader is known and kNoQuorumContact otherwise, unless
//    the test set an age with set_contact_age() (a cut-off server still knows its old leader).
//  - start_up_replay_done() is true once the entries through set_start_up_replay(index) are
//    committed (by default at once): what the real log recovered as committed before it started.
//  - send(), add_peer(), change_membership() are recorded; membership(), replication_status()
//    and fsync_count() return what the test set.
//
// A follower's propose() is recorded too (the real one would drop it), so a test can see that a
// part proposed where it must not.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/replicated_log.h"

namespace zkraft::server::testing {

class FakeReplicatedLog final : public ReplicatedLog {
 public:
  struct Sent {
    uint64_t to;
    std::string payload;
  };
  struct Peer {
    uint64_t id;
    std::string host;
    uint16_t port;
  };
  struct Change {
    MembershipChange change;
    uint64_t id;
    bool operator==(const Change&) const = default;
  };

  explicit FakeReplicatedLog(uint64_t self_id = 1) : self_id_(self_id) {}

  // ---- ReplicatedLog
  bool start(LogListener& listener, std::string* error) override {
    if (start_error_) {
      if (error) *error = *start_error_;
      return false;
    }
    listener_ = &listener;
    if (snapshot_) listener.on_restore(snapshot_->first, snapshot_->second);
    return true;
  }
  void stop() override { listener_ = nullptr; }
  void propose(std::string entry) override {
    proposed_.push_back(entry);
    log_.push_back(std::move(entry));
  }
  void read_index(uint64_t context) override { reads_.push_back(context); }
  bool is_leader() const override { return leader_ != 0 && leader_ == self_id_; }
  uint64_t leader() const override { return leader_; }
  uint64_t self_id() const override { return self_id_; }
  void send(uint64_t to, std::string payload) override { sent_.push_back({to, std::move(payload)}); }
  ReplicationStatus replication_status() const override { return replication_; }
  uint64_t fsync_count() const override { return fsyncs_; }
  int64_t quorum_contact_age_ms() const override {
    if (contact_age_ms_) return *contact_age_ms_;
    return leader_ != 0 ? 0 : kNoQuorumContact;
  }
  bool start_up_replay_done() const override { return committed_ >= replay_through_; }
  MembershipView membership() const override { return membership_; }
  void add_peer(uint64_t id, const std::string& host, uint16_t port) override {
    peers_.push_back({id, host, port});
  }
  void change_membership(MembershipChange change, uint64_t id) override {
    changes_.push_back({change, id});
  }
  void snapshot_now() override { ++snapshots_asked_; }
  void transfer_leadership(uint64_t to) override { transfers_.push_back(to); }

  // ---- What the test drives
  // A new leader (0: none). Before start() only the state changes; afterwards the listener hears
  // of it at once, in its own batch.
  void set_leader(uint64_t leader) {
    leader_ = leader;
    if (!listener_) return;
    listener_->on_leader_changed(leader, is_leader());
    listener_->on_batch_done();
  }
  // An entry proposed by another server (e.g. the leader, as a follower receives it).
  void replicate(std::string entry) { log_.push_back(std::move(entry)); }
  // Commits the next entry of the log; false if there is none.
  bool commit_next() {
    if (!deliver_next()) return false;
    listener_->on_batch_done();
    return true;
  }
  // Commits everything in the log, in one batch. Returns how many entries were delivered.
  size_t commit_all() {
    size_t n = 0;
    while (deliver_next()) ++n;
    if (n) listener_->on_batch_done();
    return n;
  }
  // Answers every read_index() asked so far (in order), in one batch.
  void answer_reads(bool ok) {
    auto reads = std::move(reads_);
    reads_.clear();
    for (uint64_t ctx : reads) listener_->on_read_index(ctx, ok ? last_index() : 0, ok);
    if (!reads.empty()) listener_->on_batch_done();
  }
  // A payload from another server.
  void receive(uint64_t from, std::string payload) {
    listener_->on_peer_message(from, std::move(payload));
    listener_->on_batch_done();
  }
  // A snapshot that start() restores (before start), or a start that fails.
  void set_snapshot(uint64_t index, std::string data) {
    snapshot_.emplace(index, std::move(data));
    committed_ = index;
    base_ = index;
  }
  void fail_start(std::string error) { start_error_ = std::move(error); }

  void set_membership(MembershipView m) { membership_ = std::move(m); }
  void set_replication_status(ReplicationStatus s) { replication_ = std::move(s); }
  void set_fsync_count(uint64_t n) { fsyncs_ = n; }
  int snapshots_asked() const { return snapshots_asked_; }
  const std::vector<uint64_t>& transfers() const { return transfers_; }
  // What quorum_contact_age_ms() answers from now on (nullopt: back to following the leader).
  void set_contact_age(std::optional<int64_t> ms) { contact_age_ms_ = ms; }
  void set_start_up_replay(uint64_t through) { replay_through_ = through; }

  // ---- What the test inspects
  const std::vector<std::string>& proposed() const { return proposed_; }
  const std::vector<Sent>& sent() const { return sent_; }
  const std::vector<uint64_t>& pending_reads() const { return reads_; }
  const std::vector<Peer>& added_peers() const { return peers_; }
  const std::vector<Change>& membership_changes() const { return changes_; }
  uint64_t last_index() const { return base_ + log_.size(); }
  uint64_t commit_index() const { return committed_; }
  size_t uncommitted() const { return static_cast<size_t>(last_index() - committed_); }
  void clear_records() {
    proposed_.clear();
    sent_.clear();
    peers_.clear();
    changes_.clear();
  }

 private:
  bool deliver_next() {
    if (!listener_ || committed_ >= last_index()) return false;
    ++committed_;
    // The entry string is copied: the listener may propose (and so grow log_) while it applies.
    const std::string entry = log_[committed_ - base_ - 1];
    listener_->on_apply(committed_, entry);
    return true;
  }

  uint64_t self_id_;
  uint64_t leader_ = 0;
  LogListener* listener_ = nullptr;
  std::optional<std::string> start_error_;
  std::optional<std::pair<uint64_t, std::string>> snapshot_;
  std::vector<std::string> log_;  // entries after base_
  uint64_t base_ = 0;             // index of the snapshot the log starts after
  uint64_t committed_ = 0;
  std::vector<std::string> proposed_;
  std::vector<uint64_t> reads_;
  std::vector<Sent> sent_;
  std::vector<Peer> peers_;
  std::vector<Change> changes_;
  MembershipView membership_;
  ReplicationStatus replication_;
  uint64_t fsyncs_ = 0;
  std::optional<int64_t> contact_age_ms_;
  uint64_t replay_through_ = 0;
  int snapshots_asked_ = 0;
  std::vector<uint64_t> transfers_;
};

}  // namespace zkraft::server::testing
