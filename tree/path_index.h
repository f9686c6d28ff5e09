#pragma once
// PathIndex: the tree's path index, every znode entry (its full path and node) by path. It owns
// the entries: each is one 96-byte block of the tree's BlockPool, at an address that never
// changes while the node exists, so child lists and side tables can point at it.
//
// Why not std::unordered_map (what it replaced): a chained table reaches a bucket and then each
// entry of its chain, and without cached hashes it hashes the key of every entry it walks past
// to find the chain's end. A restart that loaded a snapshot of 1,000,000 znodes spent 29% of its
// samples there, about 0.8 s (docs/benchmarks.md, 2026-12-06). Here a lookup reads one slot
// array: open addressing with linear probing, each slot an entry's address with the top 16 bits
// of its path's hash in the address's unused top bits, so a probe that passes other entries
// reads no entry unless its 16 bits match (1 in 65,536 for a different path). The address's
// three low bits (entries are 8-byte aligned) hold how far the entry sits from its home slot, so
// an erase shifts the run behind it back without reading or hashing those entries: it did both
// for every entry it passed, 40% of the state thread's time in a delete load (docs/benchmarks.md,
// 2026-12-07). Every insert or lookup
// that knows its hash early can prefetch its slot (prefetch()): the snapshot load does, one
// record ahead. The table also spares the chain's next pointer: 96 bytes per entry, not 104.
//
// Invariants:
//  - a slot is 0 (free) or an entry's address | (tag << 48) | distance, tag = hash(path) >> 48;
//    user-space addresses stay below 2^48 and entries are 8-byte aligned (both checked on every
//    insert, in release builds too);
//  - distance = (slot - home) mod capacity when that is below kFar, else kFar ("far: hash the
//    path to know its home");
//  - linear probing with no tombstones: every entry sits in the run of occupied slots that
//    starts at its home slot (hash & mask) and runs to it; erase() shifts the run back;
//  - the table is a power of two in size and at most 3/4 full, so every probe ends at a free slot.
//  - growth is spread over the writes that follow it: a full table becomes the "old" table, a
//    table twice its size the current one, and each emplace or erase then moves up to
//    kMoveSteps entries from the old to the current (taking them from the old table's lowest
//    occupied slot, an erase there like any other, so the old table stays a valid table of
//    what it still holds). Every entry is in exactly one of the two; size_ counts both, and
//    new entries go to the current table. Rehashing a 786,432-entry table at once held the
//    state thread 170 ms, every client's write waiting behind it (docs/benchmarks.md,
//    2026-12-07). Moving 4 entries per write empties the old table (3/8 of the current one's
//    capacity in entries) within capacity / 10 writes, long before the next growth.
//
// Not thread-safe: used by the tree's one thread. Iteration order is not part of the contract
// (the tree's outputs never follow it: tree/znode_tree.h).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "tree/znode.h"

namespace zkraft::tree {

class PathIndex {
 public:
  PathIndex() = default;
  ~PathIndex();
  PathIndex(PathIndex&& o) noexcept { *this = std::move(o); }
  PathIndex& operator=(PathIndex&& o) noexcept;
  PathIndex(const PathIndex&) = delete;
  PathIndex& operator=(const PathIndex&) = delete;

  // The hash every call below takes or computes (std::hash<std::string_view>: 64 good bits).
  static uint64_t hash(std::string_view path) noexcept;

  size_t size() const { return size_; }
  // Of the current table (an old one still being emptied is not counted).
  size_t capacity() const { return mask_ + (slots_ ? 1 : 0); }
  // Whether entries are still being moved out of an old table.
  bool growing() const { return old_slots_ != nullptr; }

  ZnodeEntry* find(std::string_view path) const { return find(path, hash(path)); }
  ZnodeEntry* find(std::string_view path, uint64_t h) const;
  // Adds an entry for `path` holding `node` and returns it with true; if `path` is already
  // there, changes nothing and returns that entry with false (`node` is left as it was).
  std::pair<ZnodeEntry*, bool> emplace(std::string_view path, Znode&& node) {
    return emplace(path, hash(path), std::move(node));
  }
  std::pair<ZnodeEntry*, bool> emplace(std::string_view path, uint64_t h, Znode&& node);
  // Removes and destroys `e`, an entry of this index.
  void erase(ZnodeEntry* e) noexcept;
  // Room for n entries with no growth on the way (and no old table left).
  void reserve(size_t n);
  // Asks the CPU to bring the slot where a probe for hash h starts into the cache: for a caller
  // that knows the hash one step before it inserts or looks up.
  void prefetch(uint64_t h) const {
    if (slots_) __builtin_prefetch(&slots_[h & mask_], 1);
  }

 private:
  static constexpr int kTagShift = 48;
  static constexpr uintptr_t kFar = 7;  // the distance field: the three low bits
  static constexpr uintptr_t kTagMask = ~((uintptr_t{1} << kTagShift) - 1);
  static constexpr uintptr_t kAddressMask = ~kTagMask & ~kFar;
  static constexpr size_t kMinCapacity = 16;
  // Entries moved from the old table per emplace or erase, and free old slots passed on top.
  static constexpr int kMoveSteps = 4;
  static constexpr int kMoveScan = 32;

  static ZnodeEntry* entry_of(uintptr_t slot) { return reinterpret_cast<ZnodeEntry*>(slot & kAddressMask); }
  static uintptr_t tag_of(uint64_t h) { return static_cast<uintptr_t>(h >> kTagShift) << kTagShift; }
  // Slot s with its distance field set for sitting at i with home `home`, in a table of `mask`.
  static uintptr_t placed(uintptr_t s, size_t i, size_t home, size_t mask) {
    const size_t d = (i - home) & mask;
    return (s & ~kFar) | (d < kFar ? d : kFar);
  }
  // The home of the entry in slot s, which sits at i of a table of `mask`.
  static size_t home_of(uintptr_t s, size_t i, size_t mask) {
    const uintptr_t d = s & kFar;
    return d != kFar ? (i - d) & mask : hash(entry_of(s)->first.view()) & mask;
  }
  static ZnodeEntry* probe(const uintptr_t* slots, size_t mask, std::string_view path, uint64_t h);
  // Slot s (an entry with hash h) into the first free slot of its run in a table of `mask`.
  static void place(uintptr_t* slots, size_t mask, uintptr_t s, uint64_t h);
  // Empties slot `hole` of a table of `mask` and shifts the run behind it back.
  static void remove_at(uintptr_t* slots, size_t mask, size_t hole) noexcept;
  // The slot of e in a table of `mask`, probing from e's home; false if e is not there.
  static bool slot_of(const uintptr_t* slots, size_t mask, const ZnodeEntry* e, uint64_t h, size_t& at);
  // The smallest power-of-two table that holds n entries at most 3/4 full.
  static size_t capacity_for(size_t n);
  void rehash(size_t capacity);
  // Makes the current table the old one and starts a table twice its size.
  void start_growth();
  // Moves up to kMoveSteps entries of the old table (all of them if `all`).
  void move_some(bool all = false) noexcept;
  void destroy_all() noexcept;

  uintptr_t* slots_ = nullptr;      // capacity() slots, or null before the first insert
  size_t mask_ = 0;                 // capacity() - 1
  size_t size_ = 0;                 // entries in both tables
  uintptr_t* old_slots_ = nullptr;  // while growing: the table being emptied
  size_t old_mask_ = 0;
  size_t move_from_ = 0;            // the old table's slots below this are free
};

}  // namespace zkraft::tree
