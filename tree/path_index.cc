// PathIndex: open addressing over entry addresses tagged with 16 bits of their hash.
#include "tree/path_index.h"

#include <bit>
#include <cstring>
#include <functional>
#include <new>
#include <tuple>

#include "tree/block_pool.h"
#include "tree/invariant.h"

namespace zkraft::tree {

namespace {

uintptr_t* allocate_slots(size_t n) {
  auto* s = TreeAllocator<uintptr_t>().allocate(n);
  std::memset(s, 0, n * sizeof(uintptr_t));
  return s;
}

void free_slots(uintptr_t* s, size_t n) noexcept {
  if (s) TreeAllocator<uintptr_t>().deallocate(s, n);
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
  return *this;
}

void PathIndex::destroy_all() noexcept {
  if (!slots_) return;
  for (size_t i = 0; i <= mask_; ++i) {
    if (!slots_[i]) continue;
    ZnodeEntry* e = entry_of(slots_[i]);
    e->~ZnodeEntry();
    TreeAllocator<ZnodeEntry>().deallocate(e, 1);
    slots_[i] = 0;
  }
  size_ = 0;
}

size_t PathIndex::capacity_for(size_t n) {
  size_t c = kMinCapacity;
  while (c / 4 * 3 < n) c *= 2;
  return c;
}

ZnodeEntry* PathIndex::find(std::string_view path, uint64_t h) const {
  if (!slots_) return nullptr;
  const uintptr_t tag = tag_of(h);
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    const uintptr_t s = slots_[i];
    if (!s) return nullptr;
    if ((s & kTagMask) == tag && entry_of(s)->first.view() == path) return entry_of(s);
  }
}

std::pair<ZnodeEntry*, bool> PathIndex::emplace(std::string_view path, uint64_t h, Znode&& node) {
  if (size_ + 1 > capacity() / 4 * 3) rehash(capacity_for(size_ + 1));
  const uintptr_t tag = tag_of(h);
  size_t i = h & mask_;
  for (;; i = (i + 1) & mask_) {
    const uintptr_t s = slots_[i];
    if (!s) break;
    if ((s & kTagMask) == tag && entry_of(s)->first.view() == path) return {entry_of(s), false};
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
  slots_[i] = placed(address | tag, i, h & mask_, mask_);
  ++size_;
  return {e, true};
}

void PathIndex::erase(ZnodeEntry* e) noexcept {
  const uint64_t h = hash(e->first.view());
  size_t hole = h & mask_;
  while (entry_of(slots_[hole]) != e) {
    ZKRAFT_INVARIANT(slots_[hole] != 0, "an erased entry is in the index");
    hole = (hole + 1) & mask_;
  }
  e->~ZnodeEntry();
  TreeAllocator<ZnodeEntry>().deallocate(e, 1);
  --size_;
  // Backward shift: each later entry of the run whose home is not between the hole and it moves
  // into the hole, so every entry stays reachable from its home without tombstones.
  for (size_t j = (hole + 1) & mask_; slots_[j]; j = (j + 1) & mask_) {
    const size_t home = home_of(slots_[j], j);
    if (((j - home) & mask_) >= ((j - hole) & mask_)) {
      slots_[hole] = placed(slots_[j], hole, home, mask_);
      hole = j;
    }
  }
  slots_[hole] = 0;
}

void PathIndex::reserve(size_t n) {
  if (n > capacity() / 4 * 3) rehash(capacity_for(n));
}

void PathIndex::rehash(size_t capacity) {
  ZKRAFT_INVARIANT(std::has_single_bit(capacity) && capacity / 4 * 3 >= size_,
                   "the index's table is a power of two and at most 3/4 full");
  uintptr_t* fresh = allocate_slots(capacity);
  const size_t mask = capacity - 1;
  if (slots_) {
    for (size_t i = 0; i <= mask_; ++i) {
      const uintptr_t s = slots_[i];
      if (!s) continue;
      const size_t home = hash(entry_of(s)->first.view()) & mask;
      size_t j = home;
      while (fresh[j]) j = (j + 1) & mask;
      fresh[j] = placed(s, j, home, mask);
    }
  }
  free_slots(slots_, this->capacity());
  slots_ = fresh;
  mask_ = mask;
}

}  // namespace zkraft::tree
