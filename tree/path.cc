#include "tree/path.h"

#include <cstdint>

namespace zkraft::tree {

namespace {

// Decodes one UTF-8 sequence at s[i]; returns the code point and advances i, or returns -1 for a
// malformed, overlong or surrogate sequence (which Java would turn into U+FFFD).
int32_t next_code_point(std::string_view s, size_t& i) {
  auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int len;
  int32_t cp;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return -1;
  }
  if (i + len > s.size()) return -1;
  for (int k = 1; k < len; ++k) {
    auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr int32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  i += len;
  return cp;
}

bool is_forbidden(int32_t c) {
  // Characters outside the BMP are surrogate pairs in Java, so they fall in D800-DFFF.
  return c < 0 || (c > 0 && c <= 0x1F) || (c >= 0x7F && c <= 0x9F) ||
         (c >= 0xD800 && c <= 0xF8FF) || (c >= 0xFFF0);
}

}  // namespace

bool validate_path(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  if (path.size() == 1) return true;
  if (path.back() == '/') return false;
  size_t i = 1;
  size_t segment_start = 1;
  while (i <= path.size()) {
    if (i == path.size() || path[i] == '/') {
      std::string_view seg = path.substr(segment_start, i - segment_start);
      if (seg.empty() || seg == "." || seg == "..") return false;
      segment_start = i + 1;
      ++i;
      continue;
    }
    if (path[i] == '\0') return false;
    int32_t cp = next_code_point(path, i);
    if (is_forbidden(cp)) return false;
  }
  return true;
}

std::string_view parent_of(std::string_view path) {
  return path.substr(0, path.rfind('/'));
}

std::string_view name_of(std::string_view path) {
  return path.substr(path.rfind('/') + 1);
}

bool is_special_path(std::string_view path) {
  return path == "/" || path == "/zookeeper" || path == "/zookeeper/quota" ||
         path == "/zookeeper/config";
}

}  // namespace zkraft::tree
