#pragma once
// MappedVector<T>: a growable array of a trivially copyable T, as std::vector<T> is, whose growth
// never copies a long array. Below kMappedBytes its buffer comes from operator new and grows by
// doubling with a copy, as a vector's does; from kMappedBytes on the buffer is an anonymous
// mapping of its own, grown with mremap(2): the kernel moves the pages, not their bytes, and the
// new half's pages fault in one at a time as elements are added.
//
// Why: the tree's child lists (ChildList::entries). 2,097,152 creates under one parent doubled
// its std::vector: a 16 MB copy into a fresh 32 MB buffer, half of that time page faults, held
// the state thread ~56 ms while every client's write waited (docs/benchmarks.md, 2026-12-08);
// the next doubling would have copied 32 MB.
//
// Invariants: size() <= capacity(); data() is null exactly when capacity() is 0; the buffer is a
// mapping exactly when mapped(capacity()), so the capacity alone says how to free it. In
// AddressSanitizer builds nothing is mapped, so the sanitizer sees every buffer. Move-only: a
// copy of a long list is always spelled out (assign from begin()/end() into a std::vector).

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>

#include "tree/block_pool.h"

namespace zkraft::tree {

template <class T>
class MappedVector {
  static_assert(std::is_trivially_copyable_v<T>, "elements are moved by memcpy and mremap");

 public:
  static constexpr size_t kMappedBytes = size_t{1} << 20;

  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<T*>;
  using const_reverse_iterator = std::reverse_iterator<const T*>;

  MappedVector() = default;
  ~MappedVector() { free_buffer(data_, capacity_); }
  MappedVector(MappedVector&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  MappedVector& operator=(MappedVector&& o) noexcept {
    if (this != &o) {
      free_buffer(data_, capacity_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  MappedVector(const MappedVector&) = delete;
  MappedVector& operator=(const MappedVector&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void push_back(T v) {
    if (size_ == capacity_) grow_to(capacity_ == 0 ? 1 : 2 * capacity_);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  // Room for n elements with no growth on the way.
  void reserve(size_t n) {
    if (n > capacity_) grow_to(n);
  }
  // Empties the array and gives its buffer back.
  void release() noexcept { *this = MappedVector(); }

  // Whether a buffer of `capacity` elements is a mapping (exposed for the tests).
  static bool mapped(size_t capacity) {
    return capacity * sizeof(T) >= kMappedBytes && !BlockPool::address_sanitizer_build();
  }

 private:
  static size_t page_rounded(size_t bytes) {
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return (bytes + page - 1) / page * page;
  }
  // A mapping's capacity: whole pages.
  static size_t mapped_capacity(size_t n) { return page_rounded(n * sizeof(T)) / sizeof(T); }

  void grow_to(size_t n) {
    if (!mapped(n)) {
      T* fresh = static_cast<T*>(::operator new(n * sizeof(T)));
      if (size_ > 0) std::memcpy(fresh, data_, size_ * sizeof(T));
      free_buffer(data_, capacity_);
      data_ = fresh;
      capacity_ = n;
      return;
    }
    n = mapped_capacity(n);
    void* p;
    if (mapped(capacity_)) {
      p = ::mremap(data_, capacity_ * sizeof(T), n * sizeof(T), MREMAP_MAYMOVE);
    } else {
      p = ::mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) {
        if (size_ > 0) std::memcpy(p, data_, size_ * sizeof(T));
        free_buffer(data_, capacity_);
      }
    }
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    capacity_ = n;
  }
  static void free_buffer(T* p, size_t capacity) noexcept {
    if (p == nullptr) return;
    if (mapped(capacity)) {
      ::munmap(p, capacity * sizeof(T));
    } else {
      ::operator delete(p);
    }
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace zkraft::tree
