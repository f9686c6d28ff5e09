#pragma once
// The one representation PathKey and NodeData share for bytes that do not fit inline: a
// block of their size whose pointer and size are stored, unaligned, in the first 13 bytes of
// the owner's inline buffer (the size in 5 bytes: up to 1 TiB, far above any jute buffer), with
// the owner's length byte set to kHeap. Unaligned (memcpy) so
// that both owners can be byte-aligned and pack tightly into the path index entry (tree/znode.h).
// The blocks come from the tree's BlockPool (tree/block_pool.h), not the malloc heap.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tree/block_pool.h"
#include "tree/invariant.h"

namespace zkraft::tree::packed_block {

// The owner's length byte when the bytes live in a heap block.
inline constexpr uint8_t kHeap = 0xFF;
// Bytes of the inline buffer a heap block's pointer and size take.
inline constexpr size_t kSizeBytes = 5;
inline constexpr size_t kRefBytes = sizeof(char*) + kSizeBytes;
inline constexpr uint64_t kMaxSize = (uint64_t{1} << (8 * kSizeBytes)) - 1;

// A block of n > 0 bytes, and its release (with the same n).
// Byte blocks: exactly n bytes and no alignment (their bytes are only copied and compared).
inline char* allocate(size_t n) { return BlockPool::tree().allocate_bytes(n); }
inline void release(char* block, size_t n) { BlockPool::tree().deallocate_bytes(block, n); }

inline char* pointer(const char* buf) {
  char* p;
  std::memcpy(&p, buf, sizeof p);
  return p;
}

// The size's bytes are stored least significant first whatever the host's byte order.
inline size_t size(const char* buf) {
  uint64_t n = 0;
  for (size_t i = 0; i < kSizeBytes; ++i)
    n |= uint64_t{static_cast<unsigned char>(buf[sizeof(char*) + i])} << (8 * i);
  return static_cast<size_t>(n);
}

inline void store(char* buf, char* block, size_t n) {
  ZKRAFT_INVARIANT(n <= kMaxSize, "a block's size fits its 5 bytes");
  std::memcpy(buf, &block, sizeof block);
  for (size_t i = 0; i < kSizeBytes; ++i)
    buf[sizeof(char*) + i] = static_cast<char>((static_cast<uint64_t>(n) >> (8 * i)) & 0xFF);
}

}  // namespace zkraft::tree::packed_block
