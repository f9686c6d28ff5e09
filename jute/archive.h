#pragma once
// Big-endian jute archive reader and writer: the primitives every ZooKeeper record is made of.
//
// The Reader never throws and never reads past its input: the first failure (short input, a
// negative or over-limit length) makes it sticky-failed, every later read fails too and leaves its
// output untouched, so a decoder can read all fields and check ok() once at the end.

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zkraft::jute {

// Bounds applied while decoding untrusted input. Defaults follow ZooKeeper (jute.maxbuffer).
struct Limits {
  int32_t max_buffer = 0xfffff;      // longest buffer or string, and longest frame
  int32_t max_vector = 1 << 20;      // most elements in one vector
};

// A byte buffer that keeps ZooKeeper's distinction between null (-1 length) and empty.
struct Buffer {
  std::string bytes;
  bool is_null = false;

  static Buffer null() { return Buffer{{}, true}; }
  bool operator==(const Buffer&) const = default;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in, const Limits& limits = Limits{})
      : p_(in.data()), end_(in.data() + in.size()), limits_(limits) {}
  Reader(std::string_view in, const Limits& limits = Limits{})
      : Reader(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(in.data()), in.size()),
               limits) {}

  bool read_int(int32_t& v);
  bool read_long(int64_t& v);
  bool read_bool(bool& v);
  // A ustring; a null (-1) string reads as empty, as kazoo sends -1 for "".
  bool read_string(std::string& v);
  bool read_buffer(Buffer& v);
  // A vector's count: -1 (null) reads as 0. Fails if count exceeds limits.max_vector or cannot
  // possibly fit in the remaining input (each element takes at least min_element_bytes).
  bool read_count(int32_t& n, size_t min_element_bytes = 1);
  bool read_strings(std::vector<std::string>& v);

  bool ok() const { return ok_; }
  void fail() { ok_ = false; }
  size_t remaining() const { return ok_ ? static_cast<size_t>(end_ - p_) : 0; }
  bool at_end() const { return ok_ && p_ == end_; }
  const Limits& limits() const { return limits_; }

 private:
  bool take(void* out, size_t n);
  const uint8_t* p_;
  const uint8_t* end_;
  Limits limits_;
  bool ok_ = true;
};

class Writer {
 public:
  void write_int(int32_t v);
  void write_long(int64_t v);
  void write_bool(bool v);
  void write_string(std::string_view v);
  void write_buffer(const Buffer& v);
  void write_count(int32_t n) { write_int(n); }
  void write_strings(const std::vector<std::string>& v);
  void write_raw(std::string_view bytes) { out_.append(bytes); }

  // Overwrites 4 bytes at pos: used to fill in a frame length after the body is written.
  void patch_int(size_t pos, int32_t v);
  // Grows the output by n bytes and returns where they start: a record's fixed-size fields go
  // in with put_be32/put_be64 in one step instead of one append each (a snapshot writes a
  // million records of eleven such fields). The pointer is valid until the next write.
  char* extend(size_t n) {
    const size_t at = out_.size();
    out_.resize(at + n);
    return out_.data() + at;
  }

  size_t size() const { return out_.size(); }
  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }
  void clear() { out_.clear(); }
  // Writes from here on go into `buffer`, emptied first: a buffer taken before and handed back
  // keeps its capacity, so its pages are not allocated and faulted in again.
  void reset(std::string buffer) {
    out_ = std::move(buffer);
    out_.clear();
  }

 private:
  std::string out_;
};

// Big-endian stores into bytes reserved with Writer::extend; each returns the byte after.
inline char* put_be32(char* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
  return p + 4;
}
inline char* put_be64(char* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
  return p + 8;
}

}  // namespace zkraft::jute
