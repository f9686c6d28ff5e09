#include "jute/archive.h"

namespace zkraft::jute {

namespace {
uint32_t load_be32(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}
}  // namespace

bool Reader::take(void* out, size_t n) {
  if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
    ok_ = false;
    return false;
  }
  std::memcpy(out, p_, n);
  p_ += n;
  return true;
}

bool Reader::read_int(int32_t& v) {
  uint8_t b[4];
  if (!take(b, 4)) return false;
  v = static_cast<int32_t>(load_be32(b));
  return true;
}

bool Reader::read_long(int64_t& v) {
  uint8_t b[8];
  if (!take(b, 8)) return false;
  v = static_cast<int64_t>((uint64_t{load_be32(b)} << 32) | load_be32(b + 4));
  return true;
}

bool Reader::read_bool(bool& v) {
  uint8_t b;
  if (!take(&b, 1)) return false;
  v = b != 0;
  return true;
}

bool Reader::read_string(std::string& v) {
  int32_t n;
  if (!read_int(n)) return false;
  if (n < 0) {
    if (n != -1) return ok_ = false;
    v.clear();
    return true;
  }
  if (n > limits_.max_buffer || static_cast<size_t>(end_ - p_) < static_cast<size_t>(n)) {
    return ok_ = false;
  }
  v.assign(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
  p_ += n;
  return true;
}

bool Reader::read_buffer(Buffer& v) {
  int32_t n;
  if (!read_int(n)) return false;
  if (n < 0) {
    if (n != -1) return ok_ = false;
    v = Buffer::null();
    return true;
  }
  if (n > limits_.max_buffer || static_cast<size_t>(end_ - p_) < static_cast<size_t>(n)) {
    return ok_ = false;
  }
  v.bytes.assign(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
  v.is_null = false;
  p_ += n;
  return true;
}

bool Reader::read_count(int32_t& n, size_t min_element_bytes) {
  int32_t c;
  if (!read_int(c)) return false;
  if (c == -1) {
    n = 0;
    return true;
  }
  if (c < 0 || c > limits_.max_vector) return ok_ = false;
  if (min_element_bytes > 0 &&
      static_cast<size_t>(c) > static_cast<size_t>(end_ - p_) / min_element_bytes) {
    return ok_ = false;
  }
  n = c;
  return true;
}

bool Reader::read_strings(std::vector<std::string>& v) {
  int32_t n;
  if (!read_count(n, 4)) return false;
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    std::string s;
    if (!read_string(s)) return false;
    out.push_back(std::move(s));
  }
  v = std::move(out);
  return true;
}

void Writer::write_int(int32_t v) { put_be32(extend(4), static_cast<uint32_t>(v)); }

void Writer::write_long(int64_t v) { put_be64(extend(8), static_cast<uint64_t>(v)); }

void Writer::write_bool(bool v) { out_.push_back(v ? 1 : 0); }

void Writer::write_string(std::string_view v) {
  write_int(static_cast<int32_t>(v.size()));
  out_.append(v);
}

void Writer::write_buffer(const Buffer& v) {
  if (v.is_null) {
    write_int(-1);
    return;
  }
  write_int(static_cast<int32_t>(v.bytes.size()));
  out_.append(v.bytes);
}

void Writer::write_strings(const std::vector<std::string>& v) {
  write_int(static_cast<int32_t>(v.size()));
  for (const auto& s : v) write_string(s);
}

void Writer::patch_int(size_t pos, int32_t v) {
  auto u = static_cast<uint32_t>(v);
  out_[pos] = char(u >> 24);
  out_[pos + 1] = char(u >> 16);
  out_[pos + 2] = char(u >> 8);
  out_[pos + 3] = char(u);
}

}  // namespace zkraft::jute
