#pragma once
// NodeData: a znode's data bytes in 14 bytes of node memory, byte-aligned. Up to 13 bytes live
// inline (most znode payloads are small: empty lock nodes, ids, short config values); longer data
// gets one block of its size from the tree's BlockPool, since znode data is always replaced whole,
// never appended to.
//
// Layout: 13 bytes that hold the inline bytes, or the heap block's pointer and size (stored with
// memcpy, so the type needs no alignment), and one length byte: the inline length (<= 13) or
// kHeap. Alignment 1 is the point: Znode places it after a 4-byte field and its small fields
// after it, with no padding (tree/znode.h), which keeps the path index entry at 120 bytes.
//
// Invariants: view() is valid until the next assign/clear/move; a moved-from NodeData is empty.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tree/packed_block.h"

namespace zkraft::tree {

class NodeData {
 public:
  NodeData() = default;
  explicit NodeData(std::string_view bytes) { assign(bytes); }
  NodeData(const NodeData& o) { assign(o.view()); }
  NodeData(NodeData&& o) noexcept { take(o); }
  NodeData& operator=(const NodeData& o) {
    if (this != &o) assign(o.view());
    return *this;
  }
  NodeData& operator=(NodeData&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~NodeData() { release(); }

  void assign(std::string_view bytes) {
    char* block = nullptr;
    if (bytes.size() > kInline) {
      block = packed_block::allocate(bytes.size());
      std::memcpy(block, bytes.data(), bytes.size());
    }
    // bytes may be our own (a view of this data): copy them out before releasing the block.
    char small[kInline];
    if (!block && !bytes.empty()) std::memcpy(small, bytes.data(), bytes.size());
    release();
    if (block) {
      packed_block::store(buf_, block, bytes.size());
      len_ = kHeap;
    } else {
      if (!bytes.empty()) std::memcpy(buf_, small, bytes.size());
      len_ = static_cast<uint8_t>(bytes.size());
    }
  }
  void clear() {
    release();
    len_ = 0;
  }

  std::string_view view() const {
    return on_heap() ? std::string_view(heap_ptr(), heap_size()) : std::string_view(buf_, len_);
  }
  std::string str() const { return std::string(view()); }
  size_t size() const { return on_heap() ? heap_size() : len_; }
  bool empty() const { return len_ == 0; }  // a heap block is never empty
  bool operator==(const NodeData& o) const { return view() == o.view(); }

 private:
  static constexpr uint8_t kInline = 13;
  static constexpr uint8_t kHeap = packed_block::kHeap;
  static_assert(packed_block::kRefBytes <= kInline, "a heap block's pointer and size fit");

  bool on_heap() const { return len_ == kHeap; }
  char* heap_ptr() const { return packed_block::pointer(buf_); }
  size_t heap_size() const { return packed_block::size(buf_); }
  void release() {
    if (on_heap()) packed_block::release(heap_ptr(), heap_size());
  }
  void take(NodeData& o) {
    std::memcpy(buf_, o.buf_, kInline);  // takes the heap block, if any
    len_ = o.len_;
    o.len_ = 0;
  }

  char buf_[kInline] = {};
  uint8_t len_ = 0;  // the inline length (<= kInline), or kHeap
};

static_assert(sizeof(NodeData) == 14 && alignof(NodeData) == 1,
              "Znode's layout counts on 14 bytes, byte-aligned");

}  // namespace zkraft::tree
