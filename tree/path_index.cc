// PathIndex: open addressing over entry addresses tagged with 16 bits of their hash.
#include "tree/path_index.h"

#include <bit>
#include <cstring>
#include <functional>
#include <new>
#include <tuple>

#include <sys/mman.h>

#include "tree/block_pool.h"
#include "tree/invariant.h"

namespace zkraft::tree {

namespace {

// A table of this many bytes or more is mapped fresh from the kernel: its pages are zero with no
// memset, and each faults in when a slot of it is first written, spread over the writes after a
// growth (which move entries into it a few at a time). The memset of the 32 MB table that the
// growth past 1,572,864 entries made faulted in its 8,192 pages at once and held the state thread
// ~100 ms (docs/benchmarks.md, 2026-12-08). Not in AddressSanitizer builds, which keep every
// buffer visible to the sanitizer.
constexpr size_t kMappedTableBytes = size_t{2} << 20;

bool mapped(size_t n) {
  return n * sizeof(uintptr_t) >= kMappedTableBytes && !BlockPool::address_sanitizer_build();
}

uintptr_t* allocate_slots(size_t n) {
  if (mapped(n)) {
    void* p = ::mmap(nullptr, n * sizeof(uintptr_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<uintptr_t*>(p);
  }
  auto* s = TreeAllocator<uintptr_t>().allocate(n);
  std::memset(s, 0, n * sizeof(uintptr_t));
  return s;
}

void free_slots(uintptr_t* s, size_t n) noexcept {
  if (!s) return;
  if (mapped(n)) {
    ::munmap(s, n * sizeof(uintptr_t));
    return;
  }
  TreeAllocator<uintptr_t>().deallocate(s, n);
}

}  // namespace

uint64_t PathIndex::hash(std::string_view path) noexcept {
  static_assert(sizeof(size_t) == sizeof(uint64_t), "the tag takes the top 16 of 64 bits");
  return std::hash<std::string_view>{}(path);
}

PathIndex::~PathIndex() {
  destroy_all();
  free_slots(slots_, capacity());
}

PathIndex& PathIndex::operator=(PathIndex&& o) noexcept {
  if (this == &o) return *this;
  destroy_all();
  free_slots(slots_, capacity());
  slots_ = std::exchange(o.slots_, nullptr);
  mask_ = std::exchange(o.mask_, 0);
  size_ = std::exchange(o.size_, 0);
  old_slots_ = std::exchange(o.old_slots_, nullptr);
  old_mask_ = std::exchange(o.old_mask_, 0);
  move_from_ = std::exchange(o.move_from_, 0);
  return *this;
}

void PathIndex::destroy_all() noexcept {
  for (auto [slots, mask] : {std::pair{slots_, mask_}, std::pair{old_slots_, old_mask_}}) {
    if (!slots) continue;
    for (size_t i = 0; i <= mask; ++i) {
      if (!slots[i]) continue;
      ZnodeEntry* e = entry_of(slots[i]);
      e->~ZnodeEntry();
      TreeAllocator<ZnodeEntry>().deallocate(e, 1);
      slots[i] = 0;
    }
  }
  free_slots(old_slots_, old_mask_ + 1);
  old_slots_ = nullptr;
  old_mask_ = 0;
  move_from_ = 0;
  size_ = 0;
}

size_t PathIndex::capacity_for(size_t n) {
  size_t c = kMinCapacity;
  while (c / 4 * 3 < n) c *= 2;
  return c;
}

ZnodeEntry* PathIndex::probe(const uintptr_t* slots, size_t mask, std::string_view path, uint64_t h) {
  const uintptr_t tag = tag_of(h);
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uintptr_t s = slots[i];
    if (!s) return nullptr;
    if ((s & kTagMask) == tag && entry_of(s)->first.view() == path) return entry_of(s);
  }
}

ZnodeEntry* PathIndex::find(std::string_view path, uint64_t h) const {
  if (!slots_) return nullptr;
  if (ZnodeEntry* e = probe(slots_, mask_, path, h)) return e;
  return old_slots_ ? probe(old_slots_, old_mask_, path, h) : nullptr;
}

void PathIndex::place(uintptr_t* slots, size_t mask, uintptr_t s, uint64_t h) {
  const size_t home = h & mask;
  size_t i = home;
  while (slots[i]) i = (i + 1) & mask;
  slots[i] = placed(s, i, home, mask);
}

std::pair<ZnodeEntry*, bool> PathIndex::emplace(std::string_view path, uint64_t h, Znode&& node) {
  if (ZnodeEntry* e = find(path, h)) return {e, false};
  if (!slots_) {
    rehash(capacity_for(1));
  } else if (size_ + 1 > capacity() / 4 * 3) {
    start_growth();
  }
  ZnodeEntry* e = TreeAllocator<ZnodeEntry>().allocate(1);
  try {
    new (e) ZnodeEntry(std::piecewise_construct, std::forward_as_tuple(path),
                       std::forward_as_tuple(std::move(node)));
  } catch (...) {
    TreeAllocator<ZnodeEntry>().deallocate(e, 1);
    throw;
  }
  const auto address = reinterpret_cast<uintptr_t>(e);
  ZKRAFT_INVARIANT((address & ~kAddressMask) == 0,
                   "an entry's address leaves the tag's 16 bits and the distance's 3 bits free");
  place(slots_, mask_, address | tag_of(h), h);
  ++size_;
  move_some();
  return {e, true};
}

bool PathIndex::slot_of(const uintptr_t* slots, size_t mask, const ZnodeEntry* e, uint64_t h, size_t& at) {
  for (size_t i = h & mask; slots[i]; i = (i + 1) & mask) {
    if (entry_of(slots[i]) == e) {
      at = i;
      return true;
    }
  }
  return false;
}

void PathIndex::remove_at(uintptr_t* slots, size_t mask, size_t hole) noexcept {
  // Backward shift: each later entry of the run whose home is not between the hole and it moves
  // into the hole, so every entry stays reachable from its home without tombstones.
  for (size_t j = (hole + 1) & mask; slots[j]; j = (j + 1) & mask) {
    const size_t home = home_of(slots[j], j, mask);
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      slots[hole] = placed(slots[j], hole, home, mask);
      hole = j;
    }
  }
  slots[hole] = 0;
}

void PathIndex::erase(ZnodeEntry* e) noexcept {
  const uint64_t h = hash(e->first.view());
  size_t at = 0;
  if (slot_of(slots_, mask_, e, h, at)) {
    remove_at(slots_, mask_, at);
  } else {
    const bool old = old_slots_ && slot_of(old_slots_, old_mask_, e, h, at);
    ZKRAFT_INVARIANT(old, "an erased entry is in the index");
    remove_at(old_slots_, old_mask_, at);
  }
  e->~ZnodeEntry();
  TreeAllocator<ZnodeEntry>().deallocate(e, 1);
  --size_;
  move_some();
}

void PathIndex::start_growth() {
  move_some(/*all=*/true);  // the last growth's move, if it has not ended yet
  const size_t capacity = 2 * (mask_ + 1);
  uintptr_t* fresh = allocate_slots(capacity);  // first: if it throws, nothing has changed
  old_slots_ = std::exchange(slots_, fresh);
  old_mask_ = std::exchange(mask_, capacity - 1);
  move_from_ = 0;
}

void PathIndex::move_some(bool all) noexcept {
  int moved = 0;
  int passed = 0;
  while (old_slots_ && (all || (moved < kMoveSteps && passed < kMoveScan))) {
    if (move_from_ > old_mask_) {
      free_slots(old_slots_, old_mask_ + 1);
      old_slots_ = nullptr;
      old_mask_ = 0;
      move_from_ = 0;
      return;
    }
    const uintptr_t s = old_slots_[move_from_];
    if (!s) {
      ++move_from_;
      ++passed;
      continue;
    }
    // An erase like any other: the run behind may shift into this slot, which is looked at
    // again, so every old slot below move_from_ stays free.
    remove_at(old_slots_, old_mask_, move_from_);
    place(slots_, mask_, s, hash(entry_of(s)->first.view()));
    ++moved;
  }
}

void PathIndex::reserve(size_t n) {
  move_some(/*all=*/true);
  if (n > capacity() / 4 * 3) rehash(capacity_for(n));
}

void PathIndex::rehash(size_t capacity) {
  ZKRAFT_INVARIANT(!old_slots_, "a rehash finds no growth under way");
  ZKRAFT_INVARIANT(std::has_single_bit(capacity) && capacity / 4 * 3 >= size_,
                   "the index's table is a power of two and at most 3/4 full");
  uintptr_t* fresh = allocate_slots(capacity);
  const size_t mask = capacity - 1;
  if (slots_) {
    for (size_t i = 0; i <= mask_; ++i) {
      const uintptr_t s = slots_[i];
      if (s) place(fresh, mask, s, hash(entry_of(s)->first.view()));
    }
  }
  free_slots(slots_, this->capacity());
  slots_ = fresh;
  mask_ = mask;
}

}  // namespace zkraft::tree
