#include "tree/block_pool.h"

#include <cstring>
#include <new>

#include "tree/invariant.h"

namespace zkraft::tree {

namespace {

constexpr size_t rounded(size_t n) {
  return (n + BlockPool::kGranule - 1) / BlockPool::kGranule * BlockPool::kGranule;
}

}  // namespace

bool BlockPool::address_sanitizer_build() {
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
    c.next = new_slab();
    c.end = c.next + kSlabBytes;
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

char* BlockPool::new_slab() {
  slabs_.push_back(nullptr);  // first, so that a throw below leaks nothing
  char* slab = static_cast<char*>(::operator new(kSlabBytes));
  slabs_.back() = slab;
  stats_.slab_bytes += static_cast<int64_t>(kSlabBytes);
  return slab;
}

char* BlockPool::allocate_bytes(size_t n) {
  ZKRAFT_INVARIANT(n > 0, "no empty pool blocks");
  const size_t size = n < kMinBytes ? kMinBytes : n;
  if (pass_through_ || size > kMaxPooled) {
    char* p = static_cast<char*>(::operator new(n));
    if (!pass_through_) stats_.large_bytes += static_cast<int64_t>(n);
    return p;
  }
  stats_.pooled_bytes += static_cast<int64_t>(size);
  if (char* b = free_bytes_[size]) {
    std::memcpy(&free_bytes_[size], b, sizeof(char*));
    return b;
  }
  if (static_cast<size_t>(bytes_end_ - bytes_next_) < size) {
    // The old slab's rest becomes a free block of its size, if it can be one.
    const size_t rest = static_cast<size_t>(bytes_end_ - bytes_next_);
    if (rest >= kMinBytes) {
      std::memcpy(bytes_next_, &free_bytes_[rest], sizeof(char*));
      free_bytes_[rest] = bytes_next_;
    }
    bytes_next_ = new_slab();
    bytes_end_ = bytes_next_ + kSlabBytes;
  }
  char* p = bytes_next_;
  bytes_next_ += size;
  return p;
}

void BlockPool::deallocate_bytes(char* p, size_t n) noexcept {
  if (!p) return;
  const size_t size = n < kMinBytes ? kMinBytes : n;
  if (pass_through_ || size > kMaxPooled) {
    ::operator delete(p);
    if (!pass_through_) stats_.large_bytes -= static_cast<int64_t>(n);
    return;
  }
  std::memcpy(p, &free_bytes_[size], sizeof(char*));
  free_bytes_[size] = p;
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
