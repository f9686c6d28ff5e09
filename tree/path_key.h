#pragma once
// PathKey: a znode's full path as the key of the tree's path index, in 24 bytes (a std::string
// takes 32), with up to 22 bytes inline (a std::string keeps 15). Short paths
// ("/mem/c-0000012345", "/kafka/brokers/ids/1", "/locks/lock-0000000042") fit, so those nodes
// need no second block for their key; longer ones get one block of their size from the tree's
// BlockPool. Why 22 and not 30 (the whole 32 bytes): the paths of real trees are mostly longer
// than 30 (Kafka's partition states, ClickHouse's replication queues, Curator's lock nodes), and
// every one of those, like every path up to 22 bytes, is 8 bytes smaller in 24; only paths of
// 23 to 30 bytes cost more (their block).
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
  static constexpr uint8_t kInline = 22;
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

  char buf_[kInline + 1] = {};
  uint8_t len_ = 0;  // the inline length (<= kInline), or kHeap
};

static_assert(sizeof(PathKey) == 24, "PathKey must not grow the index entry (tree/znode.h)");

}  // namespace zkraft::tree
