#pragma once
// ZnodeTree: the znode tree as a deterministic state machine.
//
// Every server applies the same committed transactions in the same order through the write calls
// below and must end in the same state, so nothing here reads a clock, draws a random number or
// lets hash order reach its output: zxid and time come from the caller's TxnContext, sequential
// names from the parent's create counter, child lists keep a history-determined order (ZooKeeper
// promises no order; ours is stable and survives a snapshot round trip).
//
// Results are ZooKeeper error codes (jute::err). The checks and their order follow Apache
// ZooKeeper 3.9's PrepRequestProcessor / DataTree / FinalRequestProcessor; each call's comment
// lists its order. Not checked here (the server's job): session validity, TTL nodes being enabled
// (kUnimplemented when zookeeper.extendedTypesEnabled is off), read-only mode. Quota stats nodes
// (/zookeeper/quota/<path>/zookeeper_stats) are kept current as in ZooKeeper; hard quota limits
// refuse changes only with Options::enforce_quota.
//
// Triggers carry the ACL of the node they name (see WatchTrigger) for the READ filter on delivery.
//
// Not thread-safe: one thread (the apply thread) owns the tree.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "jute/archive.h"
#include "jute/data.h"
#include "tree/acl.h"
#include "tree/acl_cache.h"
#include "tree/block_pool.h"
#include "tree/live_snapshot_check.h"
#include "tree/path_index.h"
#include "tree/path.h"
#include "tree/quota_stats.h"
#include "tree/txn.h"
#include "tree/znode.h"

namespace zkraft::tree {

class ZnodeTree {
 public:
  struct Options {
    AuthSchemes schemes;  // which ACL schemes exist besides world/auth/digest/ip
    // zookeeper.enforceQuota: creates and setData beyond a hard quota limit fail with
    // kQuotaExceeded (checked after the other create checks, and before setData's version check).
    // ZooKeeper 3.9's ZooKeeperServer.checkQuota: the limit is the hard one if set (> -1), else
    // the soft one; count includes the quota'd node itself; bytes are data lengths.
    bool enforce_quota = false;
  };

  // A fresh ZooKeeper tree: "/", "/zookeeper", "/zookeeper/quota" ([31 world:anyone], empty data,
  // all stat fields 0) and "/zookeeper/config" ([1 world:anyone], aversion -1).
  ZnodeTree();
  explicit ZnodeTree(Options options);
  ZnodeTree(ZnodeTree&&) noexcept = default;
  ZnodeTree& operator=(ZnodeTree&&) noexcept = default;
  ZnodeTree(const ZnodeTree&) = delete;
  ZnodeTree& operator=(const ZnodeTree&) = delete;

  // ---- Reads. Paths are not validated (a malformed path is simply absent: kNoNode); "" is an
  // alias of "/" as in ZooKeeper. ----

  // kNoNode, then READ.
  int32_t get_data(std::string_view path, const std::vector<jute::Id>& auth, jute::Buffer& data,
                   jute::Stat& stat) const;
  // kBadArguments if path holds a NUL; kNoNode; READ on the existing node (3.8.4+/3.9.2+).
  int32_t exists(std::string_view path, const std::vector<jute::Id>& auth, jute::Stat& stat) const;
  // kNoNode, then READ. `stat` may be null (getChildren vs getChildren2).
  int32_t get_children(std::string_view path, const std::vector<jute::Id>& auth,
                       std::vector<std::string>& children, jute::Stat* stat) const;
  // kNoNode, then READ or ADMIN. Without ADMIN, digest ids come back masked as "user:x".
  int32_t get_acl(std::string_view path, const std::vector<jute::Id>& auth,
                  std::vector<jute::ACL>& acl, jute::Stat& stat) const;
  // kNoNode, then READ. Counts all descendants (for "/" that includes /zookeeper/**; for "" one
  // more, ZooKeeper's count of its "/" alias key).
  int32_t get_all_children_number(std::string_view path, const std::vector<jute::Id>& auth,
                                  int32_t& n) const;
  // The standalone check op: kBadArguments (path), kNoNode, READ, kBadVersion (-1 = any).
  int32_t check_version(std::string_view path, const std::vector<jute::Id>& auth,
                        int32_t version) const;
  // getEphemerals: the session's ephemeral paths starting with `prefix` ("" or "/" = all), sorted.
  std::vector<std::string> ephemerals_of(int64_t session_id, std::string_view prefix) const;
  // No ACL check: for SetWatches and watch bookkeeping. False if absent.
  bool stat_of(std::string_view path, jute::Stat& stat) const;
  bool contains(std::string_view path) const { return find(path) != nullptr; }
  // Every session's ephemeral paths, sorted (the dump 4lw / admin command).
  std::map<int64_t, std::vector<std::string>> ephemerals_by_session() const;
  const AuthSchemes& schemes() const { return options_.schemes; }

  // ---- Writes (applied transactions). Each sets last_zxid() to ctx.zxid, success or not. ----

  // Order: mode valid (kBadArguments) -> ttl valid for the mode (kBadArguments; TTL modes need
  // 0 < ttl <= kMaxTtlMs, others ttl < 0) -> path has a '/' and no NUL (kBadArguments) -> ACL
  // fixup (kInvalidAcl) -> parent exists (kNoNode) -> CREATE on parent (kNoAuth) -> sequential
  // suffix -> full path validation (kBadArguments) -> exists (kNodeExists) -> parent ephemeral
  // (kNoChildrenForEphemerals) -> hard quota (kQuotaExceeded, only with enforce_quota).
  // Triggers: NodeCreated(path), NodeChildrenChanged(parent).
  int32_t create(const TxnContext& ctx, std::string_view path, const jute::Buffer& data,
                 const std::vector<jute::ACL>& acl, int32_t mode, int64_t ttl,
                 std::string& created_path, jute::Stat* stat, std::vector<WatchTrigger>& out);
  // Order: path has a '/', no NUL, not special (kBadArguments) -> parent exists (kNoNode) ->
  // DELETE on parent (kNoAuth) -> node exists (kNoNode) -> version (kBadVersion) -> no children
  // (kNotEmpty). Triggers: NodeDeleted(path), NodeChildrenChanged(parent).
  int32_t remove(const TxnContext& ctx, std::string_view path, int32_t version,
                 std::vector<WatchTrigger>& out);
  // Order: path valid (kBadArguments) -> exists (kNoNode) -> WRITE (kNoAuth) -> hard quota
  // (kQuotaExceeded, only with enforce_quota) -> version (kBadVersion). Null data stays null.
  // Trigger: NodeDataChanged(path).
  int32_t set_data(const TxnContext& ctx, std::string_view path, const jute::Buffer& data,
                   int32_t version, jute::Stat& stat, std::vector<WatchTrigger>& out);
  // Order: path valid (kBadArguments) -> ACL fixup (kInvalidAcl) -> exists (kNoNode) -> ADMIN
  // (kNoAuth) -> aversion (kBadVersion). No triggers.
  int32_t set_acl(const TxnContext& ctx, std::string_view path, const std::vector<jute::ACL>& acl,
                  int32_t version, jute::Stat& stat);
  // Atomic. All ops share ctx.zxid and see the effects of earlier ops. On success `ok` is true
  // and each result is as the single op would give. On the first failure nothing changes and no
  // triggers are added: results before it are err 0, the failing op carries its code, those
  // after it kRuntimeInconsistency, and `ok` is false.
  std::vector<MultiOpResult> multi(const TxnContext& ctx, const std::vector<MultiOp>& ops,
                                   std::vector<WatchTrigger>& out, bool& ok);
  // Session close or expiry: deletes the session's ephemerals in sorted path order.
  void close_session(const TxnContext& ctx, int64_t session_id, std::vector<WatchTrigger>& out);
  // deleteContainer (op 20), generated by the reaper; no ACL check. Order: path has a '/', no
  // NUL, not special (kBadArguments) -> exists (kNoNode) -> no children (kNotEmpty) -> not a
  // session ephemeral (kBadVersion, as ZooKeeper).
  int32_t delete_container(const TxnContext& ctx, std::string_view path,
                           std::vector<WatchTrigger>& out);
  // For transactions that touch no node (createSession, errors, ...).
  void set_last_zxid(int64_t zxid) { last_zxid_ = zxid; }
  // The ensemble's membership text in /zookeeper/config, as a quorum ZooKeeper shows it at
  // start-up: data set with version -1 and no zxid. Not a transaction: every server derives the
  // same text from the same static config.
  void set_config_data(std::string_view text);

  // The quota line of the last create or setData that passed a limit without being refused
  // ("Quota exceeded: /q [current count=4, softCountLimit=3]", as ZooKeeper logs it), then "".
  // ZooKeeper 3.9 logs it only with enforce_quota; zkraft reports it either way.
  std::string take_quota_warning() { return std::exchange(quota_warning_, {}); }

  // Reaper candidates, sorted (containers first, then TTL nodes), at most `max`: empty containers
  // that have had a child (or, if max_never_used_ms > 0, older than that by mtime); TTL nodes
  // without children whose now - mtime > ttl.
  std::vector<std::string> reap_candidates(int64_t now_ms, size_t max,
                                           int64_t max_never_used_ms = 0) const;

  // ---- Stats (4lw / mntr). ----
  // ZooKeeper's count: real znodes + 1 (its root is indexed under both "" and "/").
  size_t node_count() const { return index_.size() + 1; }
  size_t ephemeral_count() const;
  // Sum of path lengths and data lengths, counted like ZooKeeper (root as "" and "/").
  int64_t approximate_data_size() const { return data_size_; }
  int64_t last_zxid() const { return last_zxid_; }

  // ---- Snapshot. ----
  // Writes the whole state (nodes with all counters, child order, ACL table, quota paths,
  // last zxid).
  void serialize(jute::Writer& w) const;
  // The same bytes, handed out in pieces: whenever `w` holds at least piece_bytes, out(w.bytes())
  // and then w.clear(); what is left at the end stays in `w` for the caller. So a snapshot can
  // go to a file without ever being whole in memory. Stops, returning false, as soon as out
  // returns false.
  bool serialize_in_pieces(jute::Writer& w, size_t piece_bytes,
                           const std::function<bool(std::string_view)>& out) const;
  // A snapshot taken while writes go on, with no fork and no copy of the tree: the bytes are
  // those serialize() would write at the moment begin_live_snapshot() is called. That call
  // writes the header into `w` and nothing else (no walk: on a tree of 1,000,000 znodes a walk
  // held the state thread 100 to 400 ms under load); continue_live_snapshot() then goes on with
  // the pre-order walk, writing the records of up to `max_nodes` more nodes into `w`, and
  // returns true once all are written. Meanwhile every write that changes or removes a node
  // whose record is not yet written, or changes its child list, first keeps that record and its
  // child list as they are (its pre-image: ZooKeeper removes only leaves, so a node's own record
  // and list are all a removal needs), and the walk takes both from there in the node's place; a
  // node created since is in no list the walk reads. The walk reads a written node's child list
  // in place, and a change to that list first copies the part not yet read. Each finished
  // snapshot checks that it wrote as many records as the tree had at the start; the
  // LiveSnapshotCheck returned checks, where the bytes are written, that their node hashes sum to
  // the tree's rolling digest at the start.
  // One at a time; one that is never finished goes with the tree.
  LiveSnapshotCheck begin_live_snapshot(jute::Writer& w);
  bool continue_live_snapshot(jute::Writer& w, size_t max_nodes);
  bool live_snapshot_under_way() const { return live_snapshot_ != nullptr; }
  // A child list this long or longer is not copied when a live snapshot keeps its owner's
  // pre-image: the snapshot reads its first entries (as many as at the start) in place, for as
  // long as children are only added after them. The creates under one parent of 1,200,000
  // children copied that list (~10 MB) at each whole snapshot's first create, and the writes in
  // flight took 47 to 54 ms (docs/benchmarks.md, 2026-12-08). A shorter list is copied (at most
  // 32 KB): finding a kept list is then needed only for a change to a long one.
  static constexpr size_t kChildListKeptInPlace = 4096;
  // Child list entries the live snapshot under way copied so far to read them later (0 if none
  // is under way): what the in-place reads save, seen by the tests.
  uint64_t live_snapshot_entries_copied() const { return live_snapshot_ ? live_snapshot_->entries_copied : 0; }
  // Replaces the whole tree with `fresh` (a restore). A live snapshot under way goes on: it
  // keeps the replaced tree, unchanged from then on, until it has written it.
  void replace_with(ZnodeTree&& fresh);
  // Replaces the contents with a serialized state. Bounded by the reader; returns false (and
  // leaves the tree unchanged) on malformed or inconsistent input.
  bool deserialize(jute::Reader& r);
  // After deserialize(), on a tree that does not track changes and has no live snapshot under
  // way: applies the next delta (write_delta's bytes, written against the state this tree
  // holds). False if it is malformed or does not arrive at the state its writer had (the node
  // count and rolling digest it names); the tree is then part-changed and must be dropped, so a
  // restore applies deltas to a scratch tree.
  bool apply_delta(jute::Reader& r);

  // ---- Incremental snapshots (deltas). ----
  // With change tracking on, the tree keeps a change record from one snapshot point to the
  // next: which nodes changed (their records are written whole) and every child link and
  // unlink in the order it happened, so the child lists of a restore come out in the same order
  // (a removal moves the last child into the hole). A delta written at a point is the state at
  // that point as changes to the state at the point before: with the snapshot of that earlier
  // state, deserialize() arrives at this one. Its size follows the writes since the last point,
  // not the tree. Points: start_change_record() (the caller takes a full snapshot of this
  // state; begin_live_snapshot calls it), and write_delta() itself.
  // With `max_bytes`, a record that grows past about that many bytes is dropped until the next
  // point (a delta that large would not be written): memory stays bounded when snapshots are
  // rare or off.
  void track_changes(bool on, uint64_t max_bytes = UINT64_MAX);
  bool tracking_changes() const { return changes_ != nullptr; }
  void start_change_record();
  // Tracking is on, and since the last point no restore replaced the tree and the record was
  // not dropped.
  bool delta_possible() const { return changes_ && !changes_->base_lost; }
  // About how many bytes write_delta() would write now (for the choice between a delta and a
  // full snapshot). O(nodes changed).
  uint64_t pending_delta_bytes() const;
  // Writes the delta since the last point (delta_possible() must hold) and makes now a point.
  // Written whole on the calling thread (the server writes its deltas in steps instead:
  // begin_live_delta, below).
  void write_delta(jute::Writer& w);
  // The same bytes, written in steps while writes go on, as a live snapshot's are (and sharing
  // its one at a time): writes the delta's header into `w` and makes now a point;
  // continue_live_snapshot() then goes on with the links and the records of the nodes changed
  // since the last point, `max_nodes` records (or 64 times as many bytes of links) per call. A
  // write that changes or removes such a node before its record is written first keeps the
  // record as it is (its pre-image), as in a live snapshot. Made whole, a delta of 100,000
  // creates held the state thread 170 to 235 ms, nearly half of it page faults of the growing
  // buffer (docs/benchmarks.md); in steps it goes into the caller's reused pieces.
  void begin_live_delta(jute::Writer& w);
  // 64-bit hash of the whole state as serialize() writes it: equal digests = equal trees. O(n).
  uint64_t digest() const;
  // O(1) digest kept up to date by every change: the sum of a 64-bit hash of each node (path,
  // data, every Stat field, ACL id, kind). Cheap enough to compare replicas every few entries;
  // it does not cover child order, the ACL table or quota paths (digest() does).
  uint64_t rolling_digest() const { return rolling_; }
  // ZooKeeper's tree digest (DataTree.getTreeDigest, what `hash` prints): rolling_digest() over
  // the nodes outside "/zookeeper/" only, as ZooKeeper leaves that subtree out (NodeHashMapImpl).
  // It must be: /zookeeper/config is written at start-up from each server's own static config (a
  // joining server leaves itself out), so it differs between replicas until a reconfig rewrites
  // it. Equal on every replica after the same entries, and rebuilt from the nodes by
  // deserialize(), so a server restored from a snapshot goes on with the same values.
  uint64_t tree_digest() const { return tree_digest_; }

 private:
  // One reversible step of a multi, undone in reverse order on failure.
  struct Undo {
    enum class Kind : uint8_t { kUpdated, kCreated, kDeleted, kQuotaPaths };
    Kind kind;
    std::string path;
    Znode saved;         // kUpdated: the node before (its ChildList, if any, holds only pzxid and
                         // cversion); kDeleted: the removed node
    uint32_t index = 0;  // kDeleted: its position in the parent's child list
    std::set<std::string> quota_paths;  // kQuotaPaths: the set before
  };

  struct EmptyTag {};
  ZnodeTree(EmptyTag, Options options);

  ZnodeEntry* find(std::string_view path);
  const ZnodeEntry* find(std::string_view path) const;
  bool allowed(const Znode& n, int32_t perm, const std::vector<jute::Id>& auth) const;
  void fill_stat(const Znode& n, jute::Stat& stat) const;

  int32_t do_create(const TxnContext& ctx, std::string_view path, const jute::Buffer& data,
                    const std::vector<jute::ACL>& acl, int32_t mode, int64_t ttl,
                    std::string& created_path, jute::Stat* stat, std::vector<WatchTrigger>& out);
  int32_t do_remove(const TxnContext& ctx, std::string_view path, int32_t version,
                    std::vector<WatchTrigger>& out);
  int32_t do_set_data(const TxnContext& ctx, std::string_view path, const jute::Buffer& data,
                      int32_t version, jute::Stat& stat, std::vector<WatchTrigger>& out);
  int32_t do_check(const TxnContext& ctx, std::string_view path, int32_t version) const;
  void erase_node(const TxnContext& ctx, ZnodeEntry* node, ZnodeEntry* parent,
                  std::vector<WatchTrigger>& out);
  void finish(const TxnContext& ctx);

  // Primitive mutations; they keep the side indexes and counters right, and log undo steps
  // while a multi runs.
  ZnodeEntry* insert_entry(std::string_view path, Znode node, ZnodeEntry* parent, bool at_saved_index);
  // The snapshot load's insert: nullptr (and nothing changed) if the path is already there, so
  // the duplicate check costs no lookup of its own. path_hash is PathIndex::hash(path).
  ZnodeEntry* insert_entry_if_new(std::string_view path, uint64_t path_hash, Znode node,
                                  ZnodeEntry* parent);
  ZnodeEntry* link_entry(ZnodeEntry* e, ZnodeEntry* parent, bool at_saved_index, uint32_t saved_index,
                         bool fused_hash = false);
  Znode remove_entry(ZnodeEntry* e, ZnodeEntry* parent);
  void note_update(ZnodeEntry* e);
  void restore_header(ZnodeEntry* e, const Znode& saved);
  // Takes a node's hash out of rolling_ for the scope of an in-place change, and puts the new
  // one back at its end. A node's hash is content (path, data) + meta (path, Stat, ACL, kind), so
  // a change that leaves the data alone (a parent's cversion/pzxid) never rehashes the data.
  enum class Touches : uint8_t { kMeta, kMetaAndData };
  class NodeChange {
   public:
    NodeChange(ZnodeTree& t, ZnodeEntry* e, Touches what)
        : t_(t), e_(e), data_(what == Touches::kMetaAndData) {
      t_.keep_pre_image(e_);
      if (t_.changes_) t_.note_changed(e_);
      t_.unhash(*e_, meta_hash(*e_) + (data_ ? content_hash(*e_) : 0));
    }
    ~NodeChange() { t_.hash(*e_, meta_hash(*e_) + (data_ ? content_hash(*e_) : 0)); }
    NodeChange(const NodeChange&) = delete;
    NodeChange& operator=(const NodeChange&) = delete;

   private:
    ZnodeTree& t_;
    ZnodeEntry* e_;
    bool data_;
  };
  static uint64_t content_hash(const ZnodeEntry& e);
  static uint64_t meta_hash(const ZnodeEntry& e);
  static uint64_t node_hash(const ZnodeEntry& e);  // == content_hash + meta_hash, in one pass
  // Adds a node's hash (or a part of it) to the rolling digests, or takes it out.
  void hash(const ZnodeEntry& e, uint64_t h) {
    rolling_ += h;
    if (in_tree_digest(e.first)) tree_digest_ += h;
  }
  void unhash(const ZnodeEntry& e, uint64_t h) {
    rolling_ -= h;
    if (in_tree_digest(e.first)) tree_digest_ -= h;
  }
  static bool in_tree_digest(std::string_view path) { return !path.starts_with("/zookeeper/"); }
  void rollback(std::vector<Undo>& log);
  static Znode copy_header(const Znode& n);
  static int64_t size_of(std::string_view path, const Znode& n);

  // Quotas (DataTree's pTrie and updateQuotaStat): paths with a zookeeper_limits node, and the
  // upkeep of their zookeeper_stats node's "count=..,bytes=.." text.
  void quota_on_create(std::string_view parent, std::string_view name);
  void quota_on_delete(std::string_view parent, std::string_view name);
  void quota_add_path(std::string_view path);
  void quota_remove_path(std::string_view path);
  std::string_view quota_prefix_of(std::string_view path) const;
  void quota_update_stat(std::string_view prefix, int64_t bytes_diff, int64_t count_diff);
  void quota_recount(std::string_view path);
  // kQuotaExceeded when enforcing and a hard limit would be passed. Any limit passed without a
  // refusal (a soft one; a hard one when not enforcing) leaves ZooKeeper's log line in
  // quota_warning_.
  int32_t quota_check(std::string_view path, int64_t bytes_diff, int64_t count_diff);
  void replace_data(ZnodeEntry* e, std::string data);

  void write_header(jute::Writer& w) const;
  // A delta's bytes up to and including the link count (the layout: delta_snapshot.cc).
  void write_delta_header(jute::Writer& w) const;
  // The ACL table and the quota paths, as the snapshot header and the delta header hold them.
  void write_acls_and_quotas(jute::Writer& w) const;
  // Reads what write_acls_and_quotas wrote into a fresh table and set.
  static bool read_acls_and_quotas(jute::Reader& r, AclCache& acls, std::set<std::string>& quota_paths);
  // Reads one record as write_node wrote it, with every check that needs no tree but the ACL
  // id's presence (the caller's table). `data` is scratch, reused between calls.
  static bool read_record(jute::Reader& r, jute::Buffer& data, std::string& path, Znode& n);
  // Counts every node's ACL id in `acls` (add_ref); false if one is not there.
  bool count_acl_refs(AclCache& acls) const;
  // The change record: links as (1, path, index or -1 for appended, kind, owner), unlinks as
  // (0, path), in jute encoding as write_delta writes them.
  struct ChangeRecord {
    jute::Writer links;
    uint32_t link_count = 0;
    std::unordered_set<ZnodeEntry*> changed;  // live nodes changed or created since the point
    // No delta can be written until the next point: a restore replaced the tree, or the record
    // was dropped for its size. Nothing is recorded meanwhile.
    bool base_lost = false;
    uint64_t max_bytes = UINT64_MAX;
  };
  void record_link(ZnodeEntry& e, int32_t at);
  void record_unlink(ZnodeEntry& e);
  void note_changed(ZnodeEntry* e);
  // Drops the record (base_lost) once it passes max_bytes.
  void bound_change_record();
  // Before a node changes or goes: keeps its record and child list if a live snapshot has not
  // written them yet.
  void keep_pre_image(ZnodeEntry* e) {
    if (live_snapshot_ && e->second.snapshot_mark != snapshot_mark_) keep_pre_image_now(e);
  }
  void keep_pre_image_now(ZnodeEntry* e);
  // Before `parent`'s child list changes at `first_changed` and maybe after it (a child linked at
  // the end: the list's size; a child removed or put back: its index): keeps the parent's
  // pre-image if the live snapshot has not written it yet, and copies what the walk has still to
  // read of the list if the change reaches into it.
  void before_child_list_change(ZnodeEntry* parent, size_t first_changed) {
    if (!live_snapshot_) return;
    if (parent->second.snapshot_mark != snapshot_mark_) keep_pre_image_now(parent);
    keep_list_read_in_place(parent, first_changed);
  }
  void keep_list_read_in_place(const ZnodeEntry* parent, size_t first_changed);

  struct LiveSnapshot {
    // One level of the pre-order walk: the children of `owner` still to write. They are read in
    // place from the owner's own child list (`in_place`) for as long as what the walk has still to
    // read does not change: a copy of a list of 1,000,000 children at the start of a walk took 25
    // to 31 ms of the state thread (1,921 page faults for the copy) and stalled it 100 to 227 ms
    // under a 64x32 load on 2 cores. Children added after `end` change nothing the walk reads.
    // Before a change at an index under `end`, the rest is copied into `copy`
    // (keep_list_read_in_place); a kept pre-image's copied list is moved into `copy` at once.
    // Invariant: while in_place is set, the list's first `end` entries are as at the start (so
    // it holds at least `end`).
    struct Frame {
      const ZnodeEntry* owner = nullptr;
      const ChildVector* in_place = nullptr;
      std::vector<ZnodeEntry*> copy;
      size_t next = 0;
      size_t end = 0;
      ZnodeEntry* at(size_t i) const { return in_place ? (*in_place)[i] : copy[i]; }
    };
    // From the root's level down to the level of the node written last (one frame per level,
    // so as many as the tree is deep). Entries are addresses as of the start: a node created
    // later at a removed node's address is in no list the walk reads, so never looked at.
    std::vector<Frame> frames;
    // A node's pre-image. Its child list at the start is `children`, or, for a list of at least
    // kChildListKeptInPlace entries, the first `in_place_count` entries of the node's own list
    // (`in_place`), under the same invariant as a Frame's.
    struct Kept {
      std::string record;
      std::vector<ZnodeEntry*> children;
      const ChildVector* in_place = nullptr;
      size_t in_place_count = 0;
    };
    // Pre-images of nodes changed or removed before the walk reached them, by address.
    std::unordered_map<const ZnodeEntry*, Kept> kept;
    uint64_t written = 0;         // records written so far
    uint64_t entries_copied = 0;  // child list entries copied to be read later
    uint64_t nodes_at_start = 0;  // what `written` must come to
    bool mark = false;             // what a node's snapshot_mark becomes once written or kept
    std::unique_ptr<ZnodeTree> replaced;  // the tree the walk reads, after replace_with
    // A delta (begin_live_delta): one level, the nodes changed since the last point, with no
    // walk below them; their own marks (not every node's) were set apart at the start, and
    // their pre-images need no child list. The change record's links go first, then the
    // record count.
    bool delta = false;
    std::string links;
    size_t links_written = 0;
    bool count_written = false;
  };
  // Writes what is left of a delta's links, up to `max_bytes` of them, then its record count;
  // true once the count is written.
  bool continue_delta_links(jute::Writer& w, size_t max_bytes);
  template <class F>
  void for_each_preorder(F&& f) const;
  static void write_node(jute::Writer& w, const ZnodeEntry& e);

  Options options_;
  PathIndex index_;
  AclCache acls_;
  std::map<int64_t, std::set<std::string_view>> ephemerals_;  // views into index_ keys
  std::set<std::string_view> containers_;
  std::set<std::string_view> ttls_;
  std::set<std::string> quota_paths_;
  std::string quota_warning_;  // not state: a log line for the caller (take_quota_warning)
  int64_t data_size_ = 1;  // the "/" alias of the root
  int64_t last_zxid_ = 0;
  uint64_t rolling_ = 0;               // see rolling_digest()
  uint64_t tree_digest_ = 0;           // see tree_digest()
  std::vector<Undo>* undo_ = nullptr;  // set while a multi runs
  // The live snapshot under way, if any. Between snapshots every node's snapshot_mark equals
  // snapshot_mark_ (a new node gets it); a snapshot flips snapshot_mark_, and gives each node
  // the new value once it has written or kept its record.
  std::unique_ptr<LiveSnapshot> live_snapshot_;
  bool snapshot_mark_ = false;
  std::unique_ptr<ChangeRecord> changes_;  // null while change tracking is off
  // A written delta's links buffer, emptied, for the next change record: it is refilled to
  // about the same size, and a fresh one would grow (copies and page faults) on every create.
  std::string spare_links_;
};

}  // namespace zkraft::tree
