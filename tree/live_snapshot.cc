// ZnodeTree's live snapshot: serialize()'s bytes as of one moment, written in steps while writes
// go on (znode_tree.h, begin_live_snapshot). Why not fork: on the development machine every
// copy-on-write fault after a fork costs ~36 us, and under a 64x32 write load the faults of the
// serving threads right after each fork stalled them ~200 ms (docs/benchmarks.md).
#include <algorithm>

#include "tree/invariant.h"
#include "tree/node_prefetch.h"
#include "tree/znode_tree.h"

namespace zkraft::tree {

LiveSnapshotCheck ZnodeTree::begin_live_snapshot(jute::Writer& w) {
  ZKRAFT_INVARIANT(!live_snapshot_, "one live snapshot at a time");
  start_change_record();  // this state is the base of the next delta
  auto snap = std::make_unique<LiveSnapshot>();
  LiveSnapshot::Frame top;  // the level above the root: the root alone
  top.copy.push_back(find("/"));
  top.end = 1;
  snap->frames.push_back(std::move(top));
  snap->nodes_at_start = index_.size();
  write_header(w);
  // Every node now has the old mark: none has its record written or kept.
  snapshot_mark_ = !snapshot_mark_;
  snap->mark = snapshot_mark_;
  LiveSnapshotCheck check(w.size(), snap->nodes_at_start, rolling_);
  live_snapshot_ = std::move(snap);
  return check;
}

void ZnodeTree::keep_pre_image_now(ZnodeEntry* e) {
  LiveSnapshot& snap = *live_snapshot_;
  jute::Writer w;
  write_node(w, *e);
  LiveSnapshot::Kept kept{w.take(), {}};
  if (const ChildList* list = e->second.children(); list && !snap.delta) {
    if (list->entries.size() >= kChildListKeptInPlace) {
      kept.in_place = &list->entries;  // a ChildList stays where it is for its node's lifetime
      kept.in_place_count = list->entries.size();
    } else {
      kept.children.assign(list->entries.begin(), list->entries.end());
      snap.entries_copied += list->entries.size();
    }
  }
  const bool fresh = snap.kept.emplace(e, std::move(kept)).second;
  ZKRAFT_INVARIANT(fresh, "a node's record is kept once");
  e->second.snapshot_mark = snapshot_mark_;
}

void ZnodeTree::keep_list_read_in_place(const ZnodeEntry* parent, size_t first_changed) {
  LiveSnapshot& snap = *live_snapshot_;
  for (LiveSnapshot::Frame& f : snap.frames) {
    if (f.owner != parent || f.in_place == nullptr) continue;
    if (first_changed >= f.end) return;  // only children added after what the walk reads
    ZKRAFT_INVARIANT(f.in_place->size() >= f.end, "a child list read in place keeps what the walk reads");
    f.copy.assign(f.in_place->begin() + static_cast<std::ptrdiff_t>(f.next),
                  f.in_place->begin() + static_cast<std::ptrdiff_t>(f.end));
    f.in_place = nullptr;
    snap.entries_copied += f.copy.size();
    f.end -= f.next;
    f.next = 0;
    return;  // a node is on the walk's path once, and its pre-image is no longer kept
  }
  // A kept list read in place has kChildListKeptInPlace entries or more for as long as it is: the
  // first ones are those of the start, so the lookup is needed only for a list that long.
  const ChildList* list = parent->second.children();
  if (list == nullptr || list->entries.size() < kChildListKeptInPlace) return;
  auto it = snap.kept.find(parent);
  if (it == snap.kept.end() || it->second.in_place == nullptr) return;
  LiveSnapshot::Kept& kept = it->second;
  if (first_changed >= kept.in_place_count) return;
  ZKRAFT_INVARIANT(kept.in_place->size() >= kept.in_place_count, "a child list read in place keeps what the walk reads");
  kept.children.assign(kept.in_place->begin(),
                       kept.in_place->begin() + static_cast<std::ptrdiff_t>(kept.in_place_count));
  kept.in_place = nullptr;
  snap.entries_copied += kept.in_place_count;
}

bool ZnodeTree::continue_live_snapshot(jute::Writer& w, size_t max_nodes) {
  ZKRAFT_INVARIANT(live_snapshot_ != nullptr, "a live snapshot is under way");
  LiveSnapshot& snap = *live_snapshot_;
  if (snap.delta && !continue_delta_links(w, 64 * max_nodes)) return false;
  for (size_t n = 0; n < max_nodes && !snap.frames.empty();) {
    LiveSnapshot::Frame& level = snap.frames.back();
    if (level.next == level.end) {
      snap.frames.pop_back();
      continue;
    }
    ZKRAFT_INVARIANT(level.in_place == nullptr || level.in_place->size() >= level.end,
                     "a child list read in place keeps what the walk reads");
    // Only a list read in place is known to hold live nodes (a changed list is a copy, whose
    // removed entries may be freed): the blocks are prefetched only from such a list.
    if (level.next + internal::kEntryAhead < level.end) {
      internal::prefetch_entry(level.at(level.next + internal::kEntryAhead));
    }
    if (level.in_place != nullptr && level.next + internal::kBlocksAhead < level.end) {
      internal::prefetch_blocks((*level.in_place)[level.next + internal::kBlocksAhead]);
    }
    ZnodeEntry* e = level.at(level.next++);
    ++n;
    ++snap.written;
    // `level` may move from here on: the node's own level is pushed behind it.
    LiveSnapshot::Frame below;
    below.owner = e;
    if (auto it = snap.kept.find(e); it != snap.kept.end()) {
      w.write_raw(it->second.record);
      if (it->second.in_place != nullptr) {
        below.in_place = it->second.in_place;
        below.end = it->second.in_place_count;
      } else {
        below.copy = std::move(it->second.children);
        below.end = below.copy.size();
      }
      snap.kept.erase(it);
    } else {
      // Not kept, so neither it nor its child list changed since the start: both are as they were.
      Znode& node = e->second;
      ZKRAFT_INVARIANT(node.snapshot_mark != snap.mark, "a node's record is written once");
      write_node(w, *e);
      node.snapshot_mark = snap.mark;
      if (const ChildList* list = node.children()) {
        below.in_place = &list->entries;
        below.end = list->entries.size();
      }
    }
    if (below.end > 0 && !snap.delta) snap.frames.push_back(std::move(below));
  }
  if (!snap.frames.empty()) return false;
  // A record kept for a node the walk never reached, a change that kept nothing, or a child list
  // read after it changed would make the bytes differ from the tree at the start: a restore from
  // them would lose or invent writes. The records' digest is checked where they are written
  // (LiveSnapshotCheck).
  ZKRAFT_INVARIANT(snap.kept.empty(), "every kept record was written in its node's place");
  ZKRAFT_INVARIANT(snap.written == snap.nodes_at_start, "a live snapshot writes every node of the start once");
  live_snapshot_.reset();
  return true;
}

void ZnodeTree::replace_with(ZnodeTree&& fresh) {
  ZKRAFT_INVARIANT(!fresh.live_snapshot_, "a fresh tree has no live snapshot");
  std::unique_ptr<LiveSnapshot> snap = std::move(live_snapshot_);
  // The first replacement keeps the tree the snapshot reads; a later one drops a tree the
  // snapshot never saw. Nothing changes the kept tree any more, so no record need be kept from
  // now on: the fresh tree's nodes all carry its own mark.
  const bool tracking = changes_ != nullptr;
  const uint64_t max_bytes = tracking ? changes_->max_bytes : UINT64_MAX;
  if (snap && !snap->replaced) snap->replaced = std::make_unique<ZnodeTree>(std::move(*this));
  *this = std::move(fresh);
  live_snapshot_ = std::move(snap);
  // The state the change record ran from is gone: the next delta needs a full snapshot first.
  if (tracking) track_changes(true, max_bytes);
}

}  // namespace zkraft::tree
