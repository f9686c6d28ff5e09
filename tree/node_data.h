#pragma once
// NodeData: a znode's data bytes in 24 bytes of node memory. Up to 16 bytes live inline (most
// znode payloads are small: empty lock nodes, ids, short config values); longer data gets one
// exact-size heap block, since znode data is always replaced whole, never appended to.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

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
      block = new char[bytes.size()];
      std::memcpy(block, bytes.data(), bytes.size());
    }
    release();
    size_ = static_cast<uint32_t>(bytes.size());
    if (block) {
      heap_ = block;
    } else if (!bytes.empty()) {
      std::memmove(inline_, bytes.data(), bytes.size());  // bytes may be our own
    }
  }
  void clear() {
    release();
    size_ = 0;
  }

  std::string_view view() const { return {size_ > kInline ? heap_ : inline_, size_}; }
  std::string str() const { return std::string(view()); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool operator==(const NodeData& o) const { return view() == o.view(); }

 private:
  static constexpr uint32_t kInline = 16;

  void release() {
    if (size_ > kInline) delete[] heap_;
  }
  void take(NodeData& o) {
    size_ = o.size_;
    std::memcpy(inline_, o.inline_, kInline);  // copies the heap pointer too, if any
    o.size_ = 0;
  }

  union {
    char inline_[kInline] = {};
    char* heap_;
  };
  uint32_t size_ = 0;
};

}  // namespace zkraft::tree
