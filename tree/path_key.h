#pragma once
// PathKey: a znode's full path as the key of the tree's path index, in the 32 bytes a
// std::string takes, but with up to 30 bytes inline instead of 15. Typical paths
// ("/mem/c-0000012345", "/kafka/brokers/ids/1", "/locks/lock-0000000042") fit, so most nodes
// need no second heap block for their key (glibc serves an 18-byte std::string buffer from a
// 32-byte chunk: 32 MB at 1,000,000 znodes). Longer paths get one exact-size block.
//
// Invariants: the bytes never change after construction (index keys are const); data() is
// stable for the key's lifetime, so views into it (the ephemerals map) stay valid as long as
// the index entry exists (the index is node-based).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tree/packed_block.h"

namespace zkraft::tree {

class PathKey {
 public:
  PathKey() = default;
  explicit PathKey(std::string_view s) { init(s); }
  PathKey(const PathKey& o) { init(o.view()); }
  PathKey(PathKey&& o) noexcept {
    std::memcpy(buf_, o.buf_, sizeof buf_);  // takes the heap block, if any
    len_ = o.len_;
    o.len_ = 0;
  }
  PathKey& operator=(const PathKey&) = delete;
  PathKey& operator=(PathKey&&) = delete;
  ~PathKey() {
    if (on_heap()) packed_block::release(heap_ptr(), heap_size());
  }

  std::string_view view() const {
    return on_heap() ? std::string_view(heap_ptr(), heap_size()) : std::string_view(buf_, len_);
  }
  operator std::string_view() const { return view(); }  // NOLINT: a key is read as a path
  const char* data() const { return on_heap() ? heap_ptr() : buf_; }
  size_t size() const { return on_heap() ? heap_size() : len_; }
  bool empty() const { return size() == 0; }
  std::string str() const { return std::string(view()); }

  friend bool operator==(const PathKey& a, const PathKey& b) { return a.view() == b.view(); }
  friend bool operator==(const PathKey& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const PathKey& a, const char* b) { return a.view() == std::string_view(b); }
  friend bool operator==(const PathKey& a, const std::string& b) { return a.view() == std::string_view(b); }

 private:
  static constexpr uint8_t kInline = 30;
  static constexpr uint8_t kHeap = packed_block::kHeap;
  static_assert(packed_block::kRefBytes <= kInline, "a heap block's pointer and size fit");

  bool on_heap() const { return len_ == kHeap; }
  char* heap_ptr() const { return packed_block::pointer(buf_); }
  size_t heap_size() const { return packed_block::size(buf_); }
  void init(std::string_view s) {
    if (s.size() <= kInline) {
      if (!s.empty()) std::memcpy(buf_, s.data(), s.size());
      len_ = static_cast<uint8_t>(s.size());
      return;
    }
    char* p = packed_block::allocate(s.size());
    std::memcpy(p, s.data(), s.size());
    packed_block::store(buf_, p, s.size());
    len_ = kHeap;
  }

  char buf_[31] = {};
  uint8_t len_ = 0;  // the inline length (<= kInline), or kHeap
};

static_assert(sizeof(PathKey) == sizeof(std::string), "PathKey must not grow the index entry");

}  // namespace zkraft::tree
