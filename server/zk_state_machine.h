#pragma once
// The replicated state of a zkraft server: the znode tree and the session table, changed only by
// applying committed Txns in log order. Deterministic: the same entries give the same state and
// the same outcomes on every server. No I/O, no clock.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "jute/archive.h"
#include "jute/multi.h"
#include "jute/requests.h"
#include "server/txn.h"
#include "session/session_table.h"
#include "tree/znode_tree.h"

namespace zkraft::server {

struct ApplyOutcome {
  int64_t zxid = 0;
  int32_t err = 0;
  std::string reply;   // the encoded response record (only when err == 0 and the op has one)
  std::vector<tree::WatchTrigger> triggers;
  bool session_created = false;
  bool session_closed = false;  // the txn ended `txn.session_id`
  bool membership_changed = false;  // a reconfig rewrote /zookeeper/config
  bool state_replaced = false;      // a kRestore replaced the tree and the sessions
  std::string quota_warning;  // a quota limit passed (see ZnodeTree::take_quota_warning), for the log
};

// Behaviour switches that must be identical on every server of an ensemble.
struct StateMachineOptions {
  bool extended_types_enabled = false;  // zookeeper.extendedTypesEnabled: TTL nodes
  bool reconfig_enabled = false;        // reconfigEnabled: the reconfig op
  bool enforce_quota = false;           // zookeeper.enforceQuota: hard quota limits refuse
  bool digest_enabled = true;           // zookeeper.digest.enabled: false records digest 0
  // ACL schemes besides world/auth/digest/ip (tree::AuthSchemes::extra): x509 when clients use
  // TLS, as ZooKeeper registers its X509AuthenticationProvider then; sasl with a JAAS file.
  std::vector<std::string> extra_schemes = {};
  // zkraft.snapshotAppends: the tree keeps its change record, so a snapshot can be the changes
  // since the last one (begin_live_delta), appended to it; a record past
  // max_change_record_bytes is dropped until the next snapshot.
  bool snapshot_deltas = false;
  uint64_t max_change_record_bytes = UINT64_MAX;
};

// One entry of the digest history that `hash` prints.
struct ZxidDigest {
  int64_t zxid = 0;
  int64_t digest = 0;  // tree::ZnodeTree::tree_digest(), as Java's signed long
  bool operator==(const ZxidDigest&) const = default;
};

class ZkStateMachine {
 public:
  explicit ZkStateMachine(StateMachineOptions options = {})
      : options_(options), tree_(tree_options(options)) {
    tree_.track_changes(options.snapshot_deltas, options.max_change_record_bytes);
  }

  // zxid: the zxid this entry gets (derived from its log index by the caller). The response
  // record is encoded into ApplyOutcome::reply only when `want_reply` (the server that holds the
  // client): the other replicas change the same state without building a reply nobody reads.
  ApplyOutcome apply(int64_t zxid, const Txn& txn, bool want_reply = true);
  // An entry that carries no transaction (e.g. a Raft no-op) still advances the zxid.
  void skip(int64_t zxid);

  // ZooKeeper's digest history (DataTree.logZxidDigest): after each entry whose zxid is a
  // multiple of kDigestLogInterval, (zxid, tree digest); the last kDigestLogLimit, oldest first.
  // Taken at apply time from the replicated state alone, so every server holds the same pairs
  // for the zxids it applied. Like ZooKeeper's, it is not in the snapshot: a restored server
  // keeps what it had for older zxids and goes on from the snapshot's.
  static constexpr int64_t kDigestLogInterval = 128;  // DataTree.DIGEST_LOG_INTERVAL
  static constexpr size_t kDigestLogLimit = 1024;     // DataTree.DIGEST_LOG_LIMIT
  const std::deque<ZxidDigest>& digest_log() const { return digest_log_; }

  // A snapshot of the whole replicated state (tree, sessions, last zxid), and its inverse.
  // restore() leaves the state untouched and returns false if the bytes do not parse.
  std::string serialize() const;
  // The same bytes in pieces of about piece_bytes (ZnodeTree::serialize_in_pieces), each to
  // `out`, so that a snapshot is never whole in memory; false as soon as out returns false.
  bool serialize_to(size_t piece_bytes, const std::function<bool(std::string_view)>& out) const;
  // serialize()'s bytes as of now, written while writes go on: the header and the sessions go
  // into `w` at the beginning, then up to max_records of the tree's records per continue, which
  // returns true once all are written (ZnodeTree::begin_live_snapshot says how).
  tree::LiveSnapshotCheck begin_live_snapshot(jute::Writer& w);
  bool continue_live_snapshot(jute::Writer& w, size_t max_records) {
    return tree_.continue_live_snapshot(w, max_records);
  }
  // Restores a snapshot the storage holds (at start-up, or the leader's): that state is then
  // the base of the next delta.
  bool restore(int64_t zxid, std::string_view bytes);
  // Incremental snapshots. Bytes that, appended to the snapshot of the state at the last
  // snapshot point (a live snapshot's start, a restore, the last delta), make a snapshot of the
  // state now: the sessions whole and the tree's delta. nullopt from pending_delta_bytes when
  // none can be written (snapshot_deltas off, or no point since the tree was replaced).
  // begin_live_delta makes now the point and writes the delta's start into `w`; the tree's
  // records follow in steps through continue_live_snapshot (ZnodeTree::begin_live_delta).
  std::optional<uint64_t> pending_delta_bytes() const;
  void begin_live_delta(jute::Writer& w);
  // Whether `bytes` are a state serialize() could have produced, possibly followed by deltas
  // (parsed in full, kept nowhere): the admin restore checks its input before it proposes it.
  static bool valid_state(std::string_view bytes);

  const tree::ZnodeTree& tree() const { return tree_; }
  tree::ZnodeTree& mutable_tree() { return tree_; }
  const session::SessionTable& sessions() const { return sessions_; }
  int64_t last_zxid() const { return last_zxid_; }

 private:
  void apply_request(const tree::TxnContext& ctx, const Txn& txn, ApplyOutcome& out);
  void apply_reconfig(const tree::TxnContext& ctx, const Txn& txn, const jute::ReconfigRequest& req,
                      ApplyOutcome& out);
  void apply_multi(const tree::TxnContext& ctx, const jute::MultiRequest& req, ApplyOutcome& out);
  void log_digest(int64_t zxid);
  // The snapshot's bytes before the tree's: format, last zxid, sessions.
  void write_snapshot_header(jute::Writer& w) const;
  // Replaces the tree and the sessions with the ones in `bytes` (untouched if they do not
  // parse); *snapshot_zxid: the last zxid they were taken at.
  bool load_state(std::string_view bytes, int64_t* snapshot_zxid);

  static tree::ZnodeTree::Options tree_options(const StateMachineOptions& o) {
    tree::ZnodeTree::Options t;
    t.enforce_quota = o.enforce_quota;
    t.schemes.extra = o.extra_schemes;
    return t;
  }

  StateMachineOptions options_;
  bool want_reply_ = true;  // for the apply in progress
  tree::ZnodeTree tree_;
  session::SessionTable sessions_;
  int64_t last_zxid_ = 0;
  std::deque<ZxidDigest> digest_log_;
};

}  // namespace zkraft::server
