#pragma once
// The one representation PathKey and NodeData share for bytes that do not fit inline: a
// block of their size whose pointer and size are stored, unaligned, in the first 16 bytes of
// the owner's inline buffer, with the owner's length byte set to kHeap. Unaligned (memcpy) so
// that both owners can be byte-aligned and pack tightly into the path index entry (tree/znode.h).
// The blocks come from the tree's BlockPool (tree/block_pool.h), not the malloc heap.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tree/block_pool.h"

namespace zkraft::tree::packed_block {

// The owner's length byte when the bytes live in a heap block.
inline constexpr uint8_t kHeap = 0xFF;
// Bytes of the inline buffer a heap block's pointer and size take.
inline constexpr size_t kRefBytes = sizeof(char*) + sizeof(size_t);

// A block of n > 0 bytes, and its release (with the same n).
inline char* allocate(size_t n) { return static_cast<char*>(BlockPool::tree().allocate(n)); }
inline void release(char* block, size_t n) { BlockPool::tree().deallocate(block, n); }

inline char* pointer(const char* buf) {
  char* p;
  std::memcpy(&p, buf, sizeof p);
  return p;
}

inline size_t size(const char* buf) {
  size_t n;
  std::memcpy(&n, buf + sizeof(char*), sizeof n);
  return n;
}

inline void store(char* buf, char* block, size_t n) {
  std::memcpy(buf, &block, sizeof block);
  std::memcpy(buf + sizeof block, &n, sizeof n);
}

}  // namespace zkraft::tree::packed_block
