#pragma once
// BlockPool: memory for the tree's many small, long-lived blocks (path index entries, data and
// long-path blocks), kept apart from the process's malloc heap.
//
// Why: in one malloc heap the tree's blocks sit between the short-lived ones the same thread
// allocates for every write (log entries and their copies, requests, replies). Those are freed
// soon, and the holes they leave are free chunks between live nodes that the kernel cannot take
// back: 42 to 59 MB of them after 1,000,000 creates (docs/benchmarks.md, 2026-12-03). Here a
// block is carved from a slab that holds only blocks of its own size class, so a tree that only
// grows has no holes, a freed block is reused by the next one of its class, and each block takes
// exactly its class's size (glibc adds 8 bytes and rounds to 16).
//
// Two kinds of block:
//  - aligned blocks (allocate): sizes rounded up to a multiple of kGranule, each class carved from
//    slabs of its own, so every block is 8-byte aligned (the path index's entries);
//  - byte blocks (allocate_bytes): exactly the size asked (at least kMinBytes), unaligned, all
//    carved from one slab shared by every byte size (data and long paths, which their owners
//    read with memcpy: tree/packed_block.h). 100 bytes of data take 100, not 104.
// Blocks up to kMaxPooled bytes come from the slabs (kSlabBytes each), larger ones from operator
// new. Slabs go back to the system only when the pool is destroyed: freed blocks wait for reuse,
// each by a block of its own class (aligned) or its own exact size (bytes). With sizes that
// change a lot, free byte blocks can wait longer than aligned ones, since exact sizes are more
// classes; what waits is bounded by the live blocks each size has had at most.
//
// Not thread-safe, and needs no lock: the tree's blocks come from the calling thread's own pool
// (tree()), and a tree is used by one thread at a time. A block may be freed on another thread
// than the one that allocated it (a tree destroyed after its thread handed it on): it then joins
// that thread's free list, so blocks move between pools but never go back to the system, and a
// pool's counts are of its own thread's calls. deallocate() must get the size allocate() got.

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace zkraft::tree {

class BlockPool {
 public:
  static constexpr size_t kGranule = 8;
  static constexpr size_t kMaxPooled = 256;
  static constexpr size_t kSlabBytes = size_t{1} << 20;
  static constexpr size_t kMinBytes = sizeof(void*);  // a free byte block holds the next's address

  // A pass-through pool sends every block to operator new (what AddressSanitizer builds use, so
  // that it still sees each block's bounds and lifetime).
  explicit BlockPool(bool pass_through = false) : pass_through_(pass_through) {}
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  bool pass_through() const { return pass_through_; }

  // n > 0. An 8-byte aligned block.
  void* allocate(size_t n);
  void deallocate(void* p, size_t n) noexcept;
  // n > 0. A block of max(n, kMinBytes) bytes with no alignment.
  char* allocate_bytes(size_t n);
  void deallocate_bytes(char* p, size_t n) noexcept;

  struct Stats {
    int64_t slab_bytes = 0;    // taken from the system for slabs
    int64_t pooled_bytes = 0;  // allocated here from slabs (class or byte sizes) less freed here
    int64_t large_bytes = 0;   // the same for blocks above kMaxPooled (their asked sizes)
  };
  Stats stats() const { return stats_; }

  // This thread's pool for the tree's blocks, created on first use and never destroyed (a tree
  // may outlive the thread that built it); in AddressSanitizer builds, one pass-through pool.
  static BlockPool& tree();
  // Whether this build runs under AddressSanitizer (tree() is then a pass-through pool, and the
  // tree's other large buffers avoid mappings the sanitizer would not see into).
  static bool address_sanitizer_build();

 private:
  static constexpr size_t kClasses = kMaxPooled / kGranule;
  struct FreeBlock {
    FreeBlock* next;
  };
  struct SizeClass {
    FreeBlock* free = nullptr;
    char* next = nullptr;  // uncarved rest of the newest slab
    char* end = nullptr;
  };

  // A new slab, recorded before it is used (so that a throw leaks nothing).
  char* new_slab();

  const bool pass_through_;
  std::array<SizeClass, kClasses> classes_{};
  // Byte blocks: a free list per exact size (the next block's address stored unaligned in the
  // first 8 bytes of each free block) and the uncarved rest of their shared slab.
  std::array<char*, kMaxPooled + 1> free_bytes_{};
  char* bytes_next_ = nullptr;
  char* bytes_end_ = nullptr;
  std::vector<void*> slabs_;
  Stats stats_;
};

// A standard allocator over the calling thread's BlockPool::tree(), for the tree's containers.
template <class T>
struct TreeAllocator {
  using value_type = T;
  using is_always_equal = std::true_type;
  static_assert(alignof(T) <= BlockPool::kGranule, "pool blocks are 8-byte aligned");

  TreeAllocator() noexcept = default;
  template <class U>
  TreeAllocator(const TreeAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(size_t n) { return static_cast<T*>(BlockPool::tree().allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { BlockPool::tree().deallocate(p, n * sizeof(T)); }

  template <class U>
  bool operator==(const TreeAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace zkraft::tree
