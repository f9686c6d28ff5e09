#include "tree/block_pool.h"

#include <new>

#include "tree/invariant.h"

namespace zkraft::tree {

namespace {

constexpr size_t rounded(size_t n) {
  return (n + BlockPool::kGranule - 1) / BlockPool::kGranule * BlockPool::kGranule;
}

bool address_sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

}  // namespace

BlockPool::~BlockPool() {
  for (void* slab : slabs_) ::operator delete(slab);
}

void* BlockPool::allocate(size_t n) {
  ZKRAFT_INVARIANT(n > 0, "no empty pool blocks");
  const size_t size = rounded(n);
  if (pass_through_ || size > kMaxPooled) {
    void* p = ::operator new(n);
    if (!pass_through_) stats_.large_bytes += static_cast<int64_t>(n);
    return p;
  }
  SizeClass& c = classes_[size / kGranule - 1];
  stats_.pooled_bytes += static_cast<int64_t>(size);
  if (c.free) {
    FreeBlock* b = c.free;
    c.free = b->next;
    return b;
  }
  if (static_cast<size_t>(c.end - c.next) < size) {
    slabs_.push_back(nullptr);  // first, so that a throw below leaks nothing
    char* slab = static_cast<char*>(::operator new(kSlabBytes));
    slabs_.back() = slab;
    stats_.slab_bytes += static_cast<int64_t>(kSlabBytes);
    c.next = slab;
    c.end = slab + kSlabBytes;
  }
  void* p = c.next;
  c.next += size;
  return p;
}

void BlockPool::deallocate(void* p, size_t n) noexcept {
  if (!p) return;
  const size_t size = rounded(n);
  if (pass_through_ || size > kMaxPooled) {
    ::operator delete(p);
    if (!pass_through_) stats_.large_bytes -= static_cast<int64_t>(n);
    return;
  }
  SizeClass& c = classes_[size / kGranule - 1];
  auto* b = static_cast<FreeBlock*>(p);
  b->next = c.free;
  c.free = b;
  stats_.pooled_bytes -= static_cast<int64_t>(size);
}

BlockPool& BlockPool::tree() {
  // A pass-through pool keeps no state: one for all threads, reachable from a static so that
  // LeakSanitizer does not count it.
  static BlockPool* const pass_through = address_sanitizer_build() ? new BlockPool(true) : nullptr;
  if (pass_through) return *pass_through;
  // Never destroyed: its blocks may belong to a tree that outlives this thread.
  thread_local BlockPool* const pool = new BlockPool();
  return *pool;
}

}  // namespace zkraft::tree
